"""The command line for people, run as a subprocess: init, status, recall, reindex [--verify], --store."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import EXE, commit_count, fm_file, git, new_id


def run(*args: str, home: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    e.update(env or {})
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, env=e, timeout=60)


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    base = tmp_path_factory.mktemp("cli")
    home = base / "home"
    home.mkdir()
    store = base / "store"
    r = run("init", str(store), home=home)
    assert r.returncode == 0, r.stderr
    assert "memory store ready" in r.stdout and str(store) in r.stdout
    mid = new_id()
    fm_file(store, "albatross.md", "# Albatross deploys\n\nAlbatross deploys go through the canary stage.\n",
            id=mid, type="decision", trust="user-stated", entities=["albatross"])
    return store, home, mid


def test_init_makes_a_committed_store(cli_store: tuple[Path, Path, str]) -> None:
    store, _, _ = cli_store
    for name in ("README.md", "dictionary.md", ".gitignore", "memories"):
        assert (store / name).exists()
    assert git(store, "log", "--format=%s").splitlines()[-1].startswith("init:")


def test_init_twice_is_harmless(cli_store: tuple[Path, Path, str]) -> None:
    store, home, _ = cli_store
    before = commit_count(store)
    r = run("init", str(store), home=home)
    assert r.returncode == 0 and commit_count(store) == before


def test_init_refuses_a_folder_that_is_not_a_store(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "main.py").write_text("print('hi')\n")
    r = run("init", str(folder), home=tmp_path)
    assert r.returncode == 2
    assert "invalid_store" in r.stderr and "not a memory store" in r.stderr
    assert [p.name for p in folder.iterdir()] == ["main.py"]
    r = run("status", "--store", str(folder), home=tmp_path)
    assert r.returncode == 2 and "invalid_store" in r.stderr
    assert [p.name for p in folder.iterdir()] == ["main.py"]


def test_recall_with_store_flag(cli_store: tuple[Path, Path, str]) -> None:
    store, home, mid = cli_store
    r = run("recall", "--store", str(store), "albatross", "canary", home=home)
    assert r.returncode == 0, r.stderr
    assert mid in r.stdout and "Albatross deploys" in r.stdout and "decision" in r.stdout
    r = run("--store", str(store), "recall", "nothing-matches-this-xyzzy", home=home)
    assert r.returncode == 0 and mid not in r.stdout


def test_recall_uses_memory_mcp_root(cli_store: tuple[Path, Path, str]) -> None:
    store, home, mid = cli_store
    r = run("recall", "albatross", home=home, env={"MEMORY_MCP_ROOT": str(store)})
    assert r.returncode == 0 and mid in r.stdout


def test_status_is_readable(cli_store: tuple[Path, Path, str]) -> None:
    store, home, _ = cli_store
    broken = store / "memories" / "broken.md"
    broken.write_text("---\nid: [x\n---\nbroken\n")
    try:
        r = run("status", "--store", str(store), home=home)
        assert r.returncode == 0, r.stderr
        assert f"store {store}" in r.stdout and "memories" in r.stdout
        assert "unindexed files:" in r.stdout and "memories/broken.md" in r.stdout
        assert "git: main" in r.stdout
    finally:
        broken.unlink()


def test_reindex_and_verify(cli_store: tuple[Path, Path, str]) -> None:
    store, home, mid = cli_store
    r = run("reindex", "--store", str(store), home=home)
    assert r.returncode == 0 and r.stdout.startswith("rebuild:") and "memories indexed" in r.stdout
    r = run("reindex", "--verify", "--store", str(store), home=home)
    assert r.returncode == 0 and r.stdout.startswith("verify:")
    r = run("recall", "--store", str(store), "albatross", home=home)
    assert mid in r.stdout


def test_recall_all_includes_archived(cli_store: tuple[Path, Path, str]) -> None:
    store, home, _ = cli_store
    aid = new_id()
    fm_file(store, "archived-note.md", "# Old petrel setup\n\nThe petrel setup used docker swarm.\n",
            id=aid, state="archived")
    assert aid not in run("recall", "--store", str(store), "petrel", home=home).stdout
    out = run("recall", "--store", str(store), "--all", "petrel", home=home).stdout
    assert aid in out and "[archived]" in out


def test_cli_hand_edits_are_committed(cli_store: tuple[Path, Path, str]) -> None:
    store, home, _ = cli_store
    fm_file(store, "cli-hand.md", "# Cli hand\n\nshearwater note\n")
    run("status", "--store", str(store), home=home)
    assert git(store, "status", "--porcelain").strip() == ""
    assert git(store, "log", "-1", "--format=%s").startswith("reconcile:")


def test_help_lists_the_commands(tmp_path: Path) -> None:
    r = run("--help", home=tmp_path)
    assert r.returncode == 0
    for cmd in ("serve", "init", "status", "recall", "reindex"):
        assert cmd in r.stdout


def test_demo_runs_the_whole_loop_on_a_new_store(tmp_path: Path) -> None:
    done = run("demo", home=tmp_path, env={"TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "1 file change(s) picked up" in done.stdout and "Raised to 3600 seconds" in done.stdout
    store = Path(done.stdout.splitlines()[0].removeprefix("store: "))
    assert store.is_relative_to(tmp_path) and not (tmp_path / ".memory-mcp").exists()
    log = git(store, "log", "--format=%s").splitlines()
    assert log[0].startswith("reconcile:") and sum(s.startswith("remember:") for s in log) == 3


@pytest.mark.parametrize("where", ["after", "before"])
def test_demo_with_a_real_store_is_refused_and_writes_nothing(cli_store: tuple[Path, Path, str], where: str) -> None:
    # `memory-mcp --store <real store> demo` wrote three demo memories and a hand edit into that store.
    store, home, _ = cli_store
    before = commit_count(store), sorted((store / "memories").rglob("*"))
    args = ("demo", "--store", str(store)) if where == "after" else ("--store", str(store), "demo")
    done = run(*args, home=home)
    assert done.returncode == 2 and done.stdout == ""
    assert "[invalid_argument]" in done.stderr and "temporary store only" in done.stderr
    assert (commit_count(store), sorted((store / "memories").rglob("*"))) == before


@pytest.mark.parametrize("command", [["status"], ["recall", "x"], ["digest"], ["export"], ["reindex"], ["serve"]])
def test_a_mistyped_store_is_refused_not_created_empty(tmp_path: Path, command: list[str]) -> None:
    # `memory-mcp --store /nonexistent/deep/path status` printed "0 memories (empty)", exited 0 and
    # made the folders: a user thinks the memories are gone, and a moved store came back empty.
    missing = tmp_path / "nonexistent" / "deep" / "path"
    for args, env in ((["--store", str(missing), *command], None), (command, {"MEMORY_MCP_ROOT": str(missing)})):
        done = run(*args, home=tmp_path, env=env)
        assert done.returncode == 2 and done.stdout == ""
        assert str(missing) in done.stderr and f"memory-mcp init {missing}" in done.stderr
        assert done.stderr.count("\n") == 1
        assert not (tmp_path / "nonexistent").exists()
    done = run("init", str(missing), home=tmp_path)
    assert done.returncode == 0 and (missing / "memories").is_dir()
