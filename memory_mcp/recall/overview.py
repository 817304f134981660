"""What memory_status and the session digest list, read from the index in SQL rather than from every
row in Python: the counts the `tallies` triggers keep; the first few memories due for review, worth
distilling, withheld by feedback, or without an id of their own (at 10,000 memories, building every
row to filter it took 220 ms of each status); and the digest's memories."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import datetime

from memory_mcp.index.schema import EPISODES, PROVISIONAL, REVIEW, ROW_COLUMNS, TALLIED, WITHHELD, Row, to_row
from memory_mcp.recall import ranking
from memory_mcp.truth import lifecycle
from memory_mcp.truth.model import State
from memory_mcp.truth.standing import DROPPED

# A memory version's place by its standing (`standing.rank`), for each (id, blob) given, in order.
Rank = Callable[[list[tuple[str, str]]], list[int]]

_SHOWN = "m.state = ? AND m.feedback > ?"  # what recall and the digest return: active, not withheld


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


def digest(conn: sqlite3.Connection, limit: int, now: datetime, rank: Rank | None = None) -> list[Row]:
    """The session digest's memories, at most `limit`, active and not withheld: preferences, then
    decisions, each by rank (the score of a perfect text match; index order among equals), then the
    other types newest first. The first two are ranked from five columns, the rest sorted and cut by
    SQLite, and only the rows shown are built: building every row was most of a digest at 10,000
    memories (SessionStart).

    `rank` gives each memory version (id, git blob) its place among its type by standing
    (`standing.rank`: the person's own, then accepted, then not accepted; `standing.DROPPED`, a
    rejected one, is left out); without it every memory ranks alike."""
    first = ranking.DIGEST_FIRST
    marks = ",".join("?" * len(first))
    shown = (State.ACTIVE.value, lifecycle.WITHHOLD_AT)
    found = conn.execute(
        "SELECT m.rowid, m.type, m.trust, m.updated, m.feedback, coalesce(u.recall_count, 0), m.id,"
        " coalesce(f.blob, '') FROM memories m LEFT JOIN usage u ON u.id = m.id LEFT JOIN files f ON f.path = m.path"
        f" WHERE {_SHOWN} AND m.type IN ({marks})", (*shown, *first)).fetchall()
    scored = sorted((first.index(kind), -ranking.score(1.0, trust, State.ACTIVE.value, updated, count, feedback, now),
                     rowid, mem_id, blob)
                    for rowid, kind, trust, updated, feedback, count, mem_id, blob in found)
    picked: list[int] = []
    for at in range(len(first)):
        if len(picked) < limit:
            picked += _best([(rowid, mem_id, blob) for kind, _, rowid, mem_id, blob in scored if kind == at],
                            limit - len(picked), rank)
    if len(picked) < limit:
        rest = conn.execute(
            f"SELECT m.rowid, m.id, coalesce(f.blob, '') FROM memories m LEFT JOIN files f ON f.path = m.path"
            f" WHERE {_SHOWN} AND m.type NOT IN ({marks})"
            " ORDER BY coalesce(nullif(m.updated, ''), nullif(m.created, ''), '') DESC, m.id DESC"
            + ("" if rank else " LIMIT ?"), (*shown, *first, *(() if rank else (limit - len(picked),)))).fetchall()
        picked += _best(rest, limit - len(picked), rank)  # newest first within each standing
    by_rowid = {r.rowid: r for r in _rows(conn, f"m.rowid IN ({','.join('?' * len(picked))})", tuple(picked),
                                          "m.rowid", len(picked))} if picked else {}
    return [by_rowid[i] for i in picked]


_OWN_PLACE = 0  # `standing.rank` of the person's own: no version comes before it


def _best(ordered: list[tuple[int, str, str]], need: int, rank: Rank | None) -> list[int]:
    """The rowids of the first `need` of `ordered` ((rowid, id, blob), best first) by standing, then in
    that order, rejected ones left out. Standings are asked a batch at a time and no more once `need`
    of the person's own are known: no later version can come before those (asking for every
    candidate's standing was a fifth of a SessionStart at 10,000 memories)."""
    if rank is None:
        return [rowid for rowid, *_ in ordered[:need]]
    known: list[tuple[int, int, int]] = []
    own = 0
    step = max(2 * need, 64)
    for start in range(0, len(ordered), step):
        batch = ordered[start:start + step]
        for at, (row, place) in enumerate(zip(batch, rank([(mem_id, blob) for _, mem_id, blob in batch]),
                                              strict=True)):
            if place < DROPPED:
                known.append((place, start + at, row[0]))
                own += place == _OWN_PLACE
        if own >= need:
            break
    return [rowid for *_, rowid in sorted(known)[:need]]
