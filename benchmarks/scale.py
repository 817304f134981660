"""Real stores beside the official MCP memory server: issue 14's harness, in one command.

    python benchmarks/scale.py --work ../bench-stores            # every tier, the plot, the JSON
    python benchmarks/scale.py --work ../bench-quick --agent 100 --first-call 50 --generated '' --no-official

Every figure is measured over stdio with the same `mcp` Client, on a scratch copy of a snapshot
kept under `--work` (made once, reused; see snapshots.py, agent_store.py, official.py):

* stores built through the tools (agent_store.py), 1k and 10k by default: recall and remember
  p50/p95 beside the official server's `search_nodes` and `create_entities` on the same store
  contents, the same queries and the same new texts, the two servers' calls interleaved so load
  falls on both alike; a call with nothing to do; the conflict gate in-process; cold start beside a
  minimal MCPServer's and the official server's;
* "first call after N hand-added files": N memory files written by hand into a copy of the
  largest agent-built store, then the first tool call of a fresh server (it indexes and commits
  them), beside the same first call with no file added;
* generated stores (10k, 30k and 100k by default): recall and remember only.

It prints the tables, writes benchmarks/results/scale.json, and draws the plot (scale_report.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import agent_store
import official
import snapshots
from mcp import Client, StdioServerParameters
from perf import (
    ENTITIES,
    EXE,
    RESULTS,
    Generated,
    Stat,
    _call,
    _cold_start,
    _env,
    _head,
    atimed,
    cold_starts,
    conflict_gate,
    machine,
    memory_text,
    warmed_noop,
    write_memories,
)
from scale_report import draw, print_tables

from memory_mcp.app.store import Store


@dataclass
class Tier:
    """The figures of one store: ours, and the official server's where it ran on the same store."""

    n: int
    kind: str  # "agent-built" or "generated"
    recall: Stat | None = None
    remember: Stat | None = None
    official_search: Stat | None = None
    official_create: Stat | None = None
    recall_hits: float = 0.0  # mean results per query: what each server's answer held
    official_hits: float = 0.0
    noop: Stat | None = None
    gate: Stat | None = None
    gate_unbounded: Stat | None = None
    cold_start: Stat | None = None
    cold_start_minimal: Stat | None = None
    cold_start_official: Stat | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class FirstCall:
    """The first tool call of a fresh server after `added` files were written by hand into a store
    of `base` memories, beside the same first call with none added (same store, same run)."""

    base: int
    added: int
    first_call_ms: float
    spawn_to_answer_ms: float
    baseline_first_call_ms: float
    baseline_spawn_to_answer_ms: float
    committed: bool  # git status clean afterwards: the call indexed and committed every file


@dataclass(frozen=True)
class Reps:
    """Samples per figure."""

    queries: int
    writes: int
    noops: int
    cold: int


def _hits(result: object, key: str) -> int:
    out = getattr(result, "structured_content", None) or {}
    if key in out:
        return len(out[key])
    text = "".join(getattr(c, "text", "") for c in getattr(result, "content", []))  # the official server's JSON
    try:
        return len(json.loads(text).get(key, []))
    except (ValueError, AttributeError):
        return 0


async def over_stdio(gen: Generated, tier: Tier, reps: Reps, official_file: Path | None, entry: Path | None) -> None:
    """Recall/search and remember/create on both servers, interleaved call by call."""
    ours = StdioServerParameters(command=str(EXE), args=["serve"], env=_env(gen.root))
    async with Client(ours, read_timeout_seconds=600) as client:
        noop = await warmed_noop(client)
        tier.noop = await atimed(noop, reps.noops)
        if official_file and entry:
            async with Client(official.params(entry, official_file), read_timeout_seconds=600) as other:
                await _pairs(client, other, gen, tier, reps)
        else:
            await _pairs(client, None, gen, tier, reps)


async def _pairs(ours: Client, other: Client | None, gen: Generated, tier: Tier, reps: Reps) -> None:
    recall, search, ours_hits, other_hits = [], [], 0, 0
    queries = (gen.queries * (1 + reps.queries // max(1, len(gen.queries))))[:reps.queries]
    for q in queries:
        t = time.perf_counter()
        r = await _call(ours, "memory_recall", {"query": q})()
        recall.append((time.perf_counter() - t) * 1000)
        ours_hits += _hits(r, "results")
        if other:
            t = time.perf_counter()
            r = await official.call(other, "search_nodes", {"query": q})
            search.append((time.perf_counter() - t) * 1000)
            other_hits += _hits(r, "entities")
    rng = random.Random(13)
    remember, create = [], []
    for k in range(reps.writes):
        _, title, content = memory_text(rng)
        content, title = f"{content}\n\nBenchmark note {k}.", f"{title} ({k})"
        t = time.perf_counter()
        await _call(ours, "memory_remember", {"content": content, "title": title,
                                              "entities": rng.sample(ENTITIES, 2)})()
        remember.append((time.perf_counter() - t) * 1000)
        if other:
            entity = official.Entity(f"{title} [bench]", "fact", f"# {title}\n\n{content}")
            t = time.perf_counter()
            await official.call(other, "create_entities", entity.as_args())
            create.append((time.perf_counter() - t) * 1000)
    tier.recall, tier.remember = Stat(recall), Stat(remember)
    tier.recall_hits = ours_hits / len(queries)
    if other:
        tier.official_search, tier.official_create = Stat(search), Stat(create)
        tier.official_hits = other_hits / len(queries)


async def _official_cold(entry: Path, store_file: Path, repeat: int) -> Stat:
    return Stat([await _cold_start(official.params(entry, store_file)) for _ in range(repeat)])


def measure_agent(work: Path, n: int, reps: Reps, entry: Path | None) -> Tier:
    """An agent-built store of `n`: every figure, the official server's beside where it runs."""
    snap, _ = agent_store.build(work, n)
    gen = snapshots.scratch(snap, work / "scratch" / f"agent-{n}")
    tier = Tier(n, "agent-built")
    official_file = None
    if entry:
        kept, _ = official.snapshot(work, entry, n, official.entities_of(snap.root, snap.paths))
        official_file = work / "scratch" / kept.name
        shutil.copyfile(kept, official_file)
    store = Store.open(gen.root)
    try:
        store.refresh()
        tier.gate, tier.gate_unbounded = conflict_gate(store, reps.writes)
    finally:
        store.close()
    tier.cold_start, tier.cold_start_minimal, _, _ = asyncio.run(cold_starts(gen.root, None, reps.cold))
    if entry and official_file:
        tier.cold_start_official = asyncio.run(_official_cold(entry, official_file, reps.cold))
    asyncio.run(over_stdio(gen, tier, reps, official_file, entry))
    return tier


def measure_generated(work: Path, n: int, reps: Reps) -> Tier:
    """A generated store of `n`: recall and remember over stdio."""
    gen = snapshots.scratch(snapshots.generated(work, n), work / "scratch" / f"generated-{n}")
    tier = Tier(n, "generated")
    asyncio.run(over_stdio(gen, tier, reps, None, None))
    return tier


async def _first_call(root: Path, query: str) -> tuple[float, float]:
    """(first call after initialize, spawn to its answer) of a fresh server, in ms."""
    params = StdioServerParameters(command=str(EXE), args=["serve"], env=_env(root))
    spawn = time.perf_counter()
    async with Client(params, read_timeout_seconds=600) as client:
        await client.list_tools()
        t = time.perf_counter()
        await _call(client, "memory_recall", {"query": query, "limit": 3})()
        end = time.perf_counter()
    return (end - t) * 1000, (end - spawn) * 1000


def measure_first_call(work: Path, base: int, added: int) -> FirstCall:
    """The row "first call after N hand-added files", on a copy of the agent-built store of `base`."""
    snap, _ = agent_store.build(work, base)
    root = snapshots.scratch(snap, work / "scratch" / f"first-call-{base}").root
    asyncio.run(_first_call(root, snap.queries[0]))  # settles whatever the copy changed (mtimes, inodes)
    baseline = asyncio.run(_first_call(root, snap.queries[1]))
    new = write_memories(root, added, random.Random(29))
    first = asyncio.run(_first_call(root, new.queries[0]))
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "memories"], capture_output=True,
                            text=True, check=True).stdout
    return FirstCall(base, added, first[0], first[1], baseline[0], baseline[1], committed=not status.strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True, help="snapshots are kept (and reused) here")
    ap.add_argument("--agent", default="1000,10000", help="agent-built store sizes")
    ap.add_argument("--first-call", default="1000,10000", help="hand-added files, into the largest agent-built store")
    ap.add_argument("--generated", default="10000,30000,100000", help="generated store sizes")
    ap.add_argument("--no-official", action="store_true", help="leave the official server out")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--writes", type=int, default=30)
    ap.add_argument("--cold", type=int, default=5)
    ap.add_argument("--out", type=Path, default=RESULTS / "scale.json")
    ap.add_argument("--plot", type=Path, default=RESULTS / "scale.png")
    args = ap.parse_args()
    sizes = {k: [int(s) for s in getattr(args, k).split(",") if s] for k in ("agent", "first_call", "generated")}
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "home").mkdir(exist_ok=True)
    entry, why = (None, "left out (--no-official)") if args.no_official else official.install()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    load_before = machine()["loadavg"]
    reps = Reps(args.queries, args.writes, 30, args.cold)
    tiers = []
    for n in sizes["agent"]:
        print(f"agent-built N={n:,}", file=sys.stderr)
        tiers.append(measure_agent(args.work, n, reps, entry))
    first_calls = []
    for added in sizes["first_call"]:
        print(f"first call after {added:,} hand-added files", file=sys.stderr)
        first_calls.append(measure_first_call(args.work, max(sizes["agent"]), added))
    for n in sizes["generated"]:
        print(f"generated N={n:,}", file=sys.stderr)
        tiers.append(measure_generated(args.work, n, Reps(max(20, args.queries // 2), max(10, args.writes // 2),
                                                          15, args.cold)))
    shutil.rmtree(args.work / "scratch", ignore_errors=True)
    report = {"date": started, "commit": _head(), "machine": machine(), "loadavg_at_start": load_before,
              "official": official.PACKAGE if entry else f"not run: {why}",
              "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
              "tiers": [_jsonable(t) for t in tiers], "first_calls": [vars(f) for f in first_calls]}
    print_tables(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"wrote {args.out}")
    if draw(report, args.plot):
        print(f"wrote {args.plot}")


def _jsonable(t: Tier) -> dict[str, object]:
    return {k: (v.as_json() if isinstance(v, Stat) else v) for k, v in vars(t).items()}


if __name__ == "__main__":
    main()
