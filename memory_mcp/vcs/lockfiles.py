"""git's lock files as the store meets them: leftovers of a crash cleared, a person's git at work
recognised, and the person's index lock held the way git holds it while the server stages a commit.

No git runs here (history.py runs it): these are the files and processes around it."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

# A git lock older than this, found while we hold the store's write lock, is left by a crash.
STALE_GIT_LOCK_SECONDS = 60
# Where /proc shows no git process working in the store, a lock this old is left by a crash: git holds
# it for milliseconds (a killed server's commit must not fail every write for a minute).
UNOWNED_GIT_LOCK_SECONDS = 1.0
STAGE_INDEX = "memory-mcp.stage-index"


def clear_stale(locks: list[Path], root: Path) -> None:
    """Remove those of `locks` a crash left behind; never one while a git process works in `root`.

    Ages come from the file's mtime, which a clock set back (or a copied file) can put in the future:
    such a lock is timed by our own clock from when we first saw it. The wait is bounded either way."""
    can_see = Path("/proc").is_dir()
    grace = UNOWNED_GIT_LOCK_SECONDS if can_see else STALE_GIT_LOCK_SECONDS
    started = time.monotonic()
    while True:
        ages = [(lock, age) for lock in locks if (age := _age(lock)) is not None]
        if not ages or git_running_in(root):
            return
        waited = time.monotonic() - started
        ages = [(lock, age if age >= 0 else waited) for lock, age in ages]
        for lock, age in ages:
            if age > grace:
                lock.unlink(missing_ok=True)
        if not can_see or all(age > grace for _, age in ages) or waited > grace:
            return
        time.sleep(0.1)


@contextlib.contextmanager
def holding_index(git_dir: Path) -> Iterator[Path | None]:
    """Hold the person's index lock (`index.lock`) as git itself would, and yield a copy of their index
    to stage into; the copy replaces their index when the block ends without an exception. Yields None
    when another git holds the lock (a person's `git commit` waiting for its editor).

    While we hold the lock no `git commit` of theirs can start, so none can sweep up what we stage."""
    lock, index, copy = git_dir / "index.lock", git_dir / "index", git_dir / STAGE_INDEX
    try:
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        yield None
        return
    os.close(fd)
    try:
        copy.unlink(missing_ok=True)
        if index.exists():
            shutil.copyfile(index, copy)
        yield copy
        if copy.exists():
            os.replace(copy, index)
    finally:
        copy.unlink(missing_ok=True)
        lock.unlink(missing_ok=True)


def _age(path: Path) -> float | None:
    """Seconds since `path` was modified, or None when it does not exist."""
    try:
        return time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return None


def git_running_in(root: Path) -> bool:
    """Whether a git process is working in `root` (a person's `git commit` with its editor open
    holds the index lock for as long as they type).

    Read from /proc where there is one; elsewhere the lock's age alone decides."""
    proc = Path("/proc")
    if not proc.is_dir():
        return False
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "git":
                continue
            # Long-lived `git cat-file` helpers (GitPython's, in a server of an earlier version on the
            # same store) only read objects and never take the index lock.
            if (entry / "cmdline").read_bytes().split(b"\0")[1:2] == [b"cat-file"]:
                continue
            cwd = Path(os.readlink(entry / "cwd"))
        except (OSError, ValueError, IndexError):
            continue
        if cwd == root or root in cwd.parents:
            return True
    return False
