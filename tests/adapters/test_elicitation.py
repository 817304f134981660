"""Purge asks the person through elicitation when the client can ask, over a real stdio server.

Both protocol eras are driven: the 2026-07-28 era (current Claude Code) and the legacy initialize
handshake. A client without the elicitation capability falls back to `confirm=true`."""

import os
import subprocess
import sys
from pathlib import Path

import mcp.types as types
import pytest
from mcp import Client, StdioServerParameters

from memory_mcp.app.store import init_store

pytestmark = pytest.mark.anyio
EXE = Path(sys.executable).parent / "memory-mcp"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _params(store: Path) -> StdioServerParameters:
    if not store.exists():
        init_store(store)  # `serve` refuses a named store that does not exist
    return StdioServerParameters(command=str(EXE), args=["serve"],
                                 env={"MEMORY_MCP_ROOT": str(store), "HOME": str(store.parent),
                                      "PATH": os.environ["PATH"]})


def _answer(ok: bool, action: str = "accept", seen: list[str] | None = None):
    async def callback(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        if seen is not None:
            seen.append(params.message)
        return types.ElicitResult(action=action, content={"ok": ok} if action == "accept" else None)
    return callback


async def _archived(client: Client, text: str) -> tuple[str, str]:
    r = await client.call_tool("memory_remember", {"content": text, "type": "fact"})
    mem_id, path = r.structured_content["id"], r.structured_content["path"]
    await client.call_tool("memory_forget", {"id": mem_id, "mode": "archive"})
    return mem_id, path


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_purge_confirmed_by_the_person_deletes_the_file(tmp_path: Path, mode: str) -> None:
    store = tmp_path / "store"
    seen: list[str] = []
    async with Client(_params(store), mode=mode, elicitation_callback=_answer(True, seen=seen)) as client:
        mem_id, path = await _archived(client, f"Purge me through elicitation in {mode} mode.")
        r = await client.call_tool("memory_forget", {"id": mem_id, "mode": "purge"})
        assert not r.is_error, r.content
        assert r.structured_content["purged"] is True
    assert seen and "Permanently delete" in seen[0]
    assert not (store / path).exists()
    log = subprocess.run(["git", "-C", str(store), "log", "--all", "--format=%s", "--", path],
                         capture_output=True, text=True).stdout
    assert "forget: purge" in log


async def test_purge_declined_by_the_person_keeps_the_file(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with Client(_params(store), elicitation_callback=_answer(False, action="decline")) as client:
        mem_id, path = await _archived(client, "Keep me: the person declines the purge.")
        r = await client.call_tool("memory_forget", {"id": mem_id, "mode": "purge"})
        assert r.is_error and "[declined]" in r.content[0].text
        assert "confirm=true" not in r.content[0].text  # nothing invites overriding the person
    assert (store / path).exists()


async def test_purge_unticked_by_the_person_keeps_the_file(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with Client(_params(store), elicitation_callback=_answer(False)) as client:  # accepts, ok=false
        mem_id, path = await _archived(client, "Keep me: the person leaves the box unticked.")
        r = await client.call_tool("memory_forget", {"id": mem_id, "mode": "purge"})
        assert r.is_error and "[declined]" in r.content[0].text
    assert (store / path).exists()


async def test_purge_without_elicitation_needs_confirm_true(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with Client(_params(store), mode="legacy") as client:  # no callback: no elicitation capability
        mem_id, path = await _archived(client, "Purge me only with confirm=true.")
        r = await client.call_tool("memory_forget", {"id": mem_id, "mode": "purge"})
        assert r.is_error and "[confirm_required]" in r.content[0].text
        assert (store / path).exists()
        r = await client.call_tool("memory_forget", {"id": mem_id, "mode": "purge", "confirm": True})
        assert not r.is_error and r.structured_content["purged"] is True
    assert not (store / path).exists()


async def test_purge_of_active_memory_is_refused_without_asking(tmp_path: Path) -> None:
    store = tmp_path / "store"
    seen: list[str] = []
    async with Client(_params(store), elicitation_callback=_answer(True, seen=seen)) as client:
        r = await client.call_tool("memory_remember", {"content": "An active memory is never one call from deletion."})
        r = await client.call_tool("memory_forget", {"id": r.structured_content["id"], "mode": "purge"})
        assert r.is_error and "[invalid_transition]" in r.content[0].text
    assert seen == []
