"""memory-mcp's log: the `memory_mcp` logger, with `logging` imported the first time something is
logged. A one-shot `memory-mcp remember` or `recall` that goes well logs nothing, and importing
logging (with traceback, string and textwrap, which it loads) took about 4 ms of its start.

`configure` says where records go and from which level; without `at_once` it is applied when the
first record is logged through `log`. A process that runs libraries logging through `logging`
themselves (the MCP SDK, the web server) configures at once, before they start."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import logging

NAME = "memory_mcp"
LEVELS = ("debug", "info", "warning", "error")
_pending: list[str] = []  # the level `configure` was given, until logging is loaded


def configure(level: str = "info", at_once: bool = True) -> None:
    """Log records of memory-mcp (and of the libraries it runs) to stderr from `level` on, one line
    each (stdout may carry the protocol): now when `at_once` or logging is loaded already, else when
    `log` is first used."""
    _pending[:] = [level]
    if at_once or "logging" in sys.modules:
        _apply()


def _apply() -> logging.Logger:
    import logging

    if _pending:
        logging.basicConfig(level=_pending.pop().upper(), format="memory-mcp %(levelname)s: %(message)s")
    return logging.getLogger(NAME)


class _Log:
    """Stands for the `memory_mcp` logger: loads logging (configured as `configure` said) when first used."""

    def __getattr__(self, name: str) -> Any:
        return getattr(_apply(), name)


log = cast("logging.Logger", _Log())
