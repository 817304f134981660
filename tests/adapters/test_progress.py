"""Progress on long work: memory_reindex sends MCP progress notifications to a client that asked for
them; `memory-mcp reindex` draws a bar on a terminal and nothing when its output is piped."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest
from conftest import EXE, fm_file, open_server, run_on_terminal

from memory_mcp.app.store import Store

pytestmark = pytest.mark.anyio
FILES = 40


@pytest.fixture
def big(tmp_path: Path) -> Path:
    root = Store.open(tmp_path / "store").root
    for n in range(FILES):
        fm_file(root, f"note-{n:03}.md", f"# Note {n}\n\nThe grebe pipeline step {n} runs after step {n - 1}.\n")
    return root


async def test_reindex_progress_reaches_the_total_for_a_client_that_asks(big: Path) -> None:
    seen: list[tuple[float, float | None]] = []
    finished = anyio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total))
        if total and done >= total:
            finished.set()

    async with open_server(big) as s:
        r = await s.client.call_tool("memory_reindex", {}, progress_callback=on_progress)
        assert not r.is_error
        with anyio.fail_after(10):  # notifications may be handled just after the result arrives
            await finished.wait()
        assert seen[-1] == (FILES, FILES)
        assert len(seen) >= 2
        assert all(a[0] < b[0] for a, b in zip(seen, seen[1:], strict=False))  # always increasing
        # a client that does not ask gets none (and the call works the same)
        assert not (await s.client.call_tool("memory_reindex", {"verify": True})).is_error


def test_cli_reindex_draws_a_bar_on_a_terminal_only(big: Path) -> None:
    env = {"HOME": str(big.parent), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    done, drawn = run_on_terminal([str(EXE), "reindex", "--store", str(big)], env, timeout=60)
    assert done.returncode == 0 and f"rebuild: {FILES} memories indexed" in done.stdout
    assert b"reindex [" in drawn and f"{FILES}/{FILES}".encode() in drawn
    piped = subprocess.run([str(EXE), "reindex", "--store", str(big)], capture_output=True, text=True, env=env,
                           timeout=60)
    assert piped.returncode == 0 and piped.stderr == ""
