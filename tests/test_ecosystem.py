"""Claude Code registration, the SessionStart digest hook, git sync between clones, HTTP serving."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory_mcp.store import Store

EXE = str(Path(sys.executable).parent / "memory-mcp")
pytestmark = pytest.mark.anyio


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=60)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def test_sync_carries_memories_both_ways_between_clones(tmp_path: Path) -> None:
    a = Store.open(tmp_path / "a")
    first = a.remember("Release notes go in CHANGELOG.md, newest first.", type="decision")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    git(a.root, "remote", "add", "origin", str(bare))
    assert "pushed" in a.sync()
    subprocess.run(["git", "clone", "-q", str(bare), str(tmp_path / "b")], check=True)
    b = Store.open(tmp_path / "b")
    assert [h.id for h in b.recall("CHANGELOG newest").results] == [first.id]
    second = b.remember("Tags are signed with the release key.", type="decision")
    b.sync()
    a.sync()
    assert a.recall("tags signed release key").results[0].id == second.id


def test_sync_without_a_remote_says_so(tmp_path: Path) -> None:
    assert "no git remote" in Store.open(tmp_path / "s").sync()


def test_sync_conflict_is_undone_and_explained(tmp_path: Path) -> None:
    from memory_mcp.errors import SyncFailed

    a = Store.open(tmp_path / "a")
    mem = a.remember("The auk cluster has three nodes.")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    git(a.root, "remote", "add", "origin", str(bare))
    a.sync()
    subprocess.run(["git", "clone", "-q", str(bare), str(tmp_path / "b")], check=True)
    b = Store.open(tmp_path / "b")
    b.update(mem.id, content="The auk cluster has five nodes.")
    b.sync()
    a.update(mem.id, content="The auk cluster has seven nodes.")
    with pytest.raises(SyncFailed, match="conflicted and was undone") as err:
        a.sync()
    assert "stderr" not in str(err.value)
    assert not (a.root / ".git" / "rebase-merge").exists() and not (a.root / ".git" / "rebase-apply").exists()
    assert "seven" in a.read(id=mem.id).body  # the local memory is intact


def test_watch_indexes_and_commits_a_hand_edit_when_it_is_saved(tmp_path: Path) -> None:
    import threading

    from memory_mcp.watch import watch

    store = Store.open(tmp_path / "store")
    mem = store.remember("The petrel queue drains nightly.")
    reports = []
    stop = threading.Event()
    seen = threading.Event()

    def on_report(report) -> None:
        reports.append(report)
        if report.reindexed:
            seen.set()

    worker = threading.Thread(target=watch, args=(store, on_report, stop, 50))
    worker.start()
    try:
        time.sleep(0.5)  # let the watcher start
        path = store.root / mem.path
        path.write_text(path.read_text() + "\nIt drains hourly on Fridays.\n")
        assert seen.wait(20), reports
    finally:
        stop.set()
        worker.join(20)
    assert any(r.reindexed == [mem.path] for r in reports)
    assert git(store.root, "log", "-1", "--format=%s").startswith("reconcile:")
