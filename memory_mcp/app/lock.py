"""The store's inter-process write lock: one file under .git/, held with flock.

It lives in .git/ rather than the disposable .derived/, so deleting the index never drops a lock
another server process is holding."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memory_mcp.truth.errors import Busy

LOCK_TIMEOUT_SECONDS = 60.0


class StoreLock:
    """Re-entrant within a process (a thread lock plus a depth count), exclusive across processes."""

    def __init__(self, path: Path, timeout: float = LOCK_TIMEOUT_SECONDS) -> None:
        self.path = path
        self.timeout = timeout  # how long `hold` waits by default for another process
        self._thread_lock = threading.RLock()
        self._depth = 0
        self._fd: int | None = None

    @contextmanager
    def hold(self, timeout: float | None = None) -> Iterator[None]:
        with self._thread_lock:
            if self._depth == 0:
                self._acquire(self.timeout if timeout is None else timeout)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._release()

    def _acquire(self, timeout: float) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise Busy(f"another memory-mcp process held the store lock for {timeout:.0f}s; try again.") from None
                time.sleep(0.01)
        self._fd = fd

    def _release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
