"""What a new user meets at the command line (issue 32): each test runs the real `memory-mcp` as a
subprocess, the way the mistake was made, and wants a coded error on stderr (exit 2), nothing
changed, and words a person can act on (commands and flags, not an agent's tool names)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import EXE, fm_file, new_id
from reliability_support import needs_capsh, unprivileged


def run(*args: str, home: Path, env: dict[str, str] | None = None, stdin: str | None = None,
        cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    e = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    e.update(env or {})
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, env=e, timeout=60, input=stdin,
                          cwd=cwd)


def refused(r: subprocess.CompletedProcess[str], code: str) -> str:
    """The one stderr line of a coded refusal (no traceback), after checking the exit code."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"memory-mcp: [{code}] "), r.stderr
    return r.stderr


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str, str]:
    """A home, a store with two memories that are not a pair: (home, store, id_a, id_b)."""
    base = tmp_path_factory.mktemp("newuser")
    home, store = base / "home", base / "store"
    home.mkdir()
    assert run("init", str(store), home=home).returncode == 0
    a, b = new_id(), new_id()
    fm_file(store, "deploys.md", "# Deploys\n\nDeploys go through the canary stage.\n", id=a, type="decision")
    fm_file(store, "cats.md", "# Cats\n\nThe office cat is called Biscuit.\n", id=b, type="fact")
    return home, store, a, b


# ------------------------------------------------------------------ export PATH
def test_export_onto_a_symlink_writes_its_target_and_keeps_the_link(world: tuple[Path, Path, str, str],
                                                                     tmp_path: Path) -> None:
    home, store, _, _ = world
    target = tmp_path / "backups" / "memories.json"
    target.parent.mkdir()
    target.write_text("old\n")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    r = run("--store", str(store), "export", str(link), home=home)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and link.readlink() == target
    assert json.loads(target.read_text())["count"] == 2


def test_export_onto_a_pipe_is_refused_and_the_pipe_stays(world: tuple[Path, Path, str, str], tmp_path: Path) -> None:
    """A rename onto whatever is at the path replaced it: as root, /dev/full became a JSON file. A
    named pipe stands for the devices here (making a device node needs root)."""
    home, store, _, _ = world
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    err = refused(run("--store", str(store), "export", str(fifo), home=home), "invalid_argument")
    assert "not a regular file" in err
    assert fifo.is_fifo()


def test_export_into_an_existing_folder_is_refused_without_a_traceback(world: tuple[Path, Path, str, str],
                                                                      tmp_path: Path) -> None:
    home, store, _, _ = world
    (tmp_path / "out").mkdir()
    err = refused(run("--store", str(store), "export", str(tmp_path / "out"), home=home), "invalid_argument")
    assert "is a folder" in err
    assert list((tmp_path / "out").iterdir()) == []


@needs_capsh
def test_export_into_a_folder_that_cannot_be_written_is_refused(world: tuple[Path, Path, str, str],
                                                               tmp_path: Path) -> None:
    home, store, _, _ = world
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    e = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    r = subprocess.run(unprivileged([str(EXE), "--store", str(store), "export", str(locked / "m.json")]),
                       capture_output=True, text=True, env=e, timeout=60)
    assert "Permission denied" in refused(r, "store_unwritable")
    assert list(locked.iterdir()) == []


# ------------------------------------------------------------------ a file where a store folder goes
@pytest.mark.parametrize("how", ["--store", "MEMORY_MCP_ROOT", "init"])
def test_a_regular_file_named_as_the_store_is_refused(how: str, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    if how == "--store":
        r = run("--store", str(notes), "status", home=tmp_path)
    elif how == "MEMORY_MCP_ROOT":
        r = run("status", home=tmp_path, env={"MEMORY_MCP_ROOT": str(notes)})
    else:
        r = run("init", str(notes), home=tmp_path)
    assert "is a file, not a folder" in refused(r, "invalid_store")
    assert notes.read_text() == "my notes\n"


def test_init_under_a_regular_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("my notes\n")
    err = refused(run("init", str(tmp_path / "notes.txt" / "store"), home=tmp_path), "invalid_store")
    assert "inside" in err and "notes.txt" in err


# ------------------------------------------------------------------ accepted where an error was due
@pytest.mark.parametrize("budget", ["0", "-5"])
def test_digest_refuses_a_budget_below_one(world: tuple[Path, Path, str, str], budget: str) -> None:
    home, store, _, _ = world
    r = run("--store", str(store), "digest", "--max-tokens", budget, home=home)
    assert r.returncode == 2 and "--max-tokens: must be at least 1" in r.stderr
    assert r.stdout == ""


def test_recall_with_an_empty_file_lists_nothing_and_says_why(world: tuple[Path, Path, str, str]) -> None:
    home, store, _, _ = world
    err = refused(run("--store", str(store), "recall", "--file", "", home=home), "invalid_argument")
    assert "--file needs a file's path" in err


def test_a_hook_of_an_unknown_event_exits_1_with_a_line_on_stderr(tmp_path: Path) -> None:
    """Exit 0 and silence made a typo in a settings file invisible; 2 would block the session."""
    for argv in (["hook", "Bogus"], ["hook", "SesionStart", "--store", str(tmp_path)], ["hook"]):
        r = run(*argv, home=tmp_path, stdin="{}")
        assert r.returncode == 1, (argv, r.returncode, r.stderr)
        assert r.stdout == ""
        assert r.stderr.startswith("memory-mcp hook: ") and "SessionStart, UserPromptSubmit" in r.stderr
    assert not (tmp_path / ".memory-mcp").exists()


def test_keep_both_on_two_memories_that_are_not_a_pair_is_refused(world: tuple[Path, Path, str, str]) -> None:
    home, store, a, b = world
    before = subprocess.run(["git", "-C", str(store), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    err = refused(run("--store", str(store), "resolve", a, b, "keep_both", home=home), "invalid_argument")
    assert "not a conflict pair" in err and "`memory-mcp status`" in err
    assert subprocess.run(["git", "-C", str(store), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout == before
    assert "distinct_from" not in (store / "memories" / "cats.md").read_text()


def test_a_refused_paste_line_is_named_by_its_line_in_the_file(tmp_path: Path) -> None:
    """The credential was reported "on line 1": the derived heading of a body the person never saw."""
    store = tmp_path / "store"
    assert run("init", str(store), home=tmp_path).returncode == 0
    key = "AKIA" + "QW4RT7YU2IOP5ASD"
    paste = tmp_path / "notes.txt"
    paste.write_text(f"the build runs on ubuntu 24.04\n\nthe ci key is {key} for now\n")
    r = run("--store", str(store), "import", "paste", str(paste), home=tmp_path)
    assert r.returncode == 1, r.stderr
    refusal = next(line for line in r.stdout.splitlines() if line.startswith("refused line"))
    assert refusal.startswith("refused line 3: [secret_detected]")
    assert "on line 3)" in refusal and "on line 1" not in refusal


# ------------------------------------------------------------------ the CLI speaks a person's words
def test_cli_messages_name_commands_and_flags_not_tools(tmp_path: Path) -> None:
    store = tmp_path / "store"
    assert run("init", str(store), home=tmp_path).returncode == 0
    mid = new_id()
    fm_file(store, "old.md", "# Old\n\nThe staging host is staging-1.\n", id=mid, type="fact", state="archived")
    missing = new_id()
    err = refused(run("--store", str(store), "read", missing, home=tmp_path), "not_found")
    assert "use `memory-mcp recall` to find the right id" in err and "memory_" not in err
    err = refused(run("--store", str(store), "forget", mid, "--mode", "purge", home=tmp_path), "confirm_required")
    assert "--confirm" in err and "confirm=true" not in err and "Ask the user" not in err


def test_the_server_keeps_the_agents_words(tmp_path: Path) -> None:
    """The same messages built for a tool call name the tools (the default reader is an agent)."""
    from memory_mcp.app.store import Store
    from memory_mcp.truth import words
    from memory_mcp.truth.errors import ConfirmRequired, NotFound
    from memory_mcp.truth.writeoptions import Forget

    store = Store.open(tmp_path / "store")
    mid = new_id()
    fm_file(store.root, "old.md", "# Old\n\nThe staging host is staging-1.\n", id=mid, type="fact", state="archived")
    with pytest.raises(ConfirmRequired, match="call again with confirm=true"):
        store.forget(Forget(id=mid, mode="purge"))
    with pytest.raises(NotFound, match="use memory_recall"):
        store.read(id=new_id())
    with words.speaking("person"), pytest.raises(NotFound, match="use `memory-mcp recall`"):
        store.read(id=new_id())
    store.close()
