"""What the Claude Code hooks remember between calls: per session, which memories were already put
in front of the model and whether the Stop note was given; per project, which auto-memory notes
were imported as which memory.

It lives on this machine only, beside the plugin's data (`$CLAUDE_PLUGIN_DATA`) or in the user's
cache folder, never in a store: it is about one person's sessions, and a store is shared through git.
Standard library only, because every hook process imports it before anything else.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from pathlib import Path
from typing import Any

PRUNE_AFTER_SECONDS = 7 * 24 * 3600


def state_dir() -> Path:
    """$CLAUDE_PLUGIN_DATA/state under the plugin, else $XDG_CACHE_HOME/memory-mcp, else ~/.cache/memory-mcp."""
    plugin = os.environ.get("CLAUDE_PLUGIN_DATA")
    if plugin:
        return Path(plugin) / "state"
    cache = os.environ.get("XDG_CACHE_HOME")
    return (Path(cache) if cache else Path.home() / ".cache") / "memory-mcp"


def log(line: str) -> None:
    """One line in the hook log: a hook never prints its errors into the session, so they go here."""
    with contextlib.suppress(OSError):
        folder = state_dir()
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "hooks.log", "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {line}\n")


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict[str, Any]) -> None:
    """Write atomically: two hooks of one session may run at once (a prompt while Stop finishes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


class SessionState:
    """One Claude Code session's hook state: the ids injected so far and whether Stop spoke."""

    def __init__(self, session_id: str, folder: Path | None = None) -> None:
        # The id comes from the hook input: keep it to a safe file name whatever it holds.
        safe = re.sub(r"[^A-Za-z0-9_-]", "_", session_id or "no-session")[:80]
        self.path = (folder or state_dir()) / "sessions" / f"{safe}.json"
        data = _read(self.path)
        self.injected: list[str] = [str(i) for i in data.get("injected", [])]
        self.stop_noted = bool(data.get("stop_noted", False))

    def seen(self, mem_id: str) -> bool:
        return mem_id in self.injected

    def add(self, ids: list[str]) -> None:
        self.injected += [i for i in ids if i not in self.injected]

    def reset(self, ids: list[str]) -> None:
        """After a compaction or /clear the model no longer has what was injected: start over."""
        self.injected = list(dict.fromkeys(ids))

    def save(self) -> None:
        _write(self.path, {"injected": self.injected, "stop_noted": self.stop_noted})


def first_time(key: str, folder: Path | None = None) -> bool:
    """Whether `key` (a notice about one store) was not given before on this machine; it counts as
    given from now on. A notice the person has read once is not repeated at every session start."""
    path = (folder or state_dir()) / "notices.json"
    seen = _read(path).get("seen", {})
    if not isinstance(seen, dict) or key in seen:
        return False
    seen[key] = int(time.time())
    _write(path, {"seen": seen})
    return True


def prune(folder: Path | None = None, now: float | None = None) -> int:
    """Delete session files untouched for 7 days; returns how many went."""
    sessions = (folder or state_dir()) / "sessions"
    cutoff = (now or time.time()) - PRUNE_AFTER_SECONDS
    gone = 0
    with contextlib.suppress(OSError):
        for path in sessions.iterdir():
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    gone += 1
    return gone


class ImportLedger:
    """Which auto-memory note (by file name) was imported into a store as which memory, and the
    sha256 of the text imported, so a changed note is recognised and its new import supersedes the old."""

    def __init__(self, store: Path, folder: Path | None = None) -> None:
        key = hashlib.sha256(os.fsencode(store)).hexdigest()[:16]
        self.path = (folder or state_dir()) / "auto-memory" / f"{key}.json"
        self.notes: dict[str, dict[str, str]] = _read(self.path).get("notes", {})

    def save(self) -> None:
        _write(self.path, {"notes": self.notes})
