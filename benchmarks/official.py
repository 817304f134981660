"""The official MCP memory server (`@modelcontextprotocol/server-memory`), run beside ours.

The harness installs it with npm into benchmarks/.node (git-ignored; nothing global), starts it
over stdio with the same `mcp` Client it uses for memory-mcp, and builds its store the way ours
is built: one `create_entities` call per memory (one entity: a name, an entity type, the memory's
text as its one observation), from the very memories our agent-built store holds. The store is a
JSONL file kept as a snapshot beside ours and copied for each run.

    python benchmarks/official.py --work ../bench-stores --n 1000   # install, build (or reuse), report
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from mcp import Client, StdioServerParameters
from perf import Stat

from memory_mcp.truth import files

PACKAGE = "@modelcontextprotocol/server-memory@2026.8.31"  # pinned: a new release must not move the baseline
NODE_DIR = Path(__file__).resolve().parent / ".node"
ENTRY = Path("node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")  # under the prefix
SNAPSHOT_VERSION = 1  # change when what a build writes changes


@dataclass(frozen=True)
class Entity:
    """One memory as the official server holds it."""

    name: str
    entity_type: str
    text: str

    def as_args(self) -> dict[str, object]:
        """The `create_entities` arguments that create this entity alone."""
        return {"entities": [{"name": self.name, "entityType": self.entity_type, "observations": [self.text]}]}


def install(prefix: Path = NODE_DIR) -> tuple[Path | None, str]:
    """The official server's entry script, installed now unless it is there; (None, why) when it
    cannot be (no node or npm, or the registry is out of reach): the harness then runs without it."""
    entry = prefix / ENTRY
    if entry.exists():
        return entry, ""
    if not (shutil.which("node") and shutil.which("npm")):
        return None, "node or npm is not installed"
    try:
        out = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(prefix),
                              PACKAGE], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return None, f"npm install {PACKAGE} took over 300 s (offline?)"
    if out.returncode != 0 or not entry.exists():
        return None, f"npm install {PACKAGE} failed: {(out.stderr or out.stdout).strip()[-300:]}"
    return entry, ""


def params(entry: Path, store_file: Path) -> StdioServerParameters:
    """How to start the official server on `store_file` (its whole store: one JSONL file)."""
    return StdioServerParameters(command=shutil.which("node") or "node", args=[str(entry)],
                                 env={"MEMORY_FILE_PATH": str(store_file), "PATH": os.environ["PATH"]})


def entities_of(root: Path, paths: list[str]) -> list[Entity]:
    """Our store's memories at `paths` (in the order they were written), as official entities. The
    name carries the id's first 8 characters: the official server ignores a second entity of a name."""
    out = []
    for rel in paths:
        mem = files.parse((root / rel).read_text(encoding="utf-8"), rel)
        out.append(Entity(f"{mem.title} [{mem.id[:8]}]", str(mem.type), mem.body))
    return out


async def call(client: Client, name: str, args: dict[str, object]) -> object:
    """One tool call on the official server; an error result raises (a silent failure would be timed)."""
    r = await client.call_tool(name, args)
    if r.is_error:
        raise RuntimeError(f"official {name} failed: {r.content}")
    return r


def snapshot(work: Path, entry: Path, n: int, entities: list[Entity]) -> tuple[Path, dict[str, object]]:
    """The official store of these `n` entities under `work`, built now (one call each) unless kept,
    with the build's own figures."""
    store_file = work / f"official-{n}-v{SNAPSHOT_VERSION}.jsonl"
    meta = work / f"{store_file.name}.json"
    if store_file.exists() and meta.exists():
        return store_file, json.loads(meta.read_text())
    store_file.unlink(missing_ok=True)
    figures = asyncio.run(_build(entry, store_file, entities))
    meta.write_text(json.dumps(figures))
    return store_file, figures


async def _build(entry: Path, store_file: Path, entities: list[Entity]) -> dict[str, object]:
    latencies = []
    started = time.perf_counter()
    async with Client(params(entry, store_file), read_timeout_seconds=600) as client:
        for k, entity in enumerate(entities):
            t = time.perf_counter()
            await call(client, "create_entities", entity.as_args())
            latencies.append((time.perf_counter() - t) * 1000)
            if k % 1000 == 999:
                print(f"  official: {k + 1} created, p50 of the last 1,000: {Stat(latencies[-1000:]).p50:.0f} ms",
                      file=sys.stderr)
    return {"entities": len(entities), "seconds": round(time.perf_counter() - started),
            "create_p50_ms_by_1000": [round(Stat(latencies[i:i + 1000]).p50, 1)
                                      for i in range(0, len(latencies), 1000)]}


def main() -> None:
    from agent_store import build  # the store whose memories the official one holds too

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--n", type=int, default=1000)
    args = ap.parse_args()
    entry, why = install()
    if entry is None:
        sys.exit(f"official server unavailable: {why}")
    gen, _ = build(args.work, args.n)
    store_file, figures = snapshot(args.work, entry, args.n, entities_of(gen.root, gen.paths))
    print(json.dumps({"store": str(store_file), "build": figures}, indent=2))


if __name__ == "__main__":
    main()
