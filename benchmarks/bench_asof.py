#!/usr/bin/env python3
"""Recall as of a date on a store with history: the first query for a day, a repeat, a live recall.

    python benchmarks/bench_asof.py [--n 10000] [--repeat 40]

The store is perf.py's generated corpus (imported in one commit), then a few later days on each of
which a twentieth of the memories is edited and committed, with committer dates set, so `as_of`
has several commits to choose from. Measured in-process through `Store.recall`:

* live recall: the same queries without as_of (p50 / p95);
* first as_of query for a day: no index of that commit cached yet (its files are read from git and
  indexed), cache folder emptied before each sample;
* repeat: the same day again, its commit index cached.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from perf import Stat, _env, generate_store  # noqa: E402

from memory_mcp.app import asof  # noqa: E402
from memory_mcp.app.store import Store  # noqa: E402
from memory_mcp.truth.layout import DERIVED  # noqa: E402

# The import's day, then the days of later edits; questions are asked about the second and fourth.
DAYS = ["2026-09-01", "2026-09-15", "2026-10-01", "2026-10-15", "2026-11-01"]
ASKED = ["2026-09-16", "2026-10-16"]


def _git(root: Path, day: str, *args: str) -> None:
    env = {**_env(root), "GIT_COMMITTER_DATE": f"{day}T12:00:00+00:00", "GIT_AUTHOR_DATE": f"{day}T12:00:00+00:00"}
    subprocess.run(["git", "-C", str(root), *args], check=True, env=env, stdout=subprocess.DEVNULL)


def build(root: Path, n: int) -> list[str]:
    """The store with history; returns its queries."""
    gen = generate_store(root, n)
    _git(root, DAYS[0], "commit", "-q", "--amend", "--no-edit", "--no-verify")
    for k, day in enumerate(DAYS[1:], 1):
        for rel in gen.paths[k::20]:
            path = root / rel
            path.write_text(path.read_text(encoding="utf-8") + f"\nRevised on {day}.\n", encoding="utf-8")
        _git(root, day, "commit", "-q", "-a", "--no-verify", "-m", f"bench: edits of {day}")
    return gen.queries


def timed_ms(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--cold", type=int, default=3, help="samples of the first query for a day")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-asof-"))
    try:
        root = work / "store"
        t = time.perf_counter()
        queries = build(root, args.n)
        print(f"store: {args.n} memories, {len(DAYS)} commits over {DAYS[0]}..{DAYS[-1]} "
              f"(built in {time.perf_counter() - t:.1f} s)")
        store = Store.open(root)
        store.recall(queries[0])  # the live index is built and warm
        qs = queries[: args.repeat]
        live = Stat([timed_ms(lambda q=q: store.recall(q)) for q in qs])
        cache = root / DERIVED / asof.FOLDER
        cold: list[float] = []
        for i in range(args.cold):
            shutil.rmtree(cache, ignore_errors=True)
            cold.append(timed_ms(lambda i=i: store.recall(qs[i], as_of=ASKED[i % len(ASKED)])))
        store.recall(qs[0], as_of=ASKED[0])
        warm = Stat([timed_ms(lambda q=q: store.recall(q, as_of=ASKED[0])) for q in qs])
        first = Stat(cold)
        print(f"live recall            p50 {live.p50:8.1f} ms  p95 {live.p95:8.1f} ms  (n={len(qs)})")
        print(f"as_of, first for a day p50 {first.p50:8.1f} ms  max {max(cold):8.1f} ms  (n={len(cold)}; "
              "target <= 10,000 ms)")
        print(f"as_of, repeat          p50 {warm.p50:8.1f} ms  p95 {warm.p95:8.1f} ms  (n={len(qs)}; "
              f"{warm.p50 / live.p50:.2f}x live p50; target <= 2x)")
        sizes = sorted(p.stat().st_size for p in cache.glob("*.sqlite3"))
        print(f"cached commit indexes: {len(sizes)}, {sum(sizes) / 1e6:.1f} MB; pid {os.getpid()}")
        store.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
