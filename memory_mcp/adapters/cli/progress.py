"""A progress bar on stderr for long work started from the CLI (reindex, import, sync).

It draws only on a terminal: piped output and logs stay clean. The MCP server reports the same
(done, total) pairs as MCP progress notifications instead.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Callable as `bar(done, total)`; redraws at most ten times a second. Use as a context manager."""

    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool | None = None,
                 width: int = 30) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.width = width
        self._drawn_at = 0.0
        self._shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        if done < total and now - self._drawn_at < 0.1:
            return
        self._drawn_at = now
        filled = self.width * min(done, total) // total
        bar = "#" * filled + "." * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {done}/{total}")
        self.stream.flush()
        self._shown = True

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
