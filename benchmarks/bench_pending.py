"""The open-conflict count every recall reports, on an index shaped like the one the scale issue
profiled (10,000 memories written through the tools: 7,385 of them listing about 15,700 open pairs).

Compares, in the same run, the count as a recall gets it now (`Index.open_pair_count`: the
`open_pairs` table kept by `pairs`, counted again after a write, else cached) with reading the pairs
row by row as the code before it did (kept here only as the baseline), and shows what keeping the
table adds to each write (`pairs.refresh` of one memory).

    python benchmarks/bench_pending.py [--n 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory_mcp.index import pairs  # noqa: E402
from memory_mcp.index.db import Index  # noqa: E402
from memory_mcp.index.schema import ROW_COLUMNS, FileStat, to_row  # noqa: E402
from memory_mcp.recall.conflicts import pair_hash, settled  # noqa: E402
from memory_mcp.truth.model import Memory, State, compose_body  # noqa: E402


def build(index: Index, n: int, rng: random.Random) -> list[str]:
    ids = [f"01{i:024d}" for i in range(n)]
    with index.transaction():
        for i, mem_id in enumerate(ids):
            # About three quarters list open pairs with earlier memories (two each, on average).
            others = rng.sample(ids[:i], min(i, rng.choice((0, 1, 2, 3, 4)))) if i else []
            mem = Memory(id=mem_id, body=compose_body(f"memory {i} about service {i % 97}", None),
                         state=State.DEPRECATED if rng.random() < 0.03 else State.ACTIVE, conflicts_with=others)
            index.upsert(f"memories/m{i}.md", mem, [f"service-{i % 97}"], FileStat(0, 0, str(i)))
    return ids


def row_by_row(index: Index) -> int:
    """The count as it was computed before: every row with pairs, then each other side by id."""
    out: set[str] = set()
    rows = [to_row(r) for r in index.conn.execute(f"SELECT {ROW_COLUMNS} FROM memories m WHERE m.conflicts_with != '[]'")]
    for row in rows:
        for other_id in row.conflicts_with:
            other = index.get(other_id)
            if (other is None or State.DEPRECATED in (row.state, other.state)
                    or row.superseded_by or other.superseded_by or settled(row, other)):
                continue
            out.add(pair_hash(row.id, other_id))
    return len(out)


def timed(fn, repeat: int) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        index = Index.open(Path(tmp) / "index.sqlite3")
        ids = build(index, args.n, random.Random(5))
        listing = index.conn.execute("SELECT count(*) FROM memories WHERE conflicts_with != '[]'").fetchone()[0]

        def after_a_write() -> int:
            index._open_pairs = None  # what a write does to the cached count
            return index.open_pair_count()

        rng = random.Random(9)
        sample = rng.sample(ids, 200)

        def refresh_each() -> None:
            with index.transaction():  # as in a write, which runs in one transaction
                for mem_id in sample:
                    pairs.refresh(index.conn, {mem_id})

        old_ms, old = timed(lambda: row_by_row(index), args.repeat)
        new_ms, new = timed(after_a_write, args.repeat)
        kept_ms, _ = timed(index.open_pair_count, args.repeat)
        refresh_ms, _ = timed(refresh_each, args.repeat)
        everything = set(ids)

        def rebuild() -> None:
            with index.transaction():
                pairs.refresh(index.conn, everything)

        rebuild_ms, _ = timed(rebuild, args.repeat)
        assert old == new, (old, new)
        print(f"{args.n:,} memories, {listing:,} listing pairs, {new:,} open pairs (both ways agree)")
        print(f"a recall's count, row by row (before):  {old_ms:9.2f} ms")
        print(f"a recall's count after a write (now):   {new_ms:9.2f} ms  ({old_ms / new_ms:,.0f}x less)")
        print(f"a recall's count, no write between:     {kept_ms:9.3f} ms")
        print(f"what a write adds (pairs.refresh):      {refresh_ms / len(sample):9.3f} ms")
        print(f"what a reindex adds (every pair):       {rebuild_ms:9.2f} ms")
        index.close()


if __name__ == "__main__":
    main()
