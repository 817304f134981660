"""The words a message uses for what its reader does next: an agent calls tools (`memory_recall`,
`confirm=true`), a person at the command line runs commands (`memory-mcp recall`, `--confirm`).

A message is built once, where the failure or the finding is known, and names the operation
through `op` and `confirm_again`; the adapter that shows it chooses the reader with `speaking`
(the CLI does, for its whole command; the server and the hooks speak to agents, the default). So
there is one copy of each message and no rewriting of text on its way out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Literal

Reader = Literal["agent", "person"]
_reader: ContextVar[Reader] = ContextVar("memory_mcp_reader", default="agent")


@contextlib.contextmanager
def speaking(reader: Reader) -> Iterator[None]:
    """Messages built inside the block are worded for `reader`."""
    token = _reader.set(reader)
    try:
        yield
    finally:
        _reader.reset(token)


def op(name: str) -> str:
    """The operation `name` (recall, status, resolve...) as the reader calls it: the tool, or the
    CLI command of the same name."""
    return f"`memory-mcp {name}`" if _reader.get() == "person" else f"memory_{name}"


def confirm_again() -> str:
    """The sentence that says how to confirm an operation that needs it (a purge)."""
    if _reader.get() == "person":
        return "Run it again with --confirm to do it."
    return "Ask the user, then call again with confirm=true."
