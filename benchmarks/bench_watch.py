"""The no-op call with the file watcher on and off, in-process, on stores of N memories.

    python benchmarks/bench_watch.py [--sizes 1000,10000] [--repeat 200]

For each size it builds a store (files written and committed directly, then indexed), lets the
racily-clean window pass, and times `Store.refresh()` (what every tool call does before its own
work: take the lock, catch up, reconcile) with no file changed: first with no watcher (a walk
and stat of the whole tree), then with the watcher running (catch up with its events, reconcile
nothing). It also times one hand edit followed by the call. Prints medians, p95 and the ratio.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from perf import generate_store  # the store generator of the main benchmark

from memory_mcp.app.store import Store
from memory_mcp.index.reconcile import RACY_MARGIN_NS


def build(root: Path, n: int) -> None:
    """A committed, indexed store of `n` generated memories (perf.py's generator)."""
    generate_store(root, n)
    store = Store.open(root)
    store.reindex()
    store.close()
    # Past the racily-clean window, so a walk hashes nothing (the steady state of a real store).
    time.sleep(RACY_MARGIN_NS / 1e9 + 0.1)


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def row(name: str, samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    return f"  {name:<34} median {statistics.median(ms):8.3f} ms   p95 {ms[int(len(ms) * 0.95) - 1]:8.3f} ms"


def measure(root: Path, watch: bool, repeat: int) -> tuple[list[float], list[float]]:
    """(no-op call samples, hand edit + call samples) with the watcher on or off."""
    store = Store.open(root, watch=watch)
    try:
        store.refresh()  # the first call walks either way (the watch is new, the index unopened)
        store.refresh()
        assert store.watcher is None or store.watcher.running, store.watcher.why_off
        noop = timed(store.refresh, repeat)
        victim = root / "memories" / "note-3.md"
        counter = iter(range(10**6))

        def edit() -> None:
            with victim.open("a", encoding="utf-8") as f:
                f.write(f"\nedited {next(counter)}\n")
            report = store.refresh()
            assert report.reindexed == ["memories/note-3.md"], report

        edits = timed(edit, max(5, repeat // 20))
        return noop, edits
    finally:
        store.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated store sizes (100000 takes minutes)")
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    for n in (int(x) for x in args.sizes.split(",")):
        tmp = Path(tempfile.mkdtemp(prefix="memory-mcp-bench-watch-"))
        try:
            t = time.perf_counter()
            build(tmp / "store", n)
            print(f"{n} memories (built and indexed in {time.perf_counter() - t:.1f} s)")
            off_noop, off_edit = measure(tmp / "store", False, args.repeat)
            on_noop, on_edit = measure(tmp / "store", True, args.repeat)
            print(row("no-op call, watcher off", off_noop))
            print(row("no-op call, watcher on", on_noop))
            print(row("hand edit + call, watcher off", off_edit))
            print(row("hand edit + call, watcher on", on_edit))
            ratio = statistics.median(off_noop) / statistics.median(on_noop)
            print(f"  no-op call: watcher on is {ratio:.1f}x faster than the stat-gate walk")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
