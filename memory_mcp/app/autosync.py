"""Sync in the loop, never blocking it: a store with a git remote is pulled when a session starts and
pushed after writes and when a turn ends, each time by a detached `memory-mcp sync --background`
process that outlives the hook or server that started it.

- A hook or the server only starts the process (a fork and exec, no git, no network) and returns;
  the next prompt or session start tells what arrived (`syncrecord`).
- One background sync per store at a time: each holds `.git/memory-mcp-sync.lock`; a start while one
  runs does nothing (the running one pushes what is committed when it pushes).
- A sync is bounded (`BACKGROUND_LIMIT_SECONDS`); a merge it had started is undone when the limit
  ends it, and a push not done is done by the next start, which always pushes what is ahead.
- Only stores the person trusts (`consent`), checked again by the process itself: never a remote
  URL the person did not accept.
- `MEMORY_MCP_SYNC=off` turns it off; `memory-mcp sync` works as before either way.

Standard library only at the top: the hooks import it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memory_mcp.app import syncrecord
from memory_mcp.app.syncrecord import FAILED, OFFLINE, OK, REFUSED, SyncRecord
from memory_mcp.truth.identity import common_dir, git_dir
from memory_mcp.vcs.repo import read_head

if TYPE_CHECKING:
    import subprocess

    from memory_mcp.app.session import Session
    from memory_mcp.truth.options import Progress
    from memory_mcp.vcs.sync import SyncResult

LOCK_FILE = "memory-mcp-sync.lock"
BACKGROUND_LIMIT_SECONDS = 120
# Writes come in bursts (an agent remembers three things in a row): push once the store is quiet.
PUSH_DELAY_SECONDS = float(os.environ.get("MEMORY_MCP_SYNC_DELAY") or 15)
_REMOTE = re.compile(r'^\s*\[remote\s+"', re.M)


def enabled() -> bool:
    """Whether syncs start by themselves (`MEMORY_MCP_SYNC=off` says no)."""
    return os.environ.get("MEMORY_MCP_SYNC", "").strip().lower() not in ("off", "0", "no", "false")


def _common(root: Path) -> Path | None:
    own = git_dir(root)
    return common_dir(own) if own is not None else None


def has_remote(root: Path) -> bool:
    """Whether the store's git config names a remote (read from the file, no git process)."""
    common = _common(root)
    try:
        return common is not None and bool(_REMOTE.search((common / "config").read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError):
        return False


def head(root: Path) -> str:
    """The store's HEAD commit from git's files ("" when unreadable)."""
    own = git_dir(root)
    return read_head(own, common_dir(own)) if own is not None else ""


@contextlib.contextmanager
def _sync_lock(root: Path) -> Iterator[bool]:
    """Hold the store's background-sync lock if it is free; yields whether this process holds it."""
    common = _common(root)
    if common is None:
        yield False
        return
    fd = os.open(common / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def start(root: Path, why: str) -> subprocess.Popen[bytes] | None:
    """Start a detached background sync of the store at `root` (see the module), unless syncs are
    off, the store has no remote, or one is running; the process started, else None."""
    if not enabled() or not has_remote(root):
        return None
    with _sync_lock(root) as free:
        if not free:
            return None
    import subprocess  # here: a SessionStart on a store without a remote must not pay for its import

    argv = [sys.executable, "-c", "import sys; from memory_mcp.cli import main; sys.exit(main())",
            "sync", "--background", why, "--store", str(root)]
    # At the lowest priority: the session starting beside it comes first (a nice process gets the CPU
    # the others leave), so the hook's own time stays its own (benchmarks/bench_sync.py).
    nice = shutil.which("nice")
    if nice is not None:
        argv = [nice, "-n", "19", *argv]
    # A session of its own: the hook's or server's process group ending (Ctrl-C, the agent closing)
    # does not end the push.
    return subprocess.Popen(argv, cwd=root, start_new_session=True, close_fds=True, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def start_if_moved(root: Path, why: str) -> subprocess.Popen[bytes] | None:
    """`start`, only when HEAD moved since the last sync recorded (something to push)."""
    last = syncrecord.latest(root)
    if last is not None and last.outcome == OK and last.head == head(root):
        return None
    return start(root, why)


def run_background(root: Path, why: str) -> int:
    """The detached process's work: one bounded sync of a trusted store, recorded; never raises."""
    from memory_mcp.app import consent

    with _sync_lock(root) as free:
        if not free or not consent.is_trusted(root):
            return 0

        def out_of_time(signum: int, frame: object) -> None:
            raise TimeoutError(f"the background sync ran over {BACKGROUND_LIMIT_SECONDS}s and was stopped")

        signal.signal(signal.SIGALRM, out_of_time)
        signal.alarm(BACKGROUND_LIMIT_SECONDS)
        try:
            from memory_mcp.app.session import Session
            from memory_mcp.app.storeroot import open_root

            session = Session(open_root(root, create=False), lock_timeout=30)
            try:
                sync(session, why)
            finally:
                session.close()
        except Exception as e:  # noqa: BLE001 - a detached process has nobody to raise to: it is recorded
            from memory_mcp.truth.errors import SyncFailed

            if not isinstance(e, SyncFailed):  # a failed sync recorded itself
                _record(root, SyncRecord(_now(), why, FAILED, message=str(e)[:500]))
        finally:
            signal.alarm(0)
    return 0


def sync(session: Session, why: str, allow_deletions: bool = False, progress: Progress | None = None) -> SyncResult:
    """`Store.sync`: one sync, recorded with what came (new memories by author, changed, deleted),
    or with why it failed, was refused or could not reach the remote."""
    import functools

    from memory_mcp.app import access
    from memory_mcp.truth.errors import SyncFailed, SyncOffline, SyncRefused
    from memory_mcp.vcs.sync import run as sync_remote

    session.check_writable()
    history = session.history
    before = history.head_seen()

    def settle(merged: bool) -> None:
        # Progress is shown for the reconcile after a merge, the one that may index many files.
        report = session.reconcile(session.index(), progress=progress if merged else None)
        if merged and progress:
            progress(report.scanned, report.scanned)

    try:
        # The network parts run outside the store lock; the merge and reconciles run inside it.
        result = sync_remote(history, functools.partial(access.new_path, session.root), settle,
                             session.lock.hold, allow_deletions)
    except SyncFailed as e:
        outcome = REFUSED if isinstance(e, SyncRefused) else OFFLINE if isinstance(e, SyncOffline) else FAILED
        rescue = re.search(r"refs/memory-mcp/rescue/[^/\s]+", str(e))
        _record(session.root, SyncRecord(_now(), why, outcome, message=str(e)[:500],
                                         rescue=rescue.group(0) if rescue else ""))
        raise
    record = SyncRecord(_now(), why, OK, pulled=result.pulled, pushed=result.pushed, deleted=len(result.deleted),
                        conflicts=len(result.conflicts) + len(result.rival_superseders), rescue=result.rescue,
                        head=history.head_seen())
    after = record.head
    if before and after != before:
        _count_arrivals(session, before, after, record)
    _record(session.root, record)
    return result


def _count_arrivals(session: Session, before: str, after: str, record: SyncRecord) -> None:
    """Fill `record.arrived` (new memory files by author) and `record.changed` from the commits the
    sync brought."""
    history = session.history
    held = set(history.memory_files(before))
    latest: dict[str, tuple[str, str]] = {}
    for status, path, name in history.arrivals(before, after):
        latest.setdefault(path, (status, name))  # newest first: the last writer of each path
    for path, (status, name) in latest.items():
        if status == "D":
            continue  # counted by the sync itself (result.deleted)
        if path in held:
            record.changed += 1
        else:
            record.arrived[name] = record.arrived.get(name, 0) + 1


def _record(root: Path, record: SyncRecord) -> None:
    with contextlib.suppress(OSError):
        syncrecord.add(root, record)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Pusher:
    """The server's push after writes: each call that moved HEAD restarts a quiet timer
    (`PUSH_DELAY_SECONDS`); when it runs out, a background sync starts. Closing the server with a
    push pending starts it at once (it outlives the server)."""

    def __init__(self, root: Path, delay: float = PUSH_DELAY_SECONDS) -> None:
        self.root = root
        self.delay = delay
        self._seen = head(root)
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def poke(self) -> None:
        """Told after every call: schedule a push when HEAD moved."""
        now = head(self.root)
        if now == self._seen:
            return
        self._seen = now
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.delay, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
        proc = start(self.root, "after writes")
        if proc is not None:
            proc.wait()  # reaped here, not left a zombie of a long-lived server

    def close(self) -> None:
        """Stop the timer; a push it was waiting to start starts now."""
        with self._lock:
            pending, self._timer = self._timer, None
        if pending is not None:
            pending.cancel()
            start(self.root, "after writes")


def when_moved(poke: Callable[[], None] | None, pusher: Pusher) -> Callable[[], None]:
    """`Session.after_call` telling both the embedder's `poke` (if any) and the pusher."""
    def after() -> None:
        if poke is not None:
            poke()
        pusher.poke()
    return after
