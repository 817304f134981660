"""`memory-mcp watch` (git sync between clones: test_sync.py)."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory_mcp.app.store import Store

EXE = str(Path(sys.executable).parent / "memory-mcp")
pytestmark = pytest.mark.anyio


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=60)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def test_watch_indexes_and_commits_a_hand_edit_when_it_is_saved(tmp_path: Path) -> None:
    import threading

    store = Store.open(tmp_path / "store")
    mem = store.remember("The petrel queue drains nightly.")
    reports = []
    stop = threading.Event()
    seen = threading.Event()

    def on_report(report) -> None:
        reports.append(report)
        if report.reindexed:
            seen.set()

    worker = threading.Thread(target=store.follow, args=(on_report, stop, 50))
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
