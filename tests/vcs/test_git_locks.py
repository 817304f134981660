"""git's locks and merges as a person's own git and a killed sync leave them: a sync marks its merge
so the next call undoes an interrupted one (never a person's own), a leftover or future-dated
index.lock neither spins nor prints a traceback, a write made while a person's `git commit` waits in
its editor is done and committed after theirs (which never sweeps it up), and loose objects stay
bounded after many writes."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import EXE, git, make_store, open_server, server_env
from reliability_support import kill_tree, needs_capsh, unprivileged

from memory_mcp.app.store import Store
from memory_mcp.vcs.packing import PACK_AT_LOOSE

pytestmark = pytest.mark.anyio


def _diverged(tmp_path: Path) -> tuple[Store, Store]:
    """Clones `a` and `b` of one remote, each with a different edit of one memory's text: the
    remote has b's, so a's next sync is a real merge with a conflict to settle."""
    a = Store.open(tmp_path / "a")
    mem = a.remember("The gannet colony has 400 pairs.")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    git(a.root, "remote", "add", "origin", str(bare))
    a.sync()
    subprocess.run(["git", "clone", "-q", str(bare), str(tmp_path / "b")], check=True)
    b = Store.open(tmp_path / "b")
    b.update(mem.id, content="The gannet colony has 450 pairs.")
    b.sync()
    a.update(mem.id, content="The gannet colony has 380 pairs.")
    return a, b


def _sync(store: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), "sync", "--store", str(store)], capture_output=True, text=True,
                          env=server_env(store, tmp_path), timeout=120)


def test_sync_killed_inside_its_merge_leaves_a_store_the_next_call_can_write(tmp_path: Path) -> None:
    a, _ = _diverged(tmp_path)
    head = git(a.root, "rev-parse", "HEAD")
    started = tmp_path / "merge-started"
    # A merge driver that takes its time, so the kill lands inside git's merge (as 3 of 30 did).
    git(a.root, "config", "merge.slow.driver", f"touch {started}; sleep 60")
    (a.root / ".git" / "info" / "attributes").write_text("*.md merge=slow\n")
    proc = subprocess.Popen([str(EXE), "sync", "--store", str(a.root)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=server_env(a.root, tmp_path))
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        kill_tree(proc.pid)
        proc.wait()
    (a.root / ".git" / "info" / "attributes").unlink()
    done = subprocess.run([str(EXE), "status", "--store", str(a.root)], capture_output=True, text=True,
                          env=server_env(a.root, tmp_path), timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert not (a.root / ".git" / "MERGE_HEAD").exists() and git(a.root, "rev-parse", "HEAD") == head
    Store.open(a.root).remember("The puffin burrows are counted in June.")
    done = _sync(a.root, tmp_path)
    assert done.returncode == 0 and "conflict" in done.stdout, done.stderr


def test_a_merge_a_killed_sync_left_is_undone_and_a_persons_merge_is_not(tmp_path: Path) -> None:
    a, _ = _diverged(tmp_path)
    head = git(a.root, "rev-parse", "HEAD")
    git(a.root, "fetch", "-q", "origin")
    theirs = git(a.root, "rev-parse", "origin/main").strip()
    # What a sync killed after git's merge and before its commit leaves: its marker and the merge.
    history = Store.open(a.root).history
    history.mark_sync_merge(theirs)
    _persons_merge(a.root, theirs)
    Store.open(a.root).remember("The shag roost is on the north stack.")
    assert not (a.root / ".git" / "MERGE_HEAD").exists()
    assert git(a.root, "rev-parse", "HEAD^") == head

    # A person's own merge (no marker) is theirs to finish: writes wait, sync refuses, nothing is undone.
    _persons_merge(a.root, theirs)
    done = _sync(a.root, tmp_path)
    assert done.returncode != 0 and "merge is in progress" in done.stderr and "Traceback" not in done.stderr
    assert (a.root / ".git" / "MERGE_HEAD").exists()


def test_a_sync_killed_inside_its_merge_commit_leaves_a_store_the_next_call_can_write(tmp_path: Path) -> None:
    # `git commit` moves HEAD to the merge and then removes MERGE_HEAD: a sync killed between the two
    # (1 kill in 36) left MERGE_HEAD with HEAD no longer where the sync started, so the undo did
    # not recognise its merge and every write answered [repo_busy] until the person aborted it.
    a, _ = _diverged(tmp_path)
    head = git(a.root, "rev-parse", "HEAD").strip()
    git(a.root, "fetch", "-q", "origin")
    theirs = git(a.root, "rev-parse", "origin/main").strip()
    Store.open(a.root).history.mark_sync_merge(theirs)
    _persons_merge(a.root, theirs)
    git(a.root, "checkout", "--theirs", "--", "memories")
    git(a.root, "add", "-A")
    git(a.root, "-c", "user.name=Ada", "-c", "user.email=a@b", "commit", "-q", "--no-edit")
    merged = git(a.root, "rev-parse", "HEAD").strip()
    (a.root / ".git" / "MERGE_HEAD").write_text(theirs + "\n")  # what the kill left of git's merge state
    done = subprocess.run([str(EXE), "remember", "--store", str(a.root), "The shag roost is on the north stack."],
                          capture_output=True, text=True, env=server_env(a.root, tmp_path), timeout=60)
    assert done.returncode == 0, done.stderr
    assert not (a.root / ".git" / "MERGE_HEAD").exists()
    assert git(a.root, "rev-parse", "HEAD^").strip() == merged  # the merge kept, the write after it
    assert git(a.root, "rev-parse", f"{merged}^1", f"{merged}^2").split() == [head, theirs]


def _persons_merge(store: Path, theirs: str) -> None:
    """`git merge --no-commit`, stopped on its conflict as a person's would be."""
    subprocess.run(["git", "-C", str(store), "-c", "user.name=Ada", "-c", "user.email=a@b", "merge", "--no-commit",
                    "--no-ff", "-q", theirs], capture_output=True)
    assert (store / ".git" / "MERGE_HEAD").exists()


def test_sync_with_a_leftover_index_lock_and_a_real_merge_prints_no_traceback(tmp_path: Path) -> None:
    a, b = _diverged(tmp_path)
    lock = a.root / ".git" / "index.lock"
    lock.write_bytes(b"")
    old = time.time() - 120
    os.utime(lock, (old, old))  # a crash's leftover
    done = _sync(a.root, tmp_path)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert not (a.root / ".git" / "MERGE_HEAD").exists() and not lock.exists()
    assert "conflict" in done.stdout


async def test_an_index_lock_dated_in_the_future_does_not_make_a_write_spin(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    lock = store / ".git" / "index.lock"
    lock.write_bytes(b"")
    ahead = time.time() + 3600
    os.utime(lock, (ahead, ahead))  # a clock set back since, or a copied file
    async with open_server(store) as s:
        r = await s.call("memory_remember", content="The storm petrel visits at night.")
        assert git(store, "log", "-1", "--format=%B").count(f"Memory-Id: {r['id']}") == 1
    assert not lock.exists()


def _editor_waiting_for(go: Path, tmp_path: Path) -> Path:
    editor = tmp_path / "editor.sh"
    editor.write_text(f'#!/bin/sh\nwhile [ ! -e "{go}" ]; do sleep 0.05; done\necho "my own change" > "$1"\n')
    editor.chmod(0o755)
    return editor


async def test_a_write_while_a_persons_commit_waits_is_done_and_never_swept_into_theirs(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    go = tmp_path / "go"
    editor = _editor_waiting_for(go, tmp_path)
    async with open_server(store) as s:
        await s.call("memory_status")
        (store / "README.md").write_text("the person's edit\n")
        # `commit -a` holds index.lock while its editor is open (a plain `git commit` lets it go).
        proc = subprocess.Popen(["git", "-C", str(store), "-c", "user.name=Ada", "-c", "user.email=a@b",
                                 "-c", f"core.editor={editor}", "commit", "-a"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while not (store / ".git" / "index.lock").exists():
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.02)
            r = await s.call("memory_remember", content="The fulmar nests on the cliff ledge.")
            assert (await s.call("memory_read", id=r["id"]))["id"] == r["id"]
            go.write_text("")
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                kill_tree(proc.pid)
                proc.wait()
        assert git(store, "show", "--name-only", "--format=%s", "HEAD").split() == ["my", "own", "change",
                                                                                   "README.md"]
        await s.call("memory_status")  # the next call commits the write
    assert f"Memory-Id: {r['id']}" in git(store, "log", "-1", "--format=%B")
    assert r["path"] in git(store, "show", "--name-only", "--format=", "HEAD")
    assert git(store, "status", "--porcelain").strip() == ""


def _loose(root: Path) -> int:
    counts = dict(line.split(": ") for line in git(root, "count-objects", "-v").splitlines())
    return int(counts["count"])


def _settled_loose(root: Path, bound: int) -> int:
    deadline = time.monotonic() + 60  # the last pack runs in the background
    while _loose(root) > bound and time.monotonic() < deadline:
        time.sleep(0.2)
    return _loose(root)


@pytest.mark.slow  # hundreds of writes
def test_loose_objects_stay_bounded_after_many_writes(tmp_path: Path) -> None:
    core = Store.open(tmp_path / "store")
    writes = PACK_AT_LOOSE // 4 * 3  # about 4 loose objects each (blob, two trees, commit) when nothing packs
    for i in range(writes):
        core.remember(f"Seabird count {i}: {i * 7} razorbills on ledge {i % 13}.")
    core.close()
    assert _settled_loose(core.root, 2 * PACK_AT_LOOSE) <= 2 * PACK_AT_LOOSE, writes


@pytest.mark.slow  # hundreds of one-write processes' worth of stores
def test_loose_objects_stay_bounded_when_each_write_is_its_own_process(tmp_path: Path) -> None:
    # A script running `memory-mcp remember` in a loop: each write opens the store, commits once and
    # exits, so a count of commits kept per process never reached its mark (1,749 loose objects).
    root = tmp_path / "store"
    Store.open(root).close()
    writes = PACK_AT_LOOSE // 4 * 3
    for i in range(writes):
        store = Store.open(root)
        store.remember(f"Puffin burrow {i}: {i * 3} chicks on slope {i % 11}.")
        store.close()
    assert _settled_loose(root, 2 * PACK_AT_LOOSE) <= 2 * PACK_AT_LOOSE, writes


@needs_capsh
def test_unwritable_git_objects_are_store_unwritable_and_the_commit_is_recovered(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    notes = tmp_path / "notes.txt"
    notes.write_text("The eider ducks winter in the sound.\n")
    objects = store / ".git" / "objects"
    modes = {p: p.stat().st_mode for p in [objects, *objects.rglob("*")]}
    for p in modes:
        p.chmod(modes[p] & ~0o222)
    try:
        done = subprocess.run(unprivileged([str(EXE), "import", "paste", str(notes), "--store", str(store)]),
                              capture_output=True, text=True, env=server_env(store, tmp_path), timeout=60)
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
    assert done.returncode != 0 and "[store_unwritable]" in done.stderr and "Traceback" not in done.stderr, done.stderr
    [written] = [p.relative_to(store).as_posix() for p in (store / "memories").rglob("*.md")]
    assert written not in git(store, "ls-files")
    done = subprocess.run([str(EXE), "status", "--store", str(store)], capture_output=True, text=True,
                          env=server_env(store, tmp_path), timeout=60)
    assert done.returncode == 0, done.stderr
    assert written in git(store, "ls-files")
