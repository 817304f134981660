"""Stores built the way an agent builds one: `memory_remember` over stdio, one memory at a time,
with the conflicts the gate raises, the recalls (usage counts) and the edits (history) that brings.

    python benchmarks/agent_store.py --n 10000 --work ../bench-stores   # build (or reuse) and report

A build is slow (every write is a commit), so it is kept as a snapshot under `--work`, named by
`HARNESS_VERSION`: change the version whenever what a build writes changes, and the next run
builds afresh instead of measuring a store of the old recipe. The report is what issue 14 asks of
the repository: the size of `.git` against `memories/`, and git's own object counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from mcp import Client, StdioServerParameters
from perf import ENTITIES, EXE, Generated, Stat, _call, _env, memory_text

from memory_mcp.app.store import Store

HARNESS_VERSION = 1
RECALL_EVERY = 5  # an agent recalls before it writes, now and then
UPDATE_EVERY = 25  # and corrects one of its earlier memories
ENTITY_POOL = 60  # a project's entities: a few dozen, shared by many memories, so the gate finds pairs


def snapshot(work: Path, n: int) -> Path:
    """Where the store of `n` memories of this harness version is kept."""
    return work / f"agent-{n}-v{HARNESS_VERSION}"


def build(work: Path, n: int, seed: int = 7) -> tuple[Generated, dict[str, object]]:
    """The agent-built store of `n` memories under `work`, built now unless a snapshot of this
    harness version is there; with the build's own figures (remember latency as it grew)."""
    root = snapshot(work, n)
    meta = root.parent / f"{root.name}.json"
    if root.exists() and meta.exists():
        data = json.loads(meta.read_text())
        return Generated(root, data["ids"], data["paths"], data["queries"]), data["build"]
    if root.exists():  # a build cut short: start again
        subprocess.run(["rm", "-rf", str(root)], check=True)
    Store.open(root).close()
    (work / "home").mkdir(parents=True, exist_ok=True)
    gen, figures = asyncio.run(_write_all(root, n, random.Random(seed)))
    meta.write_text(json.dumps({**asdict(gen), "root": str(root), "build": figures}))
    return gen, figures


async def _write_all(root: Path, n: int, rng: random.Random) -> tuple[Generated, dict[str, object]]:
    params = StdioServerParameters(command=str(EXE), args=["serve"], env=_env(root))
    gen = Generated(root, [], [], [])
    pool = rng.sample(ENTITIES, min(ENTITY_POOL, len(ENTITIES)))
    latencies: list[float] = []
    conflicts = 0
    started = time.perf_counter()
    async with Client(params, read_timeout_seconds=600) as client:
        for k in range(n):
            _, title, content = memory_text(rng)
            if k % RECALL_EVERY == 0 and gen.queries:
                await _call(client, "memory_recall", {"query": rng.choice(gen.queries), "limit": 5})()
            t = time.perf_counter()
            r = await _call(client, "memory_remember", {"content": content, "title": title,
                                                        "entities": rng.sample(pool, rng.randint(1, 3))})()
            latencies.append((time.perf_counter() - t) * 1000)
            out = r.structured_content or {}  # type: ignore[attr-defined]
            conflicts += len(out.get("conflicts", []))
            if not out.get("duplicate"):
                gen.ids.append(out["id"])
                gen.paths.append(out["path"])
            if len(gen.queries) < 400 and rng.random() < 0.5:
                words = [w.strip("`.,:;()") for w in content.split() if len(w.strip("`.,:;()")) > 3]
                gen.queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))))
            if k % UPDATE_EVERY == UPDATE_EVERY - 1:
                await _call(client, "memory_update", {"id": rng.choice(gen.ids),
                                                      "content": f"{content}\n\nCorrected on write {k}."})()
            if k % 1000 == 999:
                print(f"  {k + 1} written, remember p50 of the last 1,000: "
                      f"{Stat(latencies[-1000:]).p50:.0f} ms", file=sys.stderr)
    figures: dict[str, object] = {
        "memories": len(gen.ids), "conflicts_raised": conflicts, "seconds": round(time.perf_counter() - started),
        "remember_p50_ms_by_1000": [round(Stat(latencies[i:i + 1000]).p50, 1) for i in range(0, n, 1000)],
    }
    return gen, figures


def repository(root: Path) -> dict[str, int]:
    """The repository's weight: `.git` and `memories/` in KiB (du), and `git count-objects -v`."""
    def du(path: Path) -> int:
        return int(subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True,
                                  check=True).stdout.split()[0])

    out = subprocess.run(["git", "-C", str(root), "count-objects", "-v"], capture_output=True, text=True,
                         check=True).stdout
    counts = {k.strip(): int(v) for k, v in (line.split(":", 1) for line in out.splitlines())}
    return {"git_kib": du(root / ".git"), "memories_kib": du(root / "memories"), "loose_objects": counts["count"],
            "loose_kib": counts["size"], "packs": counts["packs"], "pack_kib": counts["size-pack"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--work", type=Path, required=True, help="keep the built store here (reused when present)")
    args = ap.parse_args()
    _, figures = build(args.work, args.n)
    repo = repository(snapshot(args.work, args.n))
    print(json.dumps({"build": figures, "repository": repo,
                      "git_over_memories": round(repo["git_kib"] / max(1, repo["memories_kib"]), 2)}, indent=2))


if __name__ == "__main__":
    main()
