"""The tool list a starting server answers from the user's cache folder (memory_mcp/adapters/serve/toolcache.py),
over stdio with the real SDK client: every tool, exactly as registering them makes the list."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import open_server

from memory_mcp.adapters.serve import toolcache

pytestmark = pytest.mark.anyio
TOOLS = {"memory_remember", "memory_recall", "memory_read", "memory_update", "memory_forget", "memory_resolve",
         "memory_feedback", "memory_status", "memory_reindex", "memory_share"}


async def _listed(store: Path, home: Path) -> list[dict]:
    async with open_server(store, home) as s:
        result = await s.client.list_tools()
        await s.call("memory_status")  # a call still reaches the registered tools
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in result.tools]


async def test_a_later_start_lists_every_tool_as_registering_them_does(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    store, home = tmp_path / "store", tmp_path / "home"
    home.mkdir()
    first = await _listed(store, home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    kept = toolcache.path()  # the same code in this process, so the same key
    assert kept.is_file()
    second = await _listed(store, home)
    assert {t["name"] for t in first} == TOOLS and second == first
    kept.write_text("{not json")  # a damaged copy is ignored and written again
    assert await _listed(store, home) == first
    assert toolcache.load() is not None


def test_an_edit_below_a_layer_folder_changes_the_cached_tool_list_key() -> None:
    """The key once took only the package's top-level files: after the move into layer folders, an
    edit to the tool schemas (adapters/serve/toolargs.py) would have kept answering the old list."""
    schemas = Path(toolcache.__file__).with_name("toolargs.py")
    st = schemas.stat()
    before = toolcache._key()
    try:
        os.utime(schemas, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert toolcache._key() != before
    finally:
        os.utime(schemas, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert toolcache._key() == before
