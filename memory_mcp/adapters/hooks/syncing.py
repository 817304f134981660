"""The hooks' part in sync (app/autosync.py): SessionStart starts a background pull and push of each
store of the session that has a remote, Stop starts a push when the store moved since its last
sync, and the next SessionStart or prompt tells what the last sync brought, once. Starting is a
fork and exec: no git, no network, nothing waited for."""

from __future__ import annotations

import contextlib
from pathlib import Path

from memory_mcp.adapters import framing
from memory_mcp.adapters.hooks import state as hookstate


def start(roots: dict[str, Path], why: str, only_moved: bool = False) -> None:
    """Start a background sync of each store of `roots` (trusted: `admitted` chose them) that has a
    remote; with `only_moved`, of those whose HEAD moved since their last sync."""
    from memory_mcp.app import autosync

    for name, root in roots.items():
        try:
            if only_moved:
                autosync.start_if_moved(root, why)
            else:
                autosync.start(root, why)
        except OSError as e:  # no process to start (out of memory, a full process table): next time
            hookstate.log(f"could not start a background sync of the {name} store: {e}")


def news(roots: dict[str, Path]) -> str:
    """What the latest sync of each store brought and no hook told yet, one line each (the names in
    it come from a repository, so the lines are shown as data lines are)."""
    from memory_mcp.app import syncrecord

    lines = []
    for name, root in roots.items():
        text = ""
        with contextlib.suppress(OSError):
            text = syncrecord.take_news(root)
        if text:
            lines.append(framing.data_line(f"memory-mcp: the {name} store: {text}"))
    return "\n".join(lines)
