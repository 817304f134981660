"""File-aware memories: the `paths:` frontmatter field (globs relative to the project root), set by
memory_remember and memory_update and listed by memory_recall's `file`, over the real MCP server.
The PreToolUse hook that injects them is tested in tests/adapters/test_hooks.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import fm_file, fm_value, open_server

pytestmark = pytest.mark.anyio


async def test_paths_set_by_remember_and_update_and_listed_by_recall_file(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src" / "billing").mkdir(parents=True)
    store = tmp_path / "store"
    async with open_server(store, extra_env={"CLAUDE_PROJECT_DIR": str(project)}) as s:
        mem = await s.call("memory_remember", content="Invoices are immutable once sent; corrections are credit notes.",
                           title="Invoices are immutable", type="decision", paths=["./src/billing/**", "**/*.sql"])
        other = await s.call("memory_remember", content="Deploys go out on tags.", title="Deploy on tags")
        path = store / mem["path"]
        assert fm_value(path, "paths") == '[src/billing/**, "**/*.sql"]'
        assert fm_value(store / other["path"], "paths") is None  # empty: not written
        for file in (str(project / "src" / "billing" / "invoice.py"), "src/billing/deep/x.py", "migrations/1.sql"):
            assert await s.recall_ids(file=file) == [mem["id"]], file
        for file in ("src/other.py", "/elsewhere/src/billing/x.py", str(tmp_path / "migrations" / "1.sql")):
            assert await s.recall_ids(file=file) == [], file
        await s.call("memory_update", id=mem["id"], paths=["lib/*.py"])
        assert await s.recall_ids(file="src/billing/invoice.py") == []
        assert await s.recall_ids(file="lib/money.py") == [mem["id"]]
        assert await s.recall_ids(file="lib/deep/money.py") == []  # * stays within one folder
        # A memory written by hand with paths: is found the same way.
        fm_file(store, "by-hand.md", "# Money is integer cents\nNever floats.\n", type="preference",
                paths=["src/money/**"])
        [hit] = (await s.call("memory_recall", file="src/money/cents.py"))["results"]
        assert hit["title"] == "Money is integer cents"


async def test_bad_paths_and_file_with_query_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with open_server(store) as s:
        error = await s.error("memory_remember", content="Build with just.", paths=["../other/**"])
        assert "invalid_argument" in error and "leaves the project" in error
        error = await s.error("memory_remember", content="Build with just.", paths="src/**")
        assert "invalid_argument" in error and "paths" in error
        error = await s.error("memory_recall", query="build", file="src/a.py")
        assert "invalid_argument" in error and "query or file" in error
        assert list((store / "memories").rglob("*.md")) == []
