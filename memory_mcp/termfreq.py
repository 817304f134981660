"""How many memories hold each stemmed term, kept in the index as rows change.

The conflict gate weighs shared terms by their rarity and picks the subject's rarest terms to search
for. FTS5 can tell a term's document count only by reading the term's whole posting list (fts5vocab),
so a common term cost more the bigger the store (0.1-0.5 ms a term at 10,000 memories, and a gate
looks up a few hundred terms); a table kept with the rows answers in one B-tree lookup a term.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from .sqlconn import chunks


def _terms(*stemmed: str) -> list[tuple[str]]:
    """The distinct terms of texts as `fts_stem` holds them (whitespace-joined `textproc.terms`)."""
    return [(t,) for t in dict.fromkeys(" ".join(stemmed).split())]


def add(conn: sqlite3.Connection, title: str, body: str) -> None:
    """Count a memory whose stemmed title and body are these."""
    conn.executemany("INSERT INTO term_df(term, doc) VALUES (?, 1) ON CONFLICT(term) DO UPDATE SET doc = doc + 1",
                     _terms(title, body))


def remove(conn: sqlite3.Connection, rowid: int) -> None:
    """Stop counting the memory `rowid`, before its `fts_stem` row is deleted."""
    row = conn.execute("SELECT title, body FROM fts_stem WHERE rowid = ?", (rowid,)).fetchone()
    if row:
        terms = _terms(*row)
        conn.executemany("UPDATE term_df SET doc = doc - 1 WHERE term = ?", terms)
        conn.executemany("DELETE FROM term_df WHERE term = ? AND doc <= 0", terms)


def doc_freq(conn: sqlite3.Connection, terms: Iterable[str]) -> dict[str, int]:
    """term -> how many memories hold it (0 when none does)."""
    wanted = list(dict.fromkeys(terms))
    out = dict.fromkeys(wanted, 0)
    for chunk in chunks(wanted, 500):
        out.update(conn.execute(f"SELECT term, doc FROM term_df WHERE term IN ({','.join('?' * len(chunk))})", chunk))
    return out
