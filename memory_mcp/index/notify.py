"""File events from watchfiles' Rust watcher: the one module that touches watchfiles' private API.

watch.py needs what watchfiles' public `watch()` does not give: a watch that keeps gathering events
in its own thread between calls, taken with a 0 ms step and no debounce (see design-notes, Watcher).
That is `watchfiles._rust_notify.RustNotify`, which is private and may change in any release; the
pin in pyproject.toml and tests/index/test_notify_contract.py say which releases it is known to work with.
"""

from __future__ import annotations

import threading
from typing import Any, Literal

# (change, absolute path); change is watchfiles.Change's value: 1 added, 2 modified, 3 deleted.
Events = set[tuple[int, str]]
# What `Notify.events` returns instead of events: Ctrl-C arrived, `stop` was set, or time ran out.
Interrupted = Literal["signal", "stop", "timeout"]


class Notify:
    """A running watch on some paths (each a folder, watched recursively, or a file).

    The constructor raises OSError (FileNotFoundError: a path is missing) or RuntimeError when the
    watch cannot start; `events` raises RuntimeError once the watch has died (watchfiles'
    WatchfilesRustInternalError, e.g. after a file name that is not UTF-8) or was closed."""

    def __init__(self, paths: list[str]) -> None:
        # Imported here: the server imports watch.py at start, before it needs a watch.
        from watchfiles._rust_notify import RustNotify

        # (watch_paths, debug, force_polling, poll_delay_ms, recursive, ignore_permission_denied)
        self._rust: Any = RustNotify(paths, False, False, 300, True, False)

    @property
    def polling(self) -> bool:
        """Whether watchfiles fell back to polling (no native events here): its scans do not keep the
        order of changes, which catching up relies on."""
        return repr(self._rust).startswith("RustNotify(Poll")

    def events(self, debounce_ms: int, step_ms: int, timeout_ms: int,
               stop: threading.Event | None = None) -> Events | Interrupted:
        """Wait up to `timeout_ms` (0: for ever) for events; once one came, gather more until `step_ms`
        passes without one or `debounce_ms` is up, and return them all."""
        got: Events | Interrupted = self._rust.watch(debounce_ms, step_ms, timeout_ms, stop)
        return got

    def close(self) -> None:
        """Stop the watch's thread; `events` raises RuntimeError afterwards."""
        self._rust.close()
