"""Latency of the store on N memories, with same-run baselines so numbers compare across machines.

    python benchmarks/bench_store.py [--n 1000] [--queries 200]

Prints median and p95 for: a no-op reconcile (against a bare walk + stat of the same tree), a
reconcile after one hand edit, recall through the core (against one raw FTS5 query), remember
(write + index + git commit), and a full reindex.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memory_mcp import files
from memory_mcp.model import Memory, MemoryType, Trust, compose_body, now_iso
from memory_mcp.store import Store

WORDS = ["deploy", "cache", "redis", "postgres", "pnpm", "workspace", "migration", "alembic", "pytest", "worker", "queue", "token", "schema", "index", "review", "release", "staging", "docker", "compose", "nginx", "timeout", "retry", "budget", "latency", "frontend", "backend", "gateway", "webhook", "cron", "backup", "restore", "metrics", "alert", "dashboard"]


def _timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def _fmt(name: str, samples: list[float], base: list[float] | None = None) -> str:
    med = statistics.median(samples) * 1000
    p95 = sorted(samples)[int(len(samples) * 0.95) - 1] * 1000 if len(samples) >= 20 else max(samples) * 1000
    line = f"{name:<38} median {med:8.2f} ms   p95 {p95:8.2f} ms"
    if base:
        line += f"   ({med / (statistics.median(base) * 1000):.1f}x baseline)"
    return line


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    rng = random.Random(7)
    tmp = Path(tempfile.mkdtemp(prefix="memory-mcp-bench-"))
    try:
        store = Store.open(tmp / "store")
        mem_dir = store.root / "memories"
        for i in range(args.n):
            words = " ".join(rng.choice(WORDS) for _ in range(40))
            title = f"Note {i} about {rng.choice(WORDS)} and {rng.choice(WORDS)}"
            mem = Memory(id=_ulid(i), body=compose_body(words, title), type=MemoryType.FACT,
                         trust=Trust.USER_STATED, entities=[rng.choice(WORDS)], created=now_iso(), updated=now_iso())
            files.atomic_write(mem_dir / f"note-{i}.md", files.serialize(mem))
        t = time.perf_counter()
        store.reindex()
        first = time.perf_counter() - t
        store.status()  # commits the bulk-written files, as a person's bulk edit would be
        print(f"{args.n} memories; first full index {first * 1000:.0f} ms")

        def walk() -> None:
            for dirpath, _, names in os.walk(mem_dir):
                for name in names:
                    os.stat(os.path.join(dirpath, name))

        time.sleep(0.05)  # leave the racily-clean window of the last scan
        store.status()
        base_walk = _timed(walk, 30)
        noop = _timed(lambda: store._sync(store._ensure_index()), 30)
        print(_fmt("walk + stat (baseline)", base_walk))
        print(_fmt("no-op reconcile", noop, base_walk))

        victim = mem_dir / "note-3.md"

        def edit_and_sync() -> None:
            victim.write_text(victim.read_text() + "\nedited\n")
            store._sync(store._ensure_index())

        print(_fmt("reconcile after 1 hand edit (+commit)", _timed(edit_and_sync, 10), base_walk))

        queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(args.queries)]
        raw = sqlite3.connect(store.index_path)
        qi = iter(queries * 2)
        base_q = _timed(lambda: raw.execute(
            "SELECT rowid FROM fts_word WHERE fts_word MATCH ? ORDER BY bm25(fts_word) LIMIT 8",
            (" OR ".join(next(qi).split()),)).fetchall(), len(queries))
        qi2 = iter(queries)
        rec = _timed(lambda: store.recall(next(qi2)), len(queries))
        print(_fmt("raw FTS5 query (baseline)", base_q))
        print(_fmt("memory_recall (reconcile + rank)", rec, base_q))
        counter = iter(range(10**6))
        rem = _timed(lambda: store.remember(f"Benchmark memory {next(counter)} about {rng.choice(WORDS)}.",
                                            entities=["bench"]), 20)
        print(_fmt("memory_remember (write+index+commit)", rem))
        print(_fmt("memory_reindex (full rebuild)", _timed(store.reindex, 3)))
        store.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _ulid(i: int) -> str:
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    n = (1_700_000_000_000 << 80) | i
    return "".join(alphabet[(n >> (5 * k)) & 31] for k in reversed(range(26)))


if __name__ == "__main__":
    main()
