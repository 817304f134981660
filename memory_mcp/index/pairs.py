"""The open conflict pairs, kept in the index as rows change.

A pair is open while one side lists the other in `conflicts_with`, both are indexed, neither is
archived, deprecated or superseded (a retired memory contradicts nothing; restored, its pairs open again), and neither lists the other in `distinct_from` (the rules of the files:
design.md section 5). Whether a pair is open depends on both rows, so each change of a memory
recomputes the pairs it is on, from the links in both directions; a recall then counts a table
instead of reading every listed pair (0.4-1.1 s at 10,000 memories written through the tools).
"""

from __future__ import annotations

import sqlite3

_OPEN = """SELECT min(a.id, o.id), max(a.id, o.id)
    FROM conflict_links l JOIN memories a ON a.rowid = l.memory_rowid JOIN memories o ON o.id = l.other_id
    WHERE {side} AND a.id != o.id AND a.state = 'active' AND o.state = 'active'
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


# Each open pair with the side that lists the other first (when both do, the earlier indexed), in
# the order the listing sides were indexed: the order a person saw them raised.
_LISTED = """WITH p AS (
    SELECT p.lo, p.hi, a.rowid AS lo_row, b.rowid AS hi_row, a.title AS lo_title, b.title AS hi_title,
      EXISTS (SELECT 1 FROM conflict_links l WHERE l.memory_rowid = a.rowid AND l.other_id = p.hi) AS lo_lists,
      EXISTS (SELECT 1 FROM conflict_links l WHERE l.memory_rowid = b.rowid AND l.other_id = p.lo) AS hi_lists
    FROM open_pairs p JOIN memories a ON a.id = p.lo JOIN memories b ON b.id = p.hi),
  q AS (SELECT *, lo_lists AND (lo_row < hi_row OR NOT hi_lists) AS lo_first FROM p)
SELECT CASE WHEN lo_first THEN lo ELSE hi END AS first, CASE WHEN lo_first THEN hi ELSE lo END,
       CASE WHEN lo_first THEN lo_title ELSE hi_title END, CASE WHEN lo_first THEN hi_title ELSE lo_title END
FROM q ORDER BY CASE WHEN lo_first THEN lo_row ELSE hi_row END, first LIMIT ?"""


def listed(conn: sqlite3.Connection, limit: int = -1) -> list[tuple[str, str, str, str]]:
    """(id, other id, title, other title) of the open pairs, the first `limit` (-1: all), in the
    order their listing sides were indexed, sorted by SQLite so a short list costs no Python per pair."""
    return [tuple(r) for r in conn.execute(_LISTED, (limit,))]


def count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM open_pairs").fetchone()[0])
