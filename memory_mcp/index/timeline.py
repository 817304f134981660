"""The local page's timeline (`memory-mcp ui`): memories by their last change, filtered in SQL, a
page at a time, with their counts by type; and the author names the versions held have. Queries
over an open index's connection, no git: the authors come from the index's `authors` table."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import NamedTuple

from memory_mcp.index.schema import ROW_COLUMNS, Row, to_row

_ORDER = " ORDER BY m.updated DESC, m.rowid DESC"


@dataclass(frozen=True)
class Where:
    """The SQL side of a timeline's filters (each empty one selects everything)."""

    types: tuple[str, ...] = ()
    states: tuple[str, ...] = ()
    trusts: tuple[str, ...] = ()
    entity: str = ""  # a canonical entity name, compared without case
    author: str = ""  # the git author's name of the version held, exactly

    def sql(self) -> tuple[str, list[object]]:
        """` WHERE ...` over `memories m` (or "") and its arguments."""
        parts: list[str] = []
        args: list[object] = []
        for column, values in (("type", self.types), ("state", self.states), ("trust", self.trusts)):
            if values:
                parts.append(f"m.{column} IN ({','.join('?' * len(values))})")
                args += sorted(set(values))
        if self.entity:
            parts.append("m.rowid IN (SELECT e.memory_rowid FROM entities e WHERE e.entity = ?)")
            args.append(self.entity.lower())
        if self.author:
            parts.append("m.path IN (SELECT f.path FROM files f JOIN authors a ON a.blob = f.blob WHERE a.name = ?)")
            args.append(self.author)
        return (" WHERE " + " AND ".join(parts) if parts else ""), args


class Candidate(NamedTuple):
    """What the filters SQL cannot apply read (a memory's version, for its standing; its globs)."""

    rowid: int
    id: str
    type: str
    blob: str
    paths: list[str]


def page(conn: sqlite3.Connection, where: Where, limit: int, offset: int) -> list[Row]:
    """The memories `where` selects, newest change first, `limit` of them from `offset`."""
    cond, args = where.sql()
    return [to_row(r) for r in conn.execute(f"SELECT {ROW_COLUMNS} FROM memories m{cond}{_ORDER} LIMIT ? OFFSET ?",
                                            (*args, limit, offset))]


def counts(conn: sqlite3.Connection, where: Where) -> dict[str, int]:
    """How many memories `where` selects, by type."""
    cond, args = where.sql()
    return dict(conn.execute(f"SELECT m.type, count(*) FROM memories m{cond} GROUP BY m.type ORDER BY m.type", args))


def candidates(conn: sqlite3.Connection, where: Where) -> list[Candidate]:
    """Every memory `where` selects, newest change first, with its version and globs."""
    cond, args = where.sql()
    return [Candidate(r[0], r[1], r[2], r[3], json.loads(r[4])) for r in conn.execute(
        f"SELECT m.rowid, m.id, m.type, coalesce(f.blob, ''), m.paths FROM memories m"
        f" LEFT JOIN files f ON f.path = m.path{cond}{_ORDER}", args)]


def author_names(conn: sqlite3.Connection) -> list[str]:
    """The names of everyone git says wrote a version of a memory file, sorted: the `authors` table
    alone (joining the files held took 109 ms of each timeline page at 100,000 memories)."""
    return [r[0] for r in conn.execute("SELECT name FROM authors GROUP BY name ORDER BY name")]


def added_per_week(conn: sqlite3.Connection, since: str) -> list[tuple[str, str, int]]:
    """(the Monday of the week, type, how many) of the memories created since `since` (ISO date)."""
    return [(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT date(substr(m.created, 1, 10), '-' || ((strftime('%w', substr(m.created, 1, 10)) + 6) % 7) || ' days')"
        " AS week, m.type, count(*) FROM memories m WHERE m.created >= ? GROUP BY week, m.type ORDER BY week",
        (since,))]


def by_author(conn: sqlite3.Connection) -> list[tuple[str, str, int]]:
    """(author name, e-mail, how many memories) of the versions held, the most first."""
    return [(r[0], r[1], r[2]) for r in conn.execute(
        "SELECT coalesce(a.name, ''), coalesce(a.email, ''), count(*) FROM memories m JOIN files f ON f.path = m.path"
        " LEFT JOIN authors a ON a.blob = f.blob GROUP BY a.name, a.email ORDER BY count(*) DESC, a.name")]


def by_client(conn: sqlite3.Connection) -> dict[str, int]:
    """How many memories each client wrote (the `client` of `written_by`; "" for none recorded)."""
    return dict(conn.execute("SELECT coalesce(json_extract(m.written_by, '$.client'), ''), count(*) FROM memories m"
                             " GROUP BY 1 ORDER BY count(*) DESC, 1"))


def alike(conn: sqlite3.Connection, limit: int) -> list[tuple[str, str]]:
    """Pairs of live memories (not deprecated, not superseded) with the same text once normalised,
    or the same title: (older id, newer id), at most `limit`. Grouped, never compared pair by pair."""
    pairs: dict[tuple[str, str], None] = {}
    for key in ("m.text_key", "lower(m.title)"):
        for (ids,) in conn.execute(
                f"SELECT group_concat(m.id, ' ') FROM memories m WHERE m.state != 'deprecated'"
                f" AND m.superseded_by IS NULL GROUP BY {key} HAVING count(*) > 1"):
            found = sorted(ids.split())
            for newer in found[1:]:
                pairs[(found[0], newer)] = None
    return list(pairs)[:limit]


def never_recalled(conn: sqlite3.Connection, cutoff: str, limit: int) -> tuple[int, list[Row]]:
    """Active memories neither changed nor recalled since `cutoff`: how many, and the oldest `limit`."""
    where = ("m.state = 'active' AND coalesce(m.updated, '') < ? AND coalesce(u.last_recalled, '') < ?")
    total = conn.execute(f"SELECT count(*) FROM memories m LEFT JOIN usage u ON u.id = m.id WHERE {where}",
                         (cutoff, cutoff)).fetchone()[0]
    rows = [to_row(r) for r in conn.execute(
        f"SELECT {ROW_COLUMNS} FROM memories m LEFT JOIN usage u ON u.id = m.id WHERE {where}"
        " ORDER BY m.updated, m.rowid LIMIT ?", (cutoff, cutoff, limit))]
    return int(total), rows
