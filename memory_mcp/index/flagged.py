"""The memories whose text tries to steer the model (`truth/injection.py`): the findings the index
keeps for each file, written when a file is indexed (a write, an import, a sync's reconcile, a hand
edit's) and read by status, recall and the hooks. Derived like every row: a rebuild finds them again."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from memory_mcp.index.sqlconn import chunks

if TYPE_CHECKING:  # the rules load only where a file is scanned, never on a hook's read
    from memory_mcp.truth.injection import Flag


class Flagged(NamedTuple):
    """One finding of one indexed memory, with its id."""

    path: str
    id: str
    kind: str
    line: int
    reason: str


def record(conn: sqlite3.Connection, path: str, flags: Iterable[Flag]) -> None:
    """Keep the findings of the file at `path` (none clears them)."""
    conn.execute("DELETE FROM flagged WHERE path=?", (path,))
    conn.executemany("INSERT INTO flagged(path, kind, line, reason) VALUES (?, ?, ?, ?)",
                     [(path, f.kind, f.line, f.reason) for f in flags])


def listed(conn: sqlite3.Connection, limit: int = -1) -> list[Flagged]:
    """Every finding of an indexed memory, by path and line (the first `limit`; -1: all)."""
    return [Flagged(*r) for r in conn.execute(
        "SELECT f.path, m.id, f.kind, f.line, f.reason FROM flagged f JOIN memories m ON m.path = f.path"
        " ORDER BY f.path, f.line, f.kind LIMIT ?", (limit,))]


def kinds(conn: sqlite3.Connection, paths: Iterable[str]) -> dict[str, list[str]]:
    """The kinds found in each of `paths` that has any, in line order."""
    out: dict[str, list[str]] = {}
    for chunk in chunks(list(dict.fromkeys(paths)), 500):
        for path, kind in conn.execute(f"SELECT path, kind FROM flagged WHERE path IN ({','.join('?' * len(chunk))})"
                                       " ORDER BY path, line, rowid", chunk):
            out.setdefault(path, []).append(kind)
    return out


def of(conn: sqlite3.Connection, path: str) -> list[Flag]:
    """The findings kept for the file at `path`, by line."""
    from memory_mcp.truth.injection import Flag

    return [Flag(*r) for r in conn.execute("SELECT kind, line, reason FROM flagged WHERE path=? ORDER BY line, rowid",
                                           (path,))]
