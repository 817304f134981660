"""What a remote brings, checked after the fetch and before the merge: a sync refuses a branch that
would put into the store anything the store never takes from git, naming each offending path.

A link (`memories/` replaced by `../elsewhere` would send reads and new memories out of the store), a
submodule, a derived file (`.derived/index.sqlite3` would overwrite the local index), a name that is
not UTF-8 or holds control characters, a name the store gives its own temp files (the next call would
delete it), a file too big to be a memory."""

from __future__ import annotations

import re

from memory_mcp.truth.dictionary import DICTIONARY
from memory_mcp.truth.errors import SyncRefused
from memory_mcp.truth.files import MAX_FILE_BYTES, is_temp_name
from memory_mcp.truth.layout import DERIVED, MEMORIES
from memory_mcp.vcs.history import History

_FILE_MODES = {"100644", "100755"}
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_SHOWN = 20  # offending paths named in the error; the rest are counted


def check(history: History, theirs: str) -> None:
    """Raise SyncFailed naming each path of `theirs` the store would not take (see the module)."""
    found = [(path, why) for mode, size, raw in history.incoming_entries(theirs)
             for path, why in [_problem(mode, size, raw)] if why]
    if not found:
        return
    listed = "; ".join(f"{path}: {why}" for path, why in found[:_SHOWN])
    more = f"; and {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
    raise SyncRefused(f"the remote brings {len(found)} path(s) a memory store never takes from git: {listed}{more}. "
                     "Nothing was merged; remove them from the remote's branch, then run memory-mcp sync again.")


def _problem(mode: str, size: int | None, raw: bytes) -> tuple[str, str | None]:
    """(the path as shown, why the store refuses it, or None)."""
    try:
        path = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "backslashreplace"), "name is not UTF-8"
    parts = path.split("/")
    shown = _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", path)
    if parts[0] == DERIVED:
        return shown, f"derived files ({DERIVED}/) are rebuilt here, never taken from git"
    if any(p.lower() == ".git" for p in parts):
        return shown, "a .git folder inside the store"
    if shown != path:
        return shown, "name holds control characters"
    if mode == "120000":
        return shown, "a symbolic link (it may lead out of the store)"
    if mode not in _FILE_MODES:
        return shown, "a submodule" if mode == "160000" else f"not a plain file (mode {mode})"
    if path == MEMORIES:
        return shown, f"{MEMORIES}/ must be a folder"
    if parts[0] == DICTIONARY and len(parts) > 1:
        return shown, f"{DICTIONARY} must be a file"
    if parts[0] == MEMORIES and is_temp_name(parts[-1]):
        return shown, "named like the temp files memory-mcp deletes"
    if size is not None and size > MAX_FILE_BYTES:
        return shown, f"{size:,} bytes, over the {MAX_FILE_BYTES:,} of a memory file"
    return shown, None
