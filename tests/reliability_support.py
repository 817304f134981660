"""Helpers of the reliability tests: find and kill a server process, and compare a live index with a
fresh rebuild from the same files."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from memory_mcp.app.store import Store

# Columns that say when or in which order a row was written, or which copy of a file on disk it was
# (the stat gate's ctime and inode: a rebuild runs on a copy of the store), not what the files hold.
_VOLATILE = {"rowid", "mtime_ns", "ctime_ns", "ino"}


def server_pids(store: Path) -> list[int]:
    """Pids of `memory-mcp serve` processes started on `store` (read from /proc)."""
    marker = f"MEMORY_MCP_ROOT={store}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"serve" in (entry / "cmdline").read_bytes() and marker in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(entry.name))
            except (OSError, ValueError, IndexError):
                continue
    return out


def kill_tree(pid: int) -> None:
    """SIGKILL a process and everything it started (a `git commit` in flight dies with it, as in a
    power cut), freezing it first so it cannot start anything new meanwhile."""
    try:
        os.kill(pid, signal.SIGSTOP)
    except ProcessLookupError:
        return
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += _children(p)
    for p in reversed(tree):
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGKILL)


def index_tables(path: Path) -> dict[str, list[tuple]]:
    """What an index holds about the files, without row numbers or timestamps, in a stable order."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out: dict[str, list[tuple]] = {}
        for table in ("files", "memories", "secret_flags"):
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})") if r[1] not in _VOLATILE]
            out[table] = sorted(con.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall(), key=repr)
        out["entities"] = sorted(con.execute(
            "SELECT m.id, e.entity FROM entities e JOIN memories m ON m.rowid = e.memory_rowid").fetchall())
        out["fts_word"] = sorted(con.execute(
            "SELECT m.id, f.title, f.body, f.entities FROM fts_word f JOIN memories m ON m.rowid = f.rowid").fetchall())
        return out
    finally:
        con.close()


def rebuilt_tables(store: Path, scratch: Path) -> dict[str, list[tuple]]:
    """The index a fresh process builds from a copy of the store's files and git history."""
    copy = scratch / "rebuilt"
    shutil.copytree(store, copy, ignore=shutil.ignore_patterns(".derived"), symlinks=True)
    fresh = Store.open(copy)
    try:
        fresh.status()
    finally:
        fresh.close()
    return index_tables(copy / ".derived" / "index.sqlite3")


def git_out(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(store), *args], capture_output=True, text=True)


def commit_waiting_in_editor(store: Path, tmp_path: Path) -> subprocess.Popen[bytes]:
    """A person's `git commit -a` in `store`, waiting in its editor for 30 s, so it holds
    .git/index.lock; returns once the lock is there. Stop it with kill_tree(proc.pid)."""
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsleep 30\n")
    editor.chmod(0o755)
    (store / "README.md").write_text("edited\n")
    proc = subprocess.Popen(["git", "-C", str(store), "-c", "user.name=Ada", "-c", "user.email=a@b",
                             "-c", f"core.editor={editor}", "commit", "-a"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    lock = store / ".git" / "index.lock"
    while not lock.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert lock.exists(), "git commit did not take the index lock"
    return proc


def facility(cmd: list[str]) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


CAPSH = ["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--"]
needs_capsh = pytest.mark.skipif(
    not (os.geteuid() != 0 or (shutil.which("capsh") and facility([*CAPSH, "-c", "true"]))),
    reason="running as root without capsh: root ignores file modes, so a read-only store cannot be made")


def unprivileged(cmd: list[str]) -> list[str]:
    """`cmd` run so that file modes apply (as root: without the capabilities that bypass them)."""
    if os.geteuid() != 0:
        return cmd
    return [*CAPSH, "-c", 'exec "$0" "$@"', *cmd]
