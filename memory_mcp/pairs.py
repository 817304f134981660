"""The open conflict pairs, kept in the index as rows change.

A pair is open while one side lists the other in `conflicts_with`, both are indexed, neither is
deprecated or superseded, and neither lists the other in `distinct_from` (the rules of the files:
design.md section 5). Whether a pair is open depends on both rows, so each change of a memory
recomputes the pairs it is on, from the links in both directions; a recall then counts a table
instead of reading every listed pair (0.4-1.1 s at 10,000 memories written through the tools).
"""

from __future__ import annotations

import sqlite3

_OPEN = """SELECT min(a.id, o.id), max(a.id, o.id)
    FROM conflict_links l JOIN memories a ON a.rowid = l.memory_rowid JOIN memories o ON o.id = l.other_id
    WHERE {side} AND a.id != o.id AND a.state != 'deprecated' AND o.state != 'deprecated'
      AND coalesce(a.superseded_by, '') = '' AND coalesce(o.superseded_by, '') = ''
      AND (a.distinct_from = '[]' OR NOT EXISTS (SELECT 1 FROM json_each(a.distinct_from) d WHERE d.value = o.id))
      AND (o.distinct_from = '[]' OR NOT EXISTS (SELECT 1 FROM json_each(o.distinct_from) d WHERE d.value = a.id))"""
# The pairs one memory is on: those its own links make, and those others' links to it make.
_REFRESH = (f"INSERT OR IGNORE INTO open_pairs(lo, hi) {_OPEN.format(side='a.id = ?1')}"
            f" UNION {_OPEN.format(side='l.other_id = ?1')}")


def link(conn: sqlite3.Connection, rowid: int, others: list[str]) -> None:
    """Record the ids a memory's `conflicts_with` lists."""
    conn.executemany("INSERT INTO conflict_links(memory_rowid, other_id) VALUES (?, ?)",
                     [(rowid, other) for other in dict.fromkeys(others)])


def unlink(conn: sqlite3.Connection, rowid: int) -> None:
    conn.execute("DELETE FROM conflict_links WHERE memory_rowid = ?", (rowid,))


# Past this many changed memories in one transaction (a reindex, a sync, an import), recomputing
# every pair in one statement costs less than recomputing each memory's (about 0.3 ms each).
REBUILD_AT = 500


def refresh(conn: sqlite3.Connection, mem_ids: set[str]) -> None:
    """Recompute the open pairs the memories `mem_ids` are on, after their rows were written or
    removed."""
    if len(mem_ids) > REBUILD_AT:
        conn.execute("DELETE FROM open_pairs")
        conn.execute(f"INSERT OR IGNORE INTO open_pairs(lo, hi) {_OPEN.format(side='1')}")
        return
    for mem_id in mem_ids:
        conn.execute("DELETE FROM open_pairs WHERE lo = ?1 OR hi = ?1", (mem_id,))
        conn.execute(_REFRESH, (mem_id,))


def listed(conn: sqlite3.Connection) -> list[tuple[str, str, str, str]]:
    """(id, other id, title, other title) of each open pair, the side that lists the other first
    (when both do, the earlier indexed), in the order the listing sides were indexed."""
    out = []
    for lo, hi, lo_rowid, hi_rowid, lo_title, hi_title, lo_lists in conn.execute(
            "SELECT p.lo, p.hi, a.rowid, b.rowid, a.title, b.title, EXISTS (SELECT 1 FROM conflict_links l"
            " WHERE l.memory_rowid = a.rowid AND l.other_id = p.hi)"
            " FROM open_pairs p JOIN memories a ON a.id = p.lo JOIN memories b ON b.id = p.hi"):
        lo_first = lo_lists and (lo_rowid < hi_rowid or not _lists(conn, hi_rowid, lo))
        out.append((lo_rowid if lo_first else hi_rowid,
                    (lo, hi, lo_title, hi_title) if lo_first else (hi, lo, hi_title, lo_title)))
    return [pair for _, pair in sorted(out)]


def _lists(conn: sqlite3.Connection, rowid: int, other_id: str) -> bool:
    return conn.execute("SELECT 1 FROM conflict_links WHERE memory_rowid = ? AND other_id = ?",
                        (rowid, other_id)).fetchone() is not None


def count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM open_pairs").fetchone()[0])
