"""Scopes: one server over a project store and the user's global store, over stdio with two real stores."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
from conftest import EXE, Session, commit_count, make_store, open_server, subjects
from mcp import Client, StdioServerParameters

from memory_mcp.app.store import Store

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("scopes")
    return base / "project" / ".memory", base / "user-store"


@pytest.fixture(scope="module")
async def both(roots: tuple[Path, Path]):
    project, user = roots
    async with open_server(project, extra_env={"MEMORY_MCP_USER_ROOT": str(user)}) as session:
        yield session


async def test_writes_go_to_the_scope_named_and_project_by_default(both: Session, roots: tuple[Path, Path]) -> None:
    project, user = roots
    mine = await both.call("memory_remember", content="The heron service builds with make release.")
    theirs = await both.call("memory_remember", content="I prefer tabs over spaces in every language.",
                             type="preference", scope="user")
    assert (project / mine["path"]).is_file() and not (user / mine["path"]).exists()
    assert (user / theirs["path"]).is_file() and not (project / theirs["path"]).exists()
    assert subjects(user, 1)[0].startswith("remember:") and commit_count(user) == 2  # init + this one


async def test_recall_reads_both_project_first_and_names_the_scope(both: Session) -> None:
    await both.call("memory_remember", content="Heron deploys need the VPN up first.", entities=["heron"])
    await both.call("memory_remember", content="Heron is my favourite bird for naming services.",
                    entities=["heron"], scope="user")
    r = await both.call("memory_recall", query="heron")
    scopes = [h["scope"] for h in r["results"]]
    assert "project" in scopes and "user" in scopes
    assert scopes == sorted(scopes)  # every project hit before every user hit
    only_user = await both.call("memory_recall", query="heron", scope="user")
    assert {h["scope"] for h in only_user["results"]} == {"user"}
    text = "".join(c.text for c in (await both.raw("memory_recall", query="heron")).content)
    assert "(user scope)" in text and "(project scope)" in text


async def test_one_limit_covers_both_scopes(both: Session) -> None:
    r = await both.call("memory_recall", query="heron", limit=1)
    assert [h["scope"] for h in r["results"]] == ["project"]


async def test_calls_by_id_find_the_store_that_holds_the_memory(both: Session, roots: tuple[Path, Path]) -> None:
    _, user = roots
    mem = await both.call("memory_remember", content="My editor is helix.", scope="user")
    read = await both.call("memory_read", id=mem["id"])
    assert read["path"] == mem["path"] and "helix" in read["body"]
    assert (await both.call("memory_read", path=mem["path"]))["id"] == mem["id"]
    await both.call("memory_update", id=mem["id"], content="My editor is helix, with the default keymap.")
    assert "default keymap" in (user / mem["path"]).read_text()
    await both.call("memory_feedback", id=mem["id"], helpful=True)
    await both.call("memory_forget", id=mem["id"], mode="archive")
    assert "state: archived" in (user / mem["path"]).read_text()
    assert subjects(user, 1)[0].startswith("forget: archive")


async def test_digest_shows_both_with_their_scope(both: Session) -> None:
    text = (await both.client.read_resource("memory://digest")).contents[0].text
    assert "(preference, user)" in text and "(fact, project)" in text
    assert text.index("(preference, user)") < text.index("(fact, project)")


async def test_reindex_covers_both_stores_and_counts_progress_across_them(
        both: Session, roots: tuple[Path, Path]) -> None:
    project, user = roots
    seen: list[tuple[float, float | None]] = []
    finished = anyio.Event()
    files = len(list((project / "memories").rglob("*.md"))) + len(list((user / "memories").rglob("*.md")))

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total))
        if done == files:
            finished.set()

    r = await both.client.call_tool("memory_reindex", {}, progress_callback=on_progress)
    assert r.structured_content["indexed"] == files
    with anyio.fail_after(10):  # notifications may be handled just after the result arrives
        await finished.wait()
    assert seen[-1] == (files, files) and all(a[0] < b[0] for a, b in zip(seen, seen[1:], strict=False))


async def test_scope_on_a_single_store_server_is_refused_clearly(tmp_path: Path) -> None:
    async with open_server(tmp_path / "store") as s:
        text = await s.error("memory_remember", content="Goes nowhere.", scope="user")
        assert "[invalid_argument]" in text and "--user-store" in text
        assert "[invalid_argument]" in await s.error("memory_recall", query="x", scope="project")
        assert (await s.call("memory_recall", query="x"))["results"] == []


def test_one_folder_cannot_be_both_scopes(tmp_path: Path) -> None:
    store = str(make_store(tmp_path / "store"))  # an existing store: a missing one is refused before this check
    done = subprocess.run([str(EXE), "serve", "--store", store, "--user-store", store], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 2 and "same folder" in done.stderr


async def test_mcp_json_written_by_install_serves_both_scopes(tmp_path: Path) -> None:
    """The per-project configuration: install writes it, and a client started from it sees both scopes."""
    project, user = tmp_path / "project", tmp_path / "user"
    project.mkdir()
    Store.open(user).remember("I like short commit subjects.", type="preference", trust="user-stated")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip())
    env = {"HOME": str(tmp_path), "PATH": str(bin_dir), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run([str(EXE), "install", "claude-code", "--scope", "project", "--store",
                           str(project / ".memory"), "--user-store", str(user)], capture_output=True, text=True,
                          cwd=project, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["memory"]
    # Committed, so no machine path: the project store relative to the project, the user store under
    # ${HOME}, the command from PATH; Claude Code expands ${VAR} in command, args and env.
    assert entry == {"type": "stdio", "command": "memory-mcp", "args": ["serve", "--user-store", "${HOME}/user"],
                     "env": {"MEMORY_MCP_ROOT": ".memory"}}
    expand = lambda text: text.replace("${HOME}", str(tmp_path))  # noqa: E731
    params = StdioServerParameters(command=str(EXE.parent / entry["command"]), args=[expand(a) for a in entry["args"]],
                                   cwd=str(project), env={**entry["env"], "HOME": str(tmp_path), "PATH": os.environ["PATH"]})
    async with Client(params) as client:
        r = await client.call_tool("memory_recall", {"query": "commit subjects"})
        assert [h["scope"] for h in r.structured_content["results"]] == ["user"]
        await client.call_tool("memory_remember", {"content": "This repo squashes merges.", "scope": "project"})
    assert list((project / ".memory" / "memories").rglob("this-repo-squashes-merges*.md"))


async def test_status_lists_the_user_stores_pending_conflicts_that_recall_counts(tmp_path: Path) -> None:
    # memory_status read the project store alone: recall said "1 pending conflict" for a pair the gate
    # raised in the user store, and status, where the agent goes to settle pairs, listed none.
    project, user = tmp_path / "project" / ".memory", tmp_path / "user-store"
    async with open_server(project, extra_env={"MEMORY_MCP_USER_ROOT": str(user)}) as session:
        await session.call("memory_remember", content="The heron service builds with make release.")
        terse = await session.call("memory_remember", content="Answers should be terse, no preamble.",
                                   type="preference", entities=["style"], scope="user")
        long = await session.call("memory_remember", content="Answers should now be long and detailed with preamble.",
                                  type="preference", entities=["style"], scope="user")
        assert [c["id"] for c in long["conflicts"]] == [terse["id"]]
        assert (await session.call("memory_recall", query="answers"))["pending_conflicts"] == 1
        status = await session.call("memory_status")
        assert [{p["id"], p["other_id"]} for p in status["pending_conflicts"]] == [{terse["id"], long["id"]}]
        assert status["counts"]["total"] == 3 and str(user) in status["store"]
        await session.call("memory_resolve", id=long["id"], other_id=terse["id"], decision="keep_both")
        assert (await session.call("memory_status"))["pending_conflicts"] == []


def test_the_default_user_store_is_refused_as_the_default_project_store_under_a_symlinked_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: the default user store was not resolved while the project store was, so with HOME
    behind a symlink the one default folder passed the same-folder check and served as both scopes."""
    from memory_mcp.truth.errors import InvalidArgument
    from memory_mcp.truth.roots import ScopeConfig, configured_user_root

    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "home").symlink_to(real)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MEMORY_MCP_ROOT", raising=False)
    monkeypatch.delenv("MEMORY_MCP_USER_ROOT", raising=False)
    with pytest.raises(InvalidArgument, match="same folder"):
        ScopeConfig(None, configured_user_root(True)).check()
