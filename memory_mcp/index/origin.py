"""Nothing derived is taken from git: an index is served only when it was built on this machine for
this store.

The index is a cache of the files, so an index file that arrives with the store (a `.derived/`
someone force-added and committed, an archive of a whole store) could hold text that is in no
file, and would be served as it is. So each index carries a claim, `built_for` in its meta table,
that must equal the claim kept beside the store's lock, under `.git/` (which no clone copies) or in
the user's cache folder for a store they cannot write: a random nonce, this machine's id and the
store's real path. An index whose claim is missing or different is rebuilt from the files before it
answers anything (as git rebuilds `.git/index` from the tree rather than trusting one it was given).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from memory_mcp.index.db import Index

META_KEY = "built_for"
REBUILT_KEY = "rebuilt_because"  # why the last foreign index was replaced, for status
_MACHINE_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")


def machine() -> str:
    """This machine's id (systemd's machine-id), else its host name."""
    for name in _MACHINE_FILES:
        with contextlib.suppress(OSError):
            value = Path(name).read_text(encoding="ascii").strip()
            if value:
                return value
    import socket  # only where there is no machine id: 2 ms of every hook's start otherwise

    return socket.gethostname() or "unknown-host"


def expected(root: Path, claim_file: Path) -> str | None:
    """The claim an index of the store at `root` must carry: the one kept in `claim_file` when it
    names this machine and this store's real path; None when there is none (a clone, an archive
    unpacked elsewhere, an index built by an earlier version)."""
    try:
        claim = claim_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    parts = claim.split(" ", 2)
    if len(parts) != 3 or parts[1] != machine() or parts[2] != _path_text(root):
        return None
    return claim


def is_ours(index: Index, root: Path, claim_file: Path) -> bool:
    """Whether `index` was built on this machine for the store at `root`."""
    claim = expected(root, claim_file)
    return claim is not None and index.get_meta(META_KEY) == claim


def claim(index: Index, root: Path, claim_file: Path, because: str = "") -> None:
    """Mark `index` (empty, or just rebuilt) as built here for the store at `root`; `because` is
    kept for status when it replaced an index that came from elsewhere."""
    import secrets  # only when an index is built, not on a hook's read

    value = f"{secrets.token_hex(16)} {machine()} {_path_text(root)}"
    tmp = claim_file.with_name(f".{claim_file.name}.{os.getpid()}.tmp")
    tmp.write_text(value + "\n", encoding="utf-8")
    os.replace(tmp, claim_file)
    with index.transaction():
        index.set_meta(META_KEY, value)
        if because:
            index.set_meta(REBUILT_KEY, because)


def _path_text(root: Path) -> str:
    """The store's real path as text the claim file and SQLite can hold: a path's bytes that are not
    UTF-8 are written as \\xNN escapes (a UTF-8 path is its own text)."""
    return os.fsencode(root.resolve()).decode("utf-8", errors="backslashreplace")
