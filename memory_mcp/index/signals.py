"""The index's raw search signals, fused by recall/query.py: FTS5 matches, term counts, LIKE
needles and neighbours in time, over the rows a `RowFilter` admits. A part of `Index` (it inherits
`SearchSignals`), kept apart so db.py stays about writing and reading rows."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence

from memory_mcp.index import termfreq
from memory_mcp.index.schema import (
    FTS_TABLES,
    HIDDEN,
    ROW_COLUMNS,
    Row,
    RowFilter,
    to_row,
)
from memory_mcp.index.sqlconn import chunks


class SearchSignals:
    """Searching the index, as methods of `Index`."""

    conn: sqlite3.Connection
    _hidden: set[int] | None
    # Index's
    _check_caches: Callable[[], None]
    _flush_fts: Callable[[], None]
    _flush_terms: Callable[[], None]

    def fts(self, table: str, match: str, limit: int, where: RowFilter | None = None,
            within: Sequence[int] | None = None, among: str | None = None) -> list[tuple[int, float]]:
        """(rowid, bm25) for an FTS5 MATCH expression; bm25 is negative, lower is better. With
        `where`, only the memories it admits, so the limit counts results the caller can use.

        Two ways to score fewer rows, each with bm25 as over all matches of `match` (FTS5 still
        walks every match, but bm25 is most of a query's cost when it matches thousands): `within`,
        only those rowids; `among`, only the rows that also match that MATCH expression."""
        if table not in FTS_TABLES:
            raise ValueError(f"unknown FTS table {table}")
        self._flush_fts()
        weights = ", ".join(str(w) for w in FTS_TABLES[table][1])
        # The unary + keeps SQLite from handing these to FTS5 as rowid lookups: it would run the
        # whole query, bm25's statistics included, once per rowid (10x slower).
        narrow, narrow_args = "", []
        if within is not None:
            narrow += f" AND +{table}.rowid IN (SELECT value FROM json_each(?))"
            narrow_args.append(json.dumps(list(within)))
        if among is not None:
            narrow += f" AND +{table}.rowid IN (SELECT rowid FROM {table} WHERE {table} MATCH ?)"
            narrow_args.append(among)
        select = f"SELECT {table}.rowid, bm25({table}, {weights}) AS r FROM {table}"
        if where is not None and where.hides_only():
            rows = self._fts_visible(f"{select} WHERE {table} MATCH ?{narrow} ORDER BY r LIMIT ?",
                                     [match, *narrow_args], limit)
            if rows is not None:
                return rows
        join, cond, args = where.against(f"{table}.rowid") if where else ("", "", [])
        return list(self.conn.execute(f"{select}{join} WHERE {table} MATCH ?{cond}{narrow} ORDER BY r LIMIT ?",
                                      (match, *args, *narrow_args, limit)))

    def _fts_visible(self, sql: str, args: list[object], limit: int) -> list[tuple[int, float]] | None:
        """The best `limit` matches of the usual recall, ranked over all rows and the hidden ones
        dropped here; None when too many of the best were hidden (the caller filters in SQL then).
        Excluding them in SQL built the list of hidden rowids for every query: +0.5 ms at 10,000
        memories and +6 ms at 100,000 (10,028 hidden) on the perf harness's stem queries."""
        hidden = self.hidden_rowids()
        fetch = limit + min(len(hidden), limit)
        got = self.conn.execute(sql, (*args, fetch)).fetchall()
        rows = [(r, s) for r, s in got if r not in hidden]
        # Exact either way: every match left out ranks below every one fetched.
        return rows[:limit] if len(rows) >= limit or len(got) < fetch else None

    def hidden_rowids(self) -> set[int]:
        """The rowids of the memories the usual recall leaves out (`schema.HIDDEN`)."""
        self._check_caches()
        if self._hidden is None:
            self._hidden = {r for (r,) in self.conn.execute(f"SELECT rowid FROM memories WHERE {HIDDEN}")}
        return self._hidden

    def doc_freq(self, terms: Iterable[str]) -> dict[str, int]:
        """term -> how many memories hold it in `fts_stem` (0 when none does)."""
        self._flush_terms()  # inside a transaction that changed rows
        return termfreq.doc_freq(self.conn, terms)

    def matches_any(self, table: str, match: str) -> bool:
        """Whether any memory matches the FTS5 expression `match` in `table`: it stops at the first
        match, unranked, so a term every memory holds costs no more than a rare one."""
        if table not in FTS_TABLES:
            raise ValueError(f"unknown FTS table {table}")
        self._flush_fts()
        return self.conn.execute(f"SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT 1", (match,)).fetchone() is not None

    def stem_texts(self, rowids: list[int]) -> dict[int, str]:
        """rowid -> the stemmed terms of its title and body, as the fts_stem table holds them."""
        self._flush_fts()
        out: dict[int, str] = {}
        for chunk in chunks(rowids, 500):
            marks = ",".join("?" * len(chunk))
            for rid, title, body in self.conn.execute(
                    f"SELECT rowid, title, body FROM fts_stem WHERE rowid IN ({marks})", chunk):
                out[rid] = f"{title} {body}"
        return out

    def like(self, needles: list[str], limit: int, where: RowFilter | None = None) -> list[tuple[int, int]]:
        """(rowid, how many needles occur) by case-insensitive substring over title, body and entities."""
        if not needles:
            return []
        self._flush_fts()
        hay = "py_lower(f.title || ' ' || f.body || ' ' || f.entities)"
        parts = " + ".join(f"(instr({hay}, ?) > 0)" for _ in needles)
        join, cond, args = where.against("f.rowid") if where else ("", "", [])
        return [(r, n) for r, n in self.conn.execute(
            f"SELECT f.rowid, {parts} AS n FROM fts_word f{join} WHERE n > 0{cond} ORDER BY n DESC LIMIT ?",
            [n.lower() for n in needles] + args + [limit])]

    def neighbours(self, rowids: Iterable[int], window: int, where: RowFilter | None = None
                   ) -> dict[int, list[int]]:
        """rowid -> the rowids of the `window` memories written just before and just after it in its
        thread (the session that wrote it, else its `source`; by `created`, then id), among those
        `where` admits, in no particular order; memories with no thread or no created time have none.
        One statement: each side is one seek along `memories_by_thread` from the memory's own place,
        then `window` steps (a seek per neighbour, with OFFSET, cost a recall twice as much)."""
        ids = list(dict.fromkeys(rowids))[:500]
        if not ids or window <= 0:
            return {}
        cond, args = where.sql() if where else ("", [])
        sides = [f"(SELECT group_concat(rowid) FROM (SELECT m.rowid FROM memories m WHERE m.thread = s.thread"
                 f" AND m.created IS NOT NULL AND (m.created, m.id) {op} (s.created, s.id){cond}"
                 f" ORDER BY m.created {order}, m.id {order} LIMIT {int(window)}))"
                 for op, order in (("<", "DESC"), (">", "ASC"))]
        rows = self.conn.execute(
            f"SELECT s.rowid, {', '.join(sides)} FROM memories s WHERE s.rowid IN ({','.join('?' * len(ids))})"
            " AND s.thread != '' AND s.created IS NOT NULL", args * len(sides) + ids)
        return {r[0]: [int(n) for side in r[1:] if side for n in side.split(",")] for r in rows}

    def select(self, where: RowFilter) -> list[Row]:
        """Every row `where` admits, in no particular order."""
        cond, args = where.sql()
        return [to_row(r) for r in self.conn.execute(f"SELECT {ROW_COLUMNS} FROM memories m WHERE 1{cond}", args)]

