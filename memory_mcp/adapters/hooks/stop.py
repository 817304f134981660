"""The Stop hook's note: at the end of a turn that edited files or ran commands and recorded no
memory, one line (once per session) saying that durable decisions can be remembered. It reads only
the transcript's tail, and only of a regular file."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from memory_mcp.adapters.hooks import state as hookstate

WORK_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit", "Bash"})
STOP_NOTE = ("memory-mcp: this session edited files or ran commands and recorded no memory. Durable "
             "decisions, preferences and gotchas (type knowledge) found in it can be recorded with the "
             "memory_remember tool; they are then recalled in later sessions.")
# The Stop hook reads this much of a transcript's end: the work it looks for is recent, and a whole
# transcript is unbounded (a transcript path naming a 2 GB file took 1.3 GB of memory).
TRANSCRIPT_TAIL = 4 * 1024 * 1024


def work_done(transcript: Path) -> tuple[int, bool]:
    """(edit, write and shell tool calls, whether memory_remember was called) in the last
    TRANSCRIPT_TAIL bytes of a transcript; nothing for what is not a regular file (a device, a pipe)."""
    calls, remembered = 0, False
    for line in _tail_lines(transcript, TRANSCRIPT_TAIL):
        if '"tool_use"' not in line:
            continue  # most lines are text; parsing only tool-use lines keeps a long transcript cheap
        with contextlib.suppress(ValueError):
            entry = json.loads(line)
            content = (entry.get("message") or {}).get("content")
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict) or block.get("type") != "tool_use":
                    continue
                name = str(block.get("name", ""))
                calls += name in WORK_TOOLS
                remembered = remembered or name.endswith("memory_remember")
    return calls, remembered


def _tail_lines(path: Path, limit: int) -> list[str]:
    """The whole lines among the last `limit` bytes of a regular file. Opened without blocking (a
    pipe would wait for a writer) and checked on the open descriptor (the path may be swapped)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return []
        start = max(st.st_size - limit, 0)
        os.lseek(fd, start, os.SEEK_SET)
        data = b""
        while len(data) < st.st_size - start and (chunk := os.read(fd, st.st_size - start - len(data))):
            data += chunk
    finally:
        os.close(fd)
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[1:] if start else lines  # a tail starts inside a line


def note(payload: dict[str, Any]) -> str:
    """At most once per session, after real work with no memory written: the note to give, else ""."""
    state = hookstate.SessionState(str(payload.get("session_id", "")))
    transcript = payload.get("transcript_path")
    if state.stop_noted or payload.get("stop_hook_active") or not transcript:
        return ""
    calls, remembered = work_done(Path(str(transcript)).expanduser())
    if calls < 3 or remembered:
        return ""
    state.stop_noted = True
    state.save()
    return STOP_NOTE
