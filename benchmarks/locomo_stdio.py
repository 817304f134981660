"""LoCoMo written as an agent writes it, for recall_eval's `--stdio` rows: every turn through
`memory_remember` over stdio with its text only (no `source`, no `created`), one `memory-mcp serve`
process (one MCP session) per LoCoMo session, in the conversation's order. The server stamps each
memory with the session it minted (`written_by`), which is what neighbours in time follow. The
questions then go through `Store.search` on the store those servers wrote, as for the other rows.

    python benchmarks/locomo_stdio.py [--conversations 5,6] [--eval-dir DIR]   # these rows alone
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections.abc import Callable
from itertools import groupby
from pathlib import Path

from locomo import Turn
from mcp import Client, StdioServerParameters
from mcp.types import Implementation

from memory_mcp.app.store import Store

EXE = Path(sys.executable).parent / "memory-mcp"
Searcher = Callable[[str, int], list[int]]


def _env(root: Path) -> dict[str, str]:
    env = {"MEMORY_MCP_ROOT": str(root), "HOME": str(root.parent / "home"), "PATH": os.environ["PATH"],
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "eval", "GIT_AUTHOR_EMAIL": "eval@localhost",
           "GIT_COMMITTER_NAME": "eval", "GIT_COMMITTER_EMAIL": "eval@localhost",
           "MEMORY_MCP_PROJECT_DIR": str(root.parent)}
    if "PYTHONPATH" in os.environ:  # evaluating a snapshot of the code, not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


async def _write(root: Path, docs: list[str], meta: list[Turn]) -> dict[str, list[int]]:
    """Write every turn, a server per LoCoMo session; memory id -> the turns it holds (a turn whose
    text is already remembered returns that memory)."""
    params = StdioServerParameters(command=str(EXE), args=["serve"], env=_env(root))
    held: dict[str, list[int]] = {}
    for _session, turns in groupby(range(len(docs)), key=lambda i: meta[i].source):
        async with Client(params, read_timeout_seconds=600,
                          client_info=Implementation(name="locomo-eval", version="1")) as client:
            for i in turns:
                r = await client.call_tool("memory_remember", {"content": docs[i]})
                if r.is_error or not isinstance(r.structured_content, dict):
                    raise RuntimeError(f"memory_remember failed on turn {i}: {r.content}")
                held.setdefault(r.structured_content["id"], []).append(i)
    return held


def stdio_builder(docs: list[str], meta: list[Turn] | None = None) -> tuple[Searcher, Callable[[], None]]:
    """A store written through stdio servers as above, searched with Store.search."""
    if meta is None:
        raise ValueError("the stdio rows need the turns' sessions (which server writes each turn)")
    tmp = tempfile.TemporaryDirectory(prefix="recall-eval-stdio-")
    root = Path(tmp.name) / "store"
    Store.open(root).close()
    (root.parent / "home").mkdir()
    held = asyncio.run(_write(root, docs, meta))
    store = Store.open(root)

    def search(q: str, k: int) -> list[int]:
        return [i for h in store.search(q, k) for i in held.get(h.id, [])][:k]

    def close() -> None:
        store.close()
        tmp.cleanup()

    return search, close


def main(argv: list[str] | None = None) -> int:
    """The stdio rows alone, on some conversations (recall_eval's table of them, original evidence)."""
    import argparse

    from locomo import load_locomo
    from recall_eval import KS, aggregate_locomo, locomo_rows

    ap = argparse.ArgumentParser(description="LoCoMo written through memory_remember over stdio, recalled")
    ap.add_argument("--eval-dir", type=Path, default=Path(__file__).resolve().parent.parent.parent / "shared" / "eval")
    ap.add_argument("--conversations", default="5", help="comma-separated LoCoMo conversation numbers (0-9)")
    args = ap.parse_args(argv)
    convs, _ = load_locomo(args.eval_dir)
    result = aggregate_locomo(locomo_rows(convs, stdio_builder, [int(c) for c in args.conversations.split(",")]))
    row = result["orig"]["overall"]
    print(f"stdio, conversations {args.conversations}: " + " ".join(f"R@{k} {row[f'R@{k}']}" for k in KS)
          + f" (n {row['n']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
