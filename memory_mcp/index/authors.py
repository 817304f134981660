"""Which version of each memory the index holds (its id and the git blob of its file) and who wrote
that version, with the subject of the commit that did (the `authors` table, filled from git by the
app layer): the facts a memory's standing and its provenance line are made of. Queries over an open
index's connection, no git."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import NamedTuple

from memory_mcp.index.sqlconn import chunks

AUTHORS_HEAD = "authors_head"  # index meta: the last commit whose authors the table holds
PERSON_EMAIL = "person_email"  # index meta: the e-mail this machine commits to the store with


class Version(NamedTuple):
    """One memory as the index holds it: where, which version, and who wrote that version ("" when
    no commit holds it yet)."""

    path: str
    id: str
    blob: str
    name: str
    email: str
    date: str  # the author date of that commit
    subject: str  # that commit's subject


_SELECT = ("SELECT m.path, m.id, f.blob, coalesce(a.name, ''), coalesce(a.email, ''),"
           " coalesce(a.date, ''), coalesce(a.subject, '') FROM memories m"
           " JOIN files f ON f.path = m.path LEFT JOIN authors a ON a.blob = f.blob")


def versions(conn: sqlite3.Connection, paths: Iterable[str] | None = None) -> dict[str, Version]:
    """The versions at `paths` (every memory when None), by path."""
    if paths is None:
        return {r[0]: Version(*r) for r in conn.execute(_SELECT)}
    out: dict[str, Version] = {}
    for chunk in chunks(list(dict.fromkeys(paths)), 500):
        out.update({r[0]: Version(*r) for r in conn.execute(
            f"{_SELECT} WHERE m.path IN ({','.join('?' * len(chunk))})", chunk)})
    return out


def add(conn: sqlite3.Connection, found: list[tuple[str, str, str, str, str]]) -> None:
    """Record (blob, name, email, date, subject) rows, oldest first: a blob keeps the first commit seen
    for it."""
    conn.executemany("INSERT OR IGNORE INTO authors(blob, name, email, date, subject) VALUES (?,?,?,?,?)", found)
