"""What memory_status lists, read from the index in SQL rather than from every row in Python: the
counts the `tallies` triggers keep, and the first few memories due for review, worth distilling,
withheld by feedback, or without an id of their own (at 10,000 memories, building every row to
filter it took 220 ms of each status)."""

from __future__ import annotations

import sqlite3

from .schema import EPISODES, PROVISIONAL, REVIEW, ROW_COLUMNS, TALLIED, WITHHELD, Row, to_row


def tallies(conn: sqlite3.Connection) -> dict[str, dict[str, int]]:
    """{"state": {"active": n, ...}, "type": {...}, "trust": {...}}, values with no memory left out."""
    out: dict[str, dict[str, int]] = {c: {} for c in TALLIED}
    for field, value, n in conn.execute("SELECT field, value, n FROM tallies WHERE n > 0 ORDER BY field, value"):
        out[field][value] = n
    return out


def _rows(conn: sqlite3.Connection, where: str, params: tuple[object, ...], order: str, limit: int) -> list[Row]:
    return [to_row(r) for r in conn.execute(
        f"SELECT {ROW_COLUMNS} FROM memories m LEFT JOIN usage u ON u.id = m.id WHERE {where}"
        f" ORDER BY {order} LIMIT ?", (*params, limit))]


# Each condition starts with its partial index's own (schema.py), verbatim, so SQLite uses the index;
# its columns are unqualified, which is unambiguous: `usage` has none of them.
def review_due(conn: sqlite3.Connection, today: str, limit: int) -> list[Row]:
    """Active memories whose `review_after` day is `today` (YYYY-MM-DD) or before."""
    return _rows(conn, f"{REVIEW} AND substr(m.review_after, 1, 10) <= ?", (today,), "m.rowid", limit)


def distill_candidates(conn: sqlite3.Connection, cutoff: str, limit: int) -> list[Row]:
    """Active episodes neither changed nor recalled since `cutoff`, the oldest first."""
    return _rows(conn, f"{EPISODES} AND coalesce(m.updated, '') < ? AND coalesce(u.last_recalled, '') < ?",
                 (cutoff, cutoff), "m.updated, m.rowid", limit)


def withheld(conn: sqlite3.Connection, limit: int) -> list[Row]:
    """Memories whose feedback is low enough to keep them out of recall (ranking.withheld)."""
    return _rows(conn, WITHHELD, (), "m.rowid", limit)


def provisional(conn: sqlite3.Connection, limit: int) -> list[Row]:
    """Memories indexed under an id derived from their path: the file has none of its own."""
    return _rows(conn, PROVISIONAL, (), "m.rowid", limit)

