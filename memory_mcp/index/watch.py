"""The store watcher: file events tell each call what changed, instead of a walk of the whole store.

A `Watcher` keeps a watchfiles watch (the Rust `notify` crate: inotify on Linux) on memories/,
.derived/watch/ and dictionary.md. Its events pile up in watchfiles' own thread between calls, so an
idle server costs nothing. Each reconcile first catches up: it creates a marker file in
.derived/watch/ and takes events until the marker's own event comes through. Not .derived/ itself:
every page SQLite writes to the index there was an event for watchfiles' thread, which competed
with the writer (the first call after 10,000 hand-added files: 4.8-5.1 s watched, 4.3-4.4 s not). One inotify queue delivers a watch's
events in the order the changes happened, so by then every change made before the call is in hand,
however fresh; the call then looks only at the paths those events name.

When the watcher cannot vouch for the files it has no event for, the plan says "walk", and the
reconcile walks everything with the stat gate, as it does with no watcher at all: right after the
watch starts (changes made before it are not events), when a watched folder or the dictionary was
replaced (the watch follows the old one), when catching up fails or times out (watchfiles may drop
events it was about to return on a timeout), when so many events came at once that the kernel's
queue may have overflowed (watchfiles drops that notice), when the watch died, and every
`SWEEP_SECONDS` as a safety net for what no event reports (edits over a network file system).

The server uses one per store, under the store lock, on every call. `memory-mcp watch` runs the
same object in the foreground and reconciles as soon as files change (`watch`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from memory_mcp.index.notify import Events, Notify
from memory_mcp.truth.dictionary import DICTIONARY
from memory_mcp.truth.layout import MEMORIES

log = logging.getLogger("memory_mcp")

WATCH_ENV = "MEMORY_MCP_WATCH"
# The folder under .derived/ that holds the catch-up markers, watched in place of .derived/ itself.
MARKS = "watch"
# The marker's event comes back in tens of microseconds; a quarter second only on a machine so
# loaded that the stat gate is the better bet anyway.
CATCH_UP_SECONDS = 0.25
# Safety sweep: bounds how long a change no event reported stays unseen. A walk of 10k files costs
# tens of milliseconds, so once in five minutes is a rounding error on any call pattern.
SWEEP_SECONDS = 300.0
# inotify queues at most fs.inotify.max_queued_events (16,384 by default) and drops the rest;
# watchfiles swallows the overflow notice. A quarter of that many events between two calls means a
# burst big enough to have overflowed, so walk instead of trusting the events.
BURST_EVENTS = 4096
QUIET_MS = 300  # `memory-mcp watch`: wait this long for an editor's save to settle
_POLL_SECONDS = 2.0  # `memory-mcp watch` without a working watch: stat-gate walks this often


def enabled(flag: bool | None = None) -> bool:
    """Whether a server keeps a watcher: `flag` when given (a command-line option), else
    $MEMORY_MCP_WATCH (0 or 1); on when neither says."""
    if flag is not None:
        return flag
    return os.environ.get(WATCH_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


@dataclass(frozen=True)
class Plan:
    """What the next reconcile has to look at."""

    paths: frozenset[str]  # store-relative paths under memories/ that changed since the last reconcile
    walk: bool  # the watcher cannot vouch for the other files: walk them all with the stat gate
    why: str  # why a walk ("" when none)
    made: float  # time.monotonic() when the plan was made
    generation: int  # which watch the plan came from (each start is a new one)


class Watcher:
    """A watch on one store. Not thread-safe on its own: the store calls `plan` and `settled`
    under its lock, and `wait` is for the single thread of `memory-mcp watch`."""

    def __init__(self, root: Path, derived: Path) -> None:
        self.root = root
        self._memories = MEMORIES
        self._derived = derived
        self._marks = derived / MARKS
        self._roots = (root / MEMORIES, self._marks, root / DICTIONARY)
        self._prefix = str(root) + os.sep
        self._notify: Notify | None = None  # its thread gathers events between calls
        self._identity: tuple[tuple[int, int] | None, ...] = ()
        self._generation = 0
        self._primed = False  # a walk that began after this watch started has been settled
        self._paths: set[str] = set()
        self._second_look: set[str] = set()  # folders walked once, to walk again on the next call
        self._events = 0  # events taken since the last reconcile
        self._last_walk = 0.0
        self._retry_at = 0.0
        self._root_event = False
        self._marker = f"watch-{os.getpid()}-{os.urandom(4).hex()}"
        self._seq = 0
        self.why_off = "not started"

    @property
    def running(self) -> bool:
        return self._notify is not None

    # ------------------------------------------------------------------ the store's side
    def plan(self) -> Plan:
        """Catch up with every change made so far and say what the next reconcile must look at."""
        now = time.monotonic()
        if self._notify is not None and self._identity != self._identify():
            self._stop("a watched folder or the dictionary was replaced", retry_after=0)
        if self._notify is None and time.monotonic() >= self._retry_at:
            self._start()
        if self._notify is not None and self._catch_up() and self._root_event:
            self._root_event = False
            if self._identity != self._identify():
                self._stop("a watched folder or the dictionary was replaced", retry_after=0)
                self._start()
        why = (self.why_off if self._notify is None
               else "the watch just started" if not self._primed
               else f"{self._events} events at once" if self._events >= BURST_EVENTS
               else "safety sweep" if now - self._last_walk >= SWEEP_SECONDS
               else "")
        return Plan(frozenset(self._paths), bool(why), why, now, self._generation)

    def settled(self, plan: Plan, walked: bool, folders: Collection[str] = ()) -> None:
        """The reconcile of `plan` is in the index. A complete walk vouches for every other file.

        `folders` were walked because events named them. Each is walked once more on the next
        call: the watch on a new folder is added only after the batch of events that announced it,
        so a file created in it just after this walk may have no event of its own."""
        self._paths -= plan.paths
        self._second_look = set(folders) - self._second_look
        self._paths |= self._second_look
        self._events = 0
        if walked:
            self._last_walk = plan.made
            self._primed = self._notify is not None and plan.generation == self._generation

    def close(self) -> None:
        """Stop watching for good."""
        self._stop("closed", retry_after=float("inf"))

    # ------------------------------------------------------------------ `memory-mcp watch`
    def wait(self, stop: threading.Event | None = None, quiet_ms: int = QUIET_MS) -> bool:
        """Block until memory files or the dictionary change (True) or `stop` is set (False).
        Ctrl-C raises KeyboardInterrupt."""
        while not (stop and stop.is_set()):
            if self._notify is None:
                # Nothing to wait on: let the caller walk with the stat gate now and then.
                if stop is None:
                    time.sleep(_POLL_SECONDS)
                    return True
                return not stop.wait(_POLL_SECONDS)
            try:
                # No timeout: a watchfiles timeout may drop events that arrive as it returns.
                got = self._notify.events(quiet_ms, 50, 0, stop)
            except RuntimeError as e:
                self._stop(f"the watch stopped: {e}", retry_after=_retry_after(e))
                continue
            if got == "signal":
                raise KeyboardInterrupt
            if got == "stop":
                return False
            if got == "timeout":  # not asked for (timeout 0): nothing came, wait again
                continue
            if self._take(got, None)[1]:
                return True
        return False

    # ------------------------------------------------------------------ inside
    def _identify(self) -> tuple[tuple[int, int] | None, ...]:
        """(device, inode) of each watched root: a different one means it was replaced."""
        out: list[tuple[int, int] | None] = []
        for path in self._roots:
            try:
                st = os.stat(path)
                out.append((st.st_dev, st.st_ino))
            except OSError:
                out.append(None)
        return tuple(out)

    def _start(self) -> None:
        now = time.monotonic()
        memories = self._roots[0]
        if not memories.is_dir() or not self._derived.is_dir():
            self.why_off, self._retry_at = "memories/ or .derived/ is missing", now
            return
        try:
            self._marks.mkdir(exist_ok=True)
        except OSError as e:
            self._stop(f"cannot make {self._marks.name}/ for the watch markers: {e.strerror}", SWEEP_SECONDS)
            return
        if _native_events_unreliable():
            self._stop("file events do not see every edit here (WSL, or WATCHFILES_FORCE_POLLING)", float("inf"))
            return
        if not all(_utf8(str(p)) for p in self._roots):
            # watchfiles takes and gives paths as UTF-8 text only; the stat gate reads bytes.
            self._stop("the store's path is not UTF-8, which file events cannot name", float("inf"))
            return
        # Identify before watching: a root replaced in between then shows as a mismatch, not as
        # a watch silently following the old folder.
        identity = self._identify()
        try:
            notify = Notify([str(p) for p, i in zip(self._roots, identity, strict=True) if i])
        except (OSError, RuntimeError) as e:
            self._stop(f"cannot watch: {e}", retry_after=SWEEP_SECONDS)
            return
        if notify.polling:
            # watchfiles fell back to polling, whose scans do not keep the order of changes.
            notify.close()
            self._stop("no native file events on this system", float("inf"))
            return
        self._notify, self._identity = notify, identity
        self._generation += 1
        self._primed = False
        self._root_event = False
        self.why_off = ""

    def _stop(self, why: str, retry_after: float) -> None:
        if self._notify is not None:
            if why != "closed":
                # A restart (retry at once) is routine; a watch that failed is worth a warning.
                log.log(logging.INFO if retry_after == 0 else logging.WARNING,
                        "file watcher off (%s); the stat gate finds changes meanwhile", why)
            self._notify.close()
            self._notify = None
        self._primed = False
        self.why_off = why
        self._retry_at = time.monotonic() + retry_after

    def _catch_up(self) -> bool:
        """Take every event up to now: write a marker and take events until its own comes.
        False (and the watch is restarted or stopped) when that fails."""
        notify = self._notify
        if notify is None:
            return False
        self._seq += 1
        marker = os.path.join(self._marks, f"{self._marker}-{self._seq}")
        try:
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except OSError as e:
            self._stop(f"cannot write the watch marker: {e.strerror}", retry_after=SWEEP_SECONDS)
            return False
        try:
            deadline = time.monotonic() + CATCH_UP_SECONDS
            while True:
                left_ms = int((deadline - time.monotonic()) * 1000)
                # Step 0: the marker's event is microseconds away, and a 1 ms step would cost more
                # than the rest of a no-op call.
                got = notify.events(10, 0, max(left_ms, 1)) if left_ms > 0 else "timeout"
                if got == "signal":
                    raise KeyboardInterrupt
                if isinstance(got, str):
                    self._stop("catching up with file events timed out", retry_after=0)
                    self._start()
                    return False
                if self._take(got, marker)[0]:
                    return True
        except RuntimeError as e:  # WatchfilesRustInternalError, or a closed watch
            self._stop(f"the watch stopped: {e}", retry_after=_retry_after(e))
            return False
        finally:
            with contextlib.suppress(OSError):
                os.unlink(marker)

    def _take(self, batch: Events, marker: str | None) -> tuple[bool, bool]:
        """Record a batch of events: (the marker came, a memory file or the dictionary changed)."""
        self._events += len(batch)
        found = relevant = False
        for _change, path in batch:
            if path == marker:
                found = True
            elif path.startswith(self._prefix):
                rel = path[len(self._prefix):].replace(os.sep, "/")
                if rel.startswith(self._memories + "/"):
                    self._paths.add(rel)
                    relevant = True
                elif rel in (self._memories, DICTIONARY):
                    self._root_event = relevant = True
                elif path == str(self._marks):
                    self._root_event = True
        return found, relevant


def _native_events_unreliable() -> bool:
    """WSL's Windows drives send no inotify events for edits made from Windows, and a person who
    sets WATCHFILES_FORCE_POLLING says native events do not work for them."""
    forced = os.environ.get("WATCHFILES_FORCE_POLLING", "").strip().lower()
    if forced and forced not in ("false", "disable", "disabled"):
        return True
    import platform  # here: a one-shot command that never watches does not load it

    return "microsoft" in platform.uname().release.lower()


def _retry_after(e: RuntimeError) -> float:
    """How long a watch that stopped on `e` stays off. An event for a file name that is not UTF-8
    ends watchfiles' watch ("Unable to decode path"): restarted at once (its first call walks, and
    the walk lists that file as unindexed), or one such file kept the watcher off for good."""
    return 0.0 if "decode path" in str(e) else SWEEP_SECONDS


def _utf8(text: str) -> bool:
    """Whether a path Python decoded from the file system is valid UTF-8 (no escaped bytes in it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
