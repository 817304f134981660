"""git's lock files as the store meets them: leftovers of a crash cleared, a person's git at work
recognised, and the person's index lock held the way git holds it while the server stages a commit.

No git runs here (history.py runs it): these are the files and processes around it."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
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


# A person's git holds index.lock for milliseconds (`git mv`, `git add`); one that holds it longer is
# waiting for its editor (`git commit`), and the commit of ours that waits for it is put off.
INDEX_WAIT_SECONDS = 1.0
# Times a commit stages its entries again onto the person's index, changed under it, before it does
# so holding their lock.
RESTAGE_TRIES = 20


class IndexHeld(Exception):
    """A person's git held their index lock past INDEX_WAIT_SECONDS: our commit is put off."""


class IndexStage:
    """A copy of the person's index that a commit stages into without holding their lock: once HEAD
    has moved, `take` holds their index lock (as git itself would) and `done` lets the copy replace
    their index. Their `git mv` or `git add` fails on a held index.lock (git does not wait for it), so
    it is held for a stat and a rename, not for the whole commit (the staging, the objects, the trees,
    the ref update: 94-219 of 3,100 `git mv` in a loop beside 20 remembers failed while it was).

    A change of theirs to the index after the copy was made is kept: `take` finds it and stages our
    entries onto a fresh copy of theirs instead. A `git commit` of theirs that starts between our
    ref update and `take` (a fraction of a millisecond) commits from an index without our new paths;
    the memory files stay, and the next call's recovery commits them again."""

    def __init__(self, git_dir: Path) -> None:
        self.index, self.lock, self.copy = git_dir / "index", git_dir / "index.lock", git_dir / STAGE_INDEX
        self.copy.unlink(missing_ok=True)
        self._seen = _stat(self.index)
        if self._seen is not None:
            copy_index(self.index, self.copy)
        self.held = False

    def take(self, restage: Callable[[Path], None]) -> None:
        """Hold the person's index lock with the copy up to date with their index (IndexHeld when a
        git of theirs keeps the lock past INDEX_WAIT_SECONDS). When their index changed since the
        copy was made, a fresh copy of it gets our paths' entries (`restage(fresh)` reads them from
        the copy) outside the lock, and the lock is tried again; after RESTAGE_TRIES, under it."""
        deadline = time.monotonic() + INDEX_WAIT_SECONDS
        for attempt in range(RESTAGE_TRIES + 1):
            if attempt == RESTAGE_TRIES:
                self._hold(deadline)
            seen = _stat(self.index)
            if seen != self._seen:
                fresh = self.copy.with_name(self.copy.name + ".fresh")
                fresh.unlink(missing_ok=True)
                if seen is not None:
                    copy_index(self.index, fresh)
                restage(fresh)
                os.replace(fresh, self.copy)
                self._seen = seen
            if not self.held:
                self._hold(deadline)
            if _stat(self.index) == self._seen:
                return
            if attempt < RESTAGE_TRIES:
                self._release()  # their git wrote the index meanwhile: restage outside the lock

    def _hold(self, deadline: float) -> None:
        while not self.held:
            try:
                os.close(os.open(self.lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                self.held = True
            except FileExistsError:
                if time.monotonic() > deadline:
                    raise IndexHeld(str(self.lock)) from None
                time.sleep(0.002)

    def _release(self) -> None:
        if self.held:
            self.lock.unlink(missing_ok=True)
            self.held = False

    def done(self, published: bool) -> None:
        """Let the copy replace the person's index when `published` (HEAD moved), and let go of it all."""
        try:
            if published and self.held and self.copy.exists():
                os.replace(self.copy, self.index)
        finally:
            self.copy.unlink(missing_ok=True)
            self._release()


def copy_index(index: Path, copy: Path) -> None:
    """Copy a git index file keeping its modification time. git trusts an entry whose stat data match
    the file unless the entry is as new as the index file itself ("racily clean": the file may have
    changed within the same second, and git compares whole seconds); a copy dated now made those
    entries look safely old, so a same-size edit within the second of the last commit was staged as
    the old blob and the person's index disagreed with the commit (`git status`: M)."""
    seen = index.stat()  # before the copy: an older time only makes more entries racy, never fewer
    shutil.copyfile(index, copy)
    os.utime(copy, ns=(seen.st_atime_ns, seen.st_mtime_ns))


def index_held(git_dir: Path) -> bool:
    """Whether a git holds the person's index lock now."""
    return (git_dir / "index.lock").exists()


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


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
