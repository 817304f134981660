"""File memories that know they are stale (issue 33, item 5): a memory with `paths:` records the
project's HEAD commit when it is written or updated (in `written_by`), and the commits since that
touched its file are counted; the PreToolUse hook, `recall --file` and status mark it. Memories of
the user store and projects without git get no mark. A real project repository, the real CLI and
the real hook on stdin."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import EXE, hook_env

from memory_mcp.app.store import Store
from memory_mcp.truth.stamp import Writer, new_session

TAX = "src/billing/tax.py"
MARK = f"{TAX} changed in 3 commits since"


def _git(project: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True, check=True).stdout


def _commit(project: Path, rel: str, text: str) -> None:
    path = project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    _git(project, "add", rel)
    _git(project, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", f"change {rel}")


def _cli(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run([str(EXE), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    return done.stdout


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return hook_env(tmp_path, monkeypatch)


def test_a_file_memory_whose_file_changed_since_is_marked_by_the_hook_recall_and_status(
        env: dict[str, str], tmp_path: Path) -> None:
    project, store = Path(env["PROJECT"]), tmp_path / "store"
    _commit(project, TAX, "rate = 1\n")
    Store.open(store).close()
    cli = ["--store", str(store)]
    _cli(env, project, *cli, "remember", "Tax is rounded per line, never per invoice.", "--paths", TAX)
    _cli(env, project, *cli, "remember", "Docs are written in British English.", "--paths", "docs/**")
    for n in range(3):
        _commit(project, TAX, f"rate = {n + 2}\n")
    _commit(project, "docs/other.md", "unrelated\n")  # not the tax file: one commit for docs/**
    _commit(project, "README.md", "readme\n")

    recalled = _cli(env, project, *cli, "recall", "--file", TAX)
    assert MARK in recalled and "Tax is rounded" in recalled
    status = _cli(env, project, *cli, "status")
    assert MARK in status
    assert "docs/** changed in 1 commit since" in status  # a glob counts every file it names
    payload = {"session_id": "s1", "cwd": str(project), "tool_name": "Read",
               "tool_input": {"file_path": str(project / TAX)}}
    for session in ("s1", "s2"):  # the second answer comes from the counts kept for this HEAD
        done = subprocess.run([str(EXE), "hook", "PreToolUse", "--store", str(store)], capture_output=True,
                              text=True, env=env, timeout=60, input=json.dumps({**payload, "session_id": session}))
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert MARK in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    kept = json.loads((store / ".derived" / "changes.json").read_text(encoding="utf-8"))
    assert kept["head"] == _git(project, "rev-parse", "HEAD").strip()

    # An update records the HEAD of that moment: the memory is current again.
    mem_id = re.findall(r"\[([0-9A-Z]{26})\]", recalled)[0]
    _cli(env, project, *cli, "update", mem_id, "--entities", "billing")
    assert "changed in" not in _cli(env, project, *cli, "recall", "--file", TAX)


def test_user_store_memories_and_projects_without_git_get_no_mark(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "app"
    project.mkdir()
    _git(project, "init", "-q", "-b", "main")
    _commit(project, TAX, "rate = 1\n")
    plain = tmp_path / "plain"  # a project folder that is no git repository
    (plain / "src" / "billing").mkdir(parents=True)
    user, own = tmp_path / "user", tmp_path / "own"
    monkeypatch.setenv("MEMORY_MCP_USER_ROOT", str(user))
    found: dict[str, str] = {}
    cases = (("user", user, project), ("project", own, project), ("no git", tmp_path / "ng", plain))
    for _name, root, folder in cases:
        store = Store.open(root)
        store.remember("Tax is rounded per line.", by=Writer("cli", new_session(), folder), paths=[TAX])
        store.close()
    for n in range(3):
        _commit(project, TAX, f"rate = {n + 2}\n")
    for name, root, folder in cases:
        monkeypatch.setenv("MEMORY_MCP_PROJECT_DIR", str(folder))
        store = Store.open(root)
        try:
            found[name] = store.recall(file=TAX).results[0].changed
        finally:
            store.close()
    assert found == {"user": "", "project": MARK, "no git": ""}
    assert not os.path.exists(user / ".derived" / "changes.json")
