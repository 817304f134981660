"""The hooks' watchdog: a hook that runs too long ends with no output, before Claude Code's own
timeout would discard its output anyway after making the person wait."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    """Raise inside a hook that runs too long, so it ends with no output before Claude Code's own
    timeout (which would discard the output anyway, after making the person wait)."""
    if not hasattr(signal, "setitimer") or os.environ.get("MEMORY_MCP_HOOK_NO_WATCHDOG"):
        yield
        return

    def fire(signum: int, frame: object) -> None:
        raise _Timeout(f"hook ran over {seconds}s")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
