"""Sessions stamped on their own (issue 33, item 1): every memory written through the server records in
`written_by` the client, a session id the server mints for each connection, the host and the project's
name, branch and HEAD commit, with nothing passed by the agent; `source` stays what the agent gave.
Through real `memory-mcp serve` processes over stdio, on a real project repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import fm_value, open_server
from mcp.types import Implementation

from memory_mcp.truth import files

pytestmark = pytest.mark.anyio


def _project(tmp_path: Path) -> tuple[Path, str]:
    """A project repository on branch `main` with one commit, whose remote URL carries a password."""
    project = tmp_path / "app"
    project.mkdir()
    for args in (["init", "-q", "-b", "main"], ["config", "user.name", "T"], ["config", "user.email", "t@example.com"],
                 ["remote", "add", "origin", "https://alice:s3cret@github.com/org/app.git"]):
        subprocess.run(["git", "-C", str(project), *args], check=True)
    (project / "README.md").write_text("app\n", encoding="utf-8")
    _commit(project, "README.md", "first")
    return project, _head(project)


def _commit(project: Path, rel: str, message: str) -> None:
    subprocess.run(["git", "-C", str(project), "add", rel], check=True)
    subprocess.run(["git", "-C", str(project), "commit", "-q", "-m", message], check=True)


def _head(project: Path) -> str:
    return subprocess.run(["git", "-C", str(project), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def _stamp(store: Path, path: str) -> dict[str, str]:
    return files.parse((store / path).read_text(encoding="utf-8"), path).written_by


async def test_each_connection_stamps_its_client_session_and_project_on_its_own(tmp_path: Path) -> None:
    project, first = _project(tmp_path)
    store = tmp_path / "store"
    env = {"MEMORY_MCP_PROJECT_DIR": str(project)}
    async with open_server(store, extra_env=env, client_info=Implementation(name="agent-one", version="1")) as s:
        a = await s.call("memory_remember", content="The billing service rounds tax per line.")
        b = await s.call("memory_remember", content="Invoices are numbered per year.", source="user correction")
        first_a = _stamp(store, a["path"])
    (project / "tax.py").write_text("x = 1\n", encoding="utf-8")
    _commit(project, "tax.py", "second")
    async with open_server(store, extra_env=env, client_info=Implementation(name="agent-two", version="2")) as s:
        c = await s.call("memory_remember", content="Refunds go through the payments queue.")
        await s.call("memory_update", id=a["id"], entities=["billing"])

    one, two, three, updated = first_a, *(_stamp(store, r["path"]) for r in (b, c, a))
    assert list(one) == ["client", "session", "host", "project", "branch", "commit"]
    assert one["client"] == "agent-one" and three["client"] == "agent-two"
    # A session id minted by the server: the same for every write of a connection, another for the next.
    assert one["session"] == two["session"] and one["session"] != three["session"]
    assert (one["project"], one["branch"], one["commit"]) == ("github.com/org/app", "main", first)
    assert three["commit"] == _head(project) != first
    # An update is a new version: it carries the session and the commit of the write that made it.
    assert updated["session"] == three["session"] and updated["commit"] == three["commit"]
    # `source` is what the agent gave, and only that; a team shares the store: no password, no path.
    assert fm_value(store / a["path"], "source") is None
    assert fm_value(store / b["path"], "source") == "user correction"
    text = (store / b["path"]).read_text(encoding="utf-8")
    assert "s3cret" not in text and "alice" not in text and str(tmp_path) not in text


async def test_a_hand_written_file_without_the_field_stays_valid_and_untouched(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with open_server(store) as s:
        await s.call("memory_status")
        mem = store / "memories" / "by-hand.md"
        mem.write_text("---\nid: 01JD2K3A9FZQ4W8XVBH5T6N7RM\ntype: fact\n---\n# Written by hand\n\nNo stamp here.\n",
                       encoding="utf-8")
        before = mem.read_bytes()
        assert await s.recall_ids("stamp") == ["01JD2K3A9FZQ4W8XVBH5T6N7RM"]
        assert (await s.call("memory_status"))["unindexed"] == []
    assert mem.read_bytes() == before
