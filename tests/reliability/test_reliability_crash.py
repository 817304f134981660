"""Crashes: a server killed with SIGKILL in the middle of writes, again and again. Afterwards no memory
file is empty or partial, no lock (ours or git's index.lock) blocks the next process, the next start
commits what a crash left uncommitted, and its index equals a fresh rebuild from the files."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from conftest import ToolFailed, fm_file, git, make_store, open_server
from reliability_support import (
    commit_waiting_in_editor,
    git_out,
    index_tables,
    kill_tree,
    rebuilt_tables,
    server_pids,
)

from memory_mcp.app.lock import StoreLock
from memory_mcp.app.store import Store

# Crash tests: killed processes, and locks that must age past their grace period.
pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# How long after the first write each round's server is killed: from before the first commit to
# the middle of the burst. The invariants below must hold wherever the kill lands.
KILL_AFTER = (0.0, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.8)
BURST = 12


async def crash_round(store: Path, n: int, delay: float, targets: list[str]) -> list[str]:
    """Start a server, fire a burst of writes at once, kill it `delay` seconds in. The ids whose
    remember was acknowledged before the kill."""
    acknowledged: list[str] = []
    refused: list[str] = []

    async def attempt(call) -> None:  # type: ignore[no-untyped-def]
        try:
            await call()
        except ToolFailed as e:  # an answer from the live server: must never be an error
            refused.append(e.text)
        except Exception:  # the call was cut off by the kill: that is the point
            pass

    try:
        async with open_server(store) as s:
            await s.call("memory_status")
            [pid] = server_pids(store)

            async def remember(i: int) -> None:
                r = await s.call("memory_remember", content=f"Round {n} write {i}: the sanderling{n}x{i} roost "
                                 f"is counted at dawn.", entities=[f"roost{i % 3}"])
                acknowledged.append(r["id"])

            async with anyio.create_task_group() as tg:
                for i in range(BURST):
                    tg.start_soon(attempt, lambda i=i: remember(i))
                for mem_id in targets:  # rewrites of existing files
                    tg.start_soon(attempt, lambda m=mem_id: s.call("memory_feedback", id=m, helpful=True))
                await anyio.sleep(delay)
                kill_tree(pid)
    except (Exception, BaseExceptionGroup):  # closing a client whose server is gone may complain
        pass
    assert refused == []
    assert server_pids(store) == []
    return acknowledged


async def test_sigkill_mid_writes_repeatedly_leaves_a_consistent_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_store(store)
    targets = [fm_file(store, f"target-{i}.md", f"# Target {i}\n\nthe dotterel{i} flock\n").stem for i in range(3)]
    core = Store.open(store)
    target_ids = [h.id for h in core.recall("dotterel flock", limit=10).results]
    core.close()
    assert len(target_ids) == 3 and targets
    acknowledged: list[str] = []
    for n, delay in enumerate(KILL_AFTER):
        acknowledged += await crash_round(store, n, delay, target_ids)
        # What a crash can leave behind, checked before anything tidies up.
        for path in (store / "memories").rglob("*.md"):
            text = path.read_text()
            assert text.startswith("---\nid: ") and text.count("\n---\n") >= 1 and text.endswith("\n"), path
    assert acknowledged, "no write was acknowledged before any kill: the rounds prove nothing"

    async with open_server(store) as s:
        # The next process is not blocked by any lock and finds the store consistent.
        st = await s.call("memory_status")
        assert st["unindexed"] == [] and st["git"]["memory_files_dirty"] is False, (
            git(store, "status", "--porcelain"), git(store, "log", "--format=%s", "-n5"),
            os.listdir(store / ".git"))
        r = await s.call("memory_remember", content="After the crashes the knot roost is counted too.")
        assert r["duplicate"] is False
    assert git(store, "status", "--porcelain").strip() == ""
    assert git_out(store, "fsck", "--no-progress").returncode == 0
    assert not (store / ".git" / "index.lock").exists()
    assert list((store / "memories").rglob(".*.tmp")) == []

    files = {p.read_text().split("\n", 2)[1].removeprefix("id: "): p for p in (store / "memories").rglob("*.md")}
    assert len(files) == len(list((store / "memories").rglob("*.md")))  # each memory in exactly one file
    assert set(acknowledged) <= set(files)  # nothing acknowledged was lost
    logged = git(store, "log", "--format=%B")
    assert all(f"Memory-Id: {i}" in logged for i in acknowledged)
    assert index_tables(store / ".derived" / "index.sqlite3") == rebuilt_tables(store, tmp_path)


@pytest.mark.parametrize("name", ["index.lock", "memory-mcp.index.lock", "memory-mcp.stage-index.lock",
                                  "HEAD.lock"])
def test_stale_git_index_lock_from_a_killed_process_does_not_block_the_next_one(tmp_path: Path, name: str) -> None:
    """A fresh lock (a commit killed a moment ago) with no git process alive in the store is removed
    at once: waiting for it to grow old would fail every write meanwhile. memory-mcp.index.lock is the
    lock of the scratch index the commit path builds trees in: a kill there once blocked every write;
    memory-mcp.stage-index.lock that of the copy of the person's index a commit stages into, which the
    list of stale locks had left out (a kill mid-`git add` made every later call store_busy)."""
    store = make_store(tmp_path / "store")
    lock = store / ".git" / name
    lock.write_text("")
    core = Store.open(store)
    try:
        r = core.remember("The whimbrel count is weekly.")
        assert r.path in git(store, "show", "--name-only", "--format=", "HEAD")
        assert not lock.exists()
    finally:
        core.close()


def test_git_index_lock_of_a_live_git_process_is_left_alone(tmp_path: Path) -> None:
    """A person's `git commit` waiting in their editor holds index.lock: it is theirs, not stale. A
    write meanwhile is done (its file written whole) and its commit follows on the first call after
    the person's commit is done."""
    store = make_store(tmp_path / "store")
    proc = commit_waiting_in_editor(store, tmp_path)
    lock = store / ".git" / "index.lock"
    core = Store.open(store)
    try:
        head = git(store, "rev-parse", "HEAD")
        core.remember("The wryneck nests in old woodpecker holes.")
        assert lock.exists() and git(store, "rev-parse", "HEAD") == head
        kill_tree(proc.pid)  # the person gives up on their commit; git leaves its lock behind
        proc.wait()
        [hit] = core.recall("wryneck").results
        assert hit.path in git(store, "show", "--name-only", "--format=", "HEAD")
        assert git(store, "status", "--porcelain", "--", "memories").strip() == ""
    finally:
        core.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_our_lock_is_released_by_the_kernel_when_its_holder_dies(tmp_path: Path) -> None:
    """flock: a holder killed with SIGKILL cannot leave the store locked."""
    store = make_store(tmp_path / "store")
    path = store / ".git" / "memory-mcp.lock"
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time\n"
                               f"fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(60)\n"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(Exception, match="store_busy"), StoreLock(path).hold(timeout=0.2):
            pass
        kill_tree(holder.pid)
        holder.wait()
        with StoreLock(path).hold(timeout=5):
            pass
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    assert os.path.exists(path)



def test_temp_file_of_a_writer_killed_mid_write_is_removed_by_the_next_process(tmp_path: Path) -> None:
    """Regression: a server killed between mkstemp and rename left `.name.md.xxxxxxxx.tmp` in memories/,
    untracked for ever (memory_files_dirty stayed true)."""
    store = make_store(tmp_path / "store")
    core = Store.open(store)
    r = core.remember("The stint flock roosts on the spit.")
    core.close()
    leftover = store / "memories" / f".{Path(r.path).name}.k3j_9xq2.tmp"
    leftover.write_text("---\nid: half a wri")
    nested = store / Path(r.path).parent / f".{Path(r.path).name}.w8m_2kd4.tmp"  # beside the file it was for
    nested.write_text("---\nid: half")
    person_tmp = store / "memories" / "draft.tmp"  # not ours: a different name shape
    person_tmp.write_text("mine\n")
    again = Store.open(store)
    try:
        st = again.status()
        assert not leftover.exists() and not nested.exists() and person_tmp.exists()
        assert st.unindexed == [] and (store / r.path).read_text().startswith("---\nid: ")
    finally:
        again.close()


@pytest.mark.parametrize("name", ["index.lock", "HEAD.lock", "refs/heads/main.lock"])
def test_every_lock_a_killed_commit_leaves_is_cleared(tmp_path: Path, name: str) -> None:
    """Regression: a commit killed after taking the ref lock left HEAD.lock, and every later write
    failed with [internal] 'cannot lock ref HEAD'."""
    store = make_store(tmp_path / "store")
    lock = store / ".git" / name
    lock.write_text("")
    old = time.time() - 5
    os.utime(lock, (old, old))
    core = Store.open(store)
    try:
        r = core.remember("The greenshank roost floods at spring tide.")
        assert r.path in git(store, "show", "--name-only", "--format=", "HEAD") and not lock.exists()
    finally:
        core.close()
