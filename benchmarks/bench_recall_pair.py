"""Recall p50 of two builds' servers over stdio, call by call interleaved, each on its own store.

    python benchmarks/bench_recall_pair.py OURS_EXE,OURS_STORE,QUERIES OTHER_EXE,OTHER_STORE [--calls 300]

The recall guard of issue 33 ("recall p50 within 1.10x of a102c0e"): scale.py times one build at a
time, so a machine's load moves its figure between two runs by more than the guard allows. Here both
servers run at once and each query goes to both, in alternating order, so the load falls on both
alike. Each store is a scratch copy of a snapshot its own build made the same way (scale.py
`--work DIR` keeps them: `DIR/agent-1000-v1`, `DIR/generated-10000-v1`, with `<snapshot>.json`
holding the queries); an index from another version would be rebuilt and timed. After every pair
of recalls, both servers also answer a call with nothing to do (a listing by an entity no memory
has), the per-call floor. The whole is run twice, each build's server started first once: the
first one measured faster by a few percent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

NOOP: dict[str, object] = {"entities": ["no-such-entity"], "limit": 1}


def _params(exe: str, root: Path, home: Path) -> StdioServerParameters:
    env = dict(os.environ, MEMORY_MCP_ROOT=str(root), MEMORY_MCP_SYNC="off", HOME=str(home))
    env.pop("XDG_CONFIG_HOME", None)
    return StdioServerParameters(command=exe, args=["serve"], env=env)


async def _timed(client: Client, args: dict[str, object], into: list[float]) -> None:
    t = time.perf_counter()
    await client.call_tool("memory_recall", args)
    into.append((time.perf_counter() - t) * 1000)


async def pair(ours: tuple[str, Path], other: tuple[str, Path], queries: list[str], calls: int,
               scratch: Path, ours_first: bool = True) -> dict[str, float]:
    """p50 of recall and of the no-op call, ms, for both servers. `ours_first`: which server is
    started (and connected) first."""
    roots = []
    for name, (_, snapshot) in (("ours", ours), ("other", other)):
        roots.append(scratch / name)
        shutil.copytree(snapshot, roots[-1], symlinks=True)
    home = scratch / "home"
    home.mkdir()
    first, second = (0, 1) if ours_first else (1, 0)
    exes = (ours[0], other[0])
    async with Client(_params(exes[first], roots[first], home), read_timeout_seconds=600) as c1, \
            Client(_params(exes[second], roots[second], home), read_timeout_seconds=600) as c2:
        a, b = (c1, c2) if ours_first else (c2, c1)
        for c in (a, b):
            await c.call_tool("memory_recall", NOOP)
        await asyncio.sleep(2.1)  # out of the racily-clean window of each server's first scan
        times: dict[str, list[float]] = {k: [] for k in ("ours", "other", "ours_noop", "other_noop")}
        for i in range(calls):
            q: dict[str, object] = {"query": queries[i % len(queries)]}
            order = [(a, "ours"), (b, "other")] if i % 2 == 0 else [(b, "other"), (a, "ours")]
            for client, key in order:
                await _timed(client, q, times[key])
            for client, key in order:
                await _timed(client, NOOP, times[f"{key}_noop"])
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ours", help="EXE,STORE,QUERIES_JSON (the snapshot's .json, with a 'queries' list)")
    ap.add_argument("other", help="EXE,STORE")
    ap.add_argument("--calls", type=int, default=300)
    args = ap.parse_args()
    exe_a, store_a, query_file = args.ours.split(",")
    exe_b, store_b = args.other.split(",")[:2]
    queries = json.loads(Path(query_file).read_text(encoding="utf-8"))["queries"]
    # The server started first was measured about 4% faster than the other in one run after
    # another (0.92 one way, 1.09 the other, same builds), so both orders run and the guard reads
    # their geometric mean.
    ratios = []
    for ours_first in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            got = asyncio.run(pair((exe_a, Path(store_a)), (exe_b, Path(store_b)), queries, args.calls, Path(tmp),
                                   ours_first))
        ratios.append(got["ours"] / got["other"])
        print(f"{'ours' if ours_first else 'other'} started first: recall p50 ours {got['ours']:.2f} ms, "
              f"other {got['other']:.2f} ms, ratio {ratios[-1]:.3f}; no-op p50: ours {got['ours_noop']:.2f} ms, "
              f"other {got['other_noop']:.2f} ms")
    print(f"recall p50 ratio, both orders: {math.sqrt(ratios[0] * ratios[1]):.3f}")

if __name__ == "__main__":
    main()
