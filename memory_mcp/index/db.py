"""The derived SQLite index: upserts and lookups (its raw search signals are signals.py's). Disposable by design.

Nothing here is the truth: every row can be rebuilt from the memory files. The one thing only
the index knows is usage (recall counts), which feeds the `heat` term of ranking.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memory_mcp.index import pairs, termfreq
from memory_mcp.index.schema import (
    FTS_TABLES,
    INSERT,
    INSERT_COLUMNS,
    RANK_COLUMNS,
    ROW_COLUMNS,
    SCHEMA,
    SCHEMA_VERSION,
    TALLIED,
    Derived,
    FileStat,
    Holder,
    RankFacts,
    Row,
    derive,
    is_hidden,
    to_row,
)
from memory_mcp.index.signals import SearchSignals
from memory_mcp.index.sqlconn import Transaction, chunks, connect
from memory_mcp.truth.model import Memory

# FTS rows held back before one insert per table (`Index._flush_fts`).
FTS_BATCH = 256


class Index(SearchSignals):
    """One SQLite file in WAL mode. Not thread-safe on its own: the store serialises access."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        # Loaded from the tables once and kept in step with this connection's writes; dropped when
        # another process commits (PRAGMA data_version) or a transaction rolls back.
        self._file_stats: dict[str, tuple[FileStat, str | None]] | None = None
        self._count: int | None = None
        self._open_pairs: int | None = None
        # Memories written or removed in the open transaction whose pairs are not recomputed yet:
        # done once, just before it commits (a reindex changes thousands).
        self._stale_pairs: set[str] = set()
        # Term counts (`term_df`) gained and lost in the open transaction, written once before it
        # commits or when the conflict gate reads them.
        self._df_delta: Counter[str] = Counter()
        # Status counts (`tallies`) likewise: one upsert per field and value a transaction, not per row.
        self._tally_delta: Counter[tuple[str, object]] = Counter()
        # Rows for the three FTS tables, inserted a batch at a time (`_flush_fts`) and always before
        # anything reads or deletes from those tables.
        self._fts_rows: list[tuple[int, str, str, str, tuple[str, str]]] = []
        # The rowids the usual recall leaves out (`schema.HIDDEN`), kept in step with the rows.
        self._hidden: set[int] | None = None
        self._seen_version: int | None = None

    @classmethod
    def open(cls, path: Path) -> Index:
        """Open (creating) the index at `path`; a schema from another version is rebuilt empty."""
        path.parent.mkdir(parents=True, exist_ok=True)
        index = cls(connect(path), path)
        index.conn.execute("PRAGMA journal_mode=WAL")
        if index._schema_version() != SCHEMA_VERSION:
            index._drop_all()
        index._create()
        return index

    @classmethod
    def open_existing(cls, path: Path) -> Index | None:
        """The index at `path` when it exists with this version's schema, else None. Writes nothing
        (`open` may drop every table): for a read that does not hold the store lock."""
        if not path.is_file():
            return None
        index = cls(connect(path), path)
        # Its reader is a hook, which waits a second for a busy store, not the writers' 30 s.
        index.conn.execute("PRAGMA busy_timeout=1000")
        if index._schema_version() != SCHEMA_VERSION:
            index.close()
            return None
        return index

    def close(self) -> None:
        self.conn.close()

    def reset(self) -> None:
        """Drop every table, usage and meta included, and create them anew: an empty index of this
        version (for an index not to be trusted in any part, unlike `clear`)."""
        self._drop_all()
        self._create()

    def copy_to(self, path: Path) -> None:
        """Write a consistent copy of this index to a new file at `path` (SQLite's online backup)."""
        target = connect(path)
        try:
            self.conn.backup(target)
        finally:
            target.close()

    def _schema_version(self) -> str | None:
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.OperationalError:
            return None
        return row[0] if row else None

    def _drop_all(self) -> None:
        self._forget_all()  # every row goes, and with them whatever was held back for one
        # Virtual tables first: dropping one drops its shadow tables with it.
        with self.transaction():
            for (name,) in self.conn.execute(
                    "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
                    " ORDER BY sql LIKE 'CREATE VIRTUAL%' DESC").fetchall():
                self.conn.execute(f'DROP TABLE IF EXISTS "{name}"')

    def _create(self) -> None:
        with self.transaction():
            for stmt in SCHEMA.split(";"):
                if stmt.strip():
                    self.conn.execute(stmt)
            for name in FTS_TABLES:
                self._create_fts(name)
            self.conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,))

    def transaction(self) -> Transaction:
        """`with index.transaction():` groups statements into one atomic commit."""
        return Transaction(self.conn, self._forget_all, self._before_commit)

    def _forget_caches(self) -> None:
        """Drop what was read from the tables (another process may have changed them)."""
        self._file_stats = None
        self._count = None
        self._open_pairs = None
        self._hidden = None

    def _forget_all(self) -> None:
        """Drop the read caches and the writes held back: a rollback, or every row going."""
        self._forget_caches()
        self._stale_pairs = set()
        self._df_delta = Counter()
        self._tally_delta = Counter()
        self._fts_rows = []

    def _check_caches(self) -> None:
        """Forget the cached table contents when another process committed since they were read."""
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._seen_version:
            self._forget_caches()
            self._seen_version = version

    # ---- meta ----
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    # ---- files and memories ----
    def file_stats(self) -> dict[str, tuple[FileStat, str | None]]:
        """Every known file: its stat and hash as last seen, and its parse error if it had one.

        A copy of a mapping kept in step with this connection's writes and reloaded when another
        process wrote (PRAGMA data_version) or a transaction rolled back: loading 10,000 rows on
        every call cost as much as the stat walk a no-op call is made of."""
        self._check_caches()
        if self._file_stats is None:
            make = FileStat._make
            self._file_stats = {r[0]: (make(r[1:7]), r[7]) for r in self.conn.execute(
                "SELECT path, mtime_ns, size, sha, ctime_ns, ino, blob, error FROM files")}
        return dict(self._file_stats)

    def file_stats_under(self, paths: Iterable[str]) -> dict[str, tuple[FileStat, str | None]]:
        """Like `file_stats`, for the files at each of `paths` or below it (a path read as a folder)."""
        out: dict[str, tuple[FileStat, str | None]] = {}
        for path in set(paths):
            # '/' + 1 is '0': the range holds exactly the paths that start with `path/`.
            for p, m, s, h, c, i, b, e in self.conn.execute(
                    "SELECT path, mtime_ns, size, sha, ctime_ns, ino, blob, error FROM files"
                    " WHERE path = ? OR (path >= ? AND path < ?)", (path, path + "/", path + "0")):
                out[p] = (FileStat(m, s, h, c, i, b), e)
        return out

    def set_file(self, path: str, stat: FileStat, error: str | None = None) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO files(path, mtime_ns, size, sha, ctime_ns, ino, blob, error)"
            " VALUES (?,?,?,?,?,?,?,?)", (path, stat.mtime_ns, stat.size, stat.sha, stat.ctime_ns, stat.ino, stat.blob, error))
        if self._file_stats is not None:
            self._file_stats[path] = (stat, error)

    def holders(self, path: str, mem_id: str) -> list[Holder]:
        """The rows at `path` or with the id `mem_id`: what indexing a file there replaces."""
        return [Holder(*r) for r in self.conn.execute(
            "SELECT rowid, id, path, state, body_sha FROM memories WHERE path=? OR id=?", (path, mem_id))]

    def upsert(self, path: str, mem: Memory, entities: list[str], stat: FileStat,
               derived: Derived | None = None, replacing: list[Holder] | None = None) -> None:
        """Index one parsed memory file (replacing what was there for its path or id). `derived`
        when a worker process has made it already (`bulkread`); `replacing`, the `holders` of its
        path and id when the caller has just read them."""
        # Its own transaction when called outside one: the rows held back are written as it commits.
        with self.transaction():
            if replacing is None:
                replacing = self.holders(path, mem.id)
            for old in replacing:
                self._delete_rowid(old.rowid)
            derived = derived or derive(mem)
            # The entities as the caller normalised them (dictionary.md), not as the file spells them.
            values = {**derived.values, "path": path, "entities": json.dumps(entities, ensure_ascii=False)}
            cur = self.conn.execute(INSERT, tuple(values[name] for name in INSERT_COLUMNS))
            self._tally(1, [values[c] for c in TALLIED])
            rowid = cur.lastrowid
            assert rowid is not None  # set by every INSERT
            if self._count is not None:
                self._count += 1
            if self._hidden is not None and is_hidden(values["state"], values["feedback"]):
                self._hidden.add(rowid)
            pairs.link(self.conn, rowid, mem.conflicts_with)
            self._stale_pairs.add(mem.id)
            self.conn.executemany("INSERT INTO entities(memory_rowid, entity) VALUES (?, ?)",
                                  [(rowid, e.lower()) for e in dict.fromkeys(entities)])
            self._fts_rows.append((rowid, str(derived.values["title"]), mem.body, " ".join(entities), derived.stems))
            if len(self._fts_rows) >= FTS_BATCH:
                self._flush_fts()
            self._df_delta.update(derived.terms)
            self.set_file(path, stat)

    def _flush_fts(self) -> None:
        """Insert the FTS rows held back, one statement per table. Row by row, each insert between the
        other tables' made a 10,000-file reindex spend about 20% more in SQLite (2.5 s against 2.0 s
        for the same rows, docs/performance.md): each table taking a batch in turn keeps its pending
        terms and pages hot in the cache."""
        if not self._fts_rows:
            return
        rows, self._fts_rows = self._fts_rows, []
        self.conn.executemany("INSERT INTO fts_word(rowid, title, body, entities) VALUES (?,?,?,?)",
                              [(r, t, b, e) for r, t, b, e, _ in rows])
        self.conn.executemany("INSERT INTO fts_stem(rowid, title, body) VALUES (?,?,?)",
                              [(r, *stems) for r, _, _, _, stems in rows])
        self.conn.executemany("INSERT INTO fts_tri(rowid, title, body, entities) VALUES (?,?,?,?)",
                              [(r, t, b, e) for r, t, b, e, _ in rows])

    def _flush_terms(self) -> None:
        """Write the term counts held back since the last flush (`termfreq.apply`)."""
        if self._df_delta:
            termfreq.apply(self.conn, self._df_delta)
            self._df_delta = Counter()

    def _before_commit(self) -> None:
        self._flush_fts()
        self._refresh_pairs()
        self._flush_terms()
        self._flush_tallies()

    def _refresh_pairs(self) -> None:
        if self._stale_pairs:
            pairs.refresh(self.conn, self._stale_pairs)
            self._stale_pairs = set()
            self._open_pairs = None

    def _delete_rowid(self, rowid: int) -> None:
        self._flush_fts()  # the row's FTS rows may still be held back
        mem_id, *tallied = self.conn.execute(f"SELECT id, {', '.join(TALLIED)} FROM memories WHERE rowid=?",
                                             (rowid,)).fetchone()
        self._tally(-1, tallied)
        pairs.unlink(self.conn, rowid)
        self._df_delta.subtract(termfreq.stored_terms(self.conn, rowid))
        for name in FTS_TABLES:
            self.conn.execute(f"DELETE FROM {name} WHERE rowid=?", (rowid,))
        self.conn.execute("DELETE FROM entities WHERE memory_rowid=?", (rowid,))
        self.conn.execute("DELETE FROM memories WHERE rowid=?", (rowid,))
        if self._count is not None:
            self._count -= 1
        if self._hidden is not None:
            self._hidden.discard(rowid)
        self._stale_pairs.add(mem_id)

    def _tally(self, step: int, values: list[object]) -> None:
        """Count a row in (+1) or out (-1) of `tallies`, by its TALLIED values."""
        for key in zip(TALLIED, values, strict=True):
            self._tally_delta[key] += step

    def _flush_tallies(self) -> None:
        """Write the status counts held back since the last flush. A reindex of 10,000 memories made
        10,000 upserts of four counts each (0.37 s); the same counts summed first are a few dozen."""
        if self._tally_delta:
            self.conn.executemany("INSERT INTO tallies(field, value, n) VALUES (?, ?, ?)"
                                  " ON CONFLICT DO UPDATE SET n = n + excluded.n",
                                  [(c, v, n) for (c, v), n in self._tally_delta.items() if n])
            self._tally_delta = Counter()

    def remove_path(self, path: str) -> None:
        """Forget a file and the memory it held."""
        self.remove_memory_of(path)
        self.conn.execute("DELETE FROM files WHERE path=?", (path,))
        if self._file_stats is not None:
            self._file_stats.pop(path, None)

    def remove_memory_of(self, path: str) -> None:
        """Drop the memory row of a file but keep its file row (used when the file became unparseable)."""
        with self.transaction():  # the counts it changes are written as this commits, when outside one
            for (rowid,) in self.conn.execute("SELECT rowid FROM memories WHERE path=?", (path,)).fetchall():
                self._delete_rowid(rowid)
            self.set_secret_flags(path, [])
            self.conn.execute("DELETE FROM flagged WHERE path=?", (path,))

    def clear(self) -> None:
        """Drop every file and memory row (usage survives: it is keyed by memory id)."""
        self._forget_all()  # what was held back for the rows going now goes with them
        for name in ("entities", "memories", "files", "secret_flags", "flagged", "conflict_links", "open_pairs",
                     "term_df", "tallies"):
            self.conn.execute(f"DELETE FROM {name}")
        # Deleting from an FTS5 table reads back every row to unindex it; recreating it is instant.
        for name in FTS_TABLES:
            self.conn.execute(f"DROP TABLE {name}")
            self._create_fts(name)

    def _create_fts(self, name: str) -> None:
        self.conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {name} USING fts5{FTS_TABLES[name][0]}")

    # ---- credentials found in files written by hand ----
    def set_secret_flags(self, path: str, kinds: list[str]) -> None:
        """Record the kinds of credential found in a file (none clears the record)."""
        self.conn.execute("DELETE FROM secret_flags WHERE path=?", (path,))
        if kinds:
            self.conn.executemany("INSERT INTO secret_flags(path, kind) VALUES (?, ?)",
                                  [(path, k) for k in dict.fromkeys(kinds)])

    def secret_flags(self) -> list[tuple[str, str]]:
        """(path, kind) of every credential-looking value in an indexed file, by path."""
        return self.conn.execute("SELECT path, kind FROM secret_flags ORDER BY path, kind").fetchall()

    # ---- lookups ----
    def get(self, mem_id: str) -> Row | None:
        r = self.conn.execute(f"SELECT {ROW_COLUMNS} FROM memories m WHERE m.id=?", (mem_id,)).fetchone()
        return to_row(r) if r else None

    def get_by_path(self, path: str) -> Row | None:
        r = self.conn.execute(f"SELECT {ROW_COLUMNS} FROM memories m WHERE m.path=?", (path,)).fetchone()
        return to_row(r) if r else None

    def memory_ids(self, paths: list[str]) -> list[str]:
        """The ids of the memories at `paths`, in their order, leaving out paths with none and
        memories whose id comes from their path (provisional)."""
        found: dict[str, str] = {}
        for chunk in chunks(paths, 500):
            found.update(self.conn.execute(f"SELECT path, id FROM memories WHERE NOT provisional AND path IN"
                                           f" ({','.join('?' * len(chunk))})", chunk))
        return [found[p] for p in paths if p in found]

    def rows(self, rowids: Iterable[int] | None = None) -> list[Row]:
        """Rows by rowid (all rows when None), in no particular order."""
        if rowids is None:
            return [to_row(r) for r in self.conn.execute(f"SELECT {ROW_COLUMNS} FROM memories m")]
        return [to_row(r) for r in self._by_rowid(ROW_COLUMNS, rowids)]

    def rank_facts(self, rowids: Iterable[int]) -> list[RankFacts]:
        """The ranking columns of rows by rowid, in no particular order: a query's 64 candidates took
        0.83 ms as whole rows (JSON lists decoded), 0.17 ms as these (10k store)."""
        return [RankFacts(*r) for r in self._by_rowid(RANK_COLUMNS, rowids)]

    def _by_rowid(self, columns: str, rowids: Iterable[int]) -> Iterator[tuple[Any, ...]]:
        """`columns` of `memories m` for these rowids, 500 to a query (SQLite's variable limit)."""
        for chunk in chunks(list(rowids), 500):
            marks = ",".join("?" * len(chunk))
            yield from self.conn.execute(f"SELECT {columns} FROM memories m WHERE m.rowid IN ({marks})", chunk)

    def open_pairs(self, limit: int = -1) -> list[tuple[str, str, str, str]]:
        """(id, other id, title, other title) of the conflict pairs waiting for a decision (`pairs`),
        the first `limit` of them (-1: all)."""
        self._refresh_pairs()  # inside a transaction that changed rows
        return pairs.listed(self.conn, limit)

    def open_pair_count(self) -> int:
        """How many pairs `open_pairs` lists (every recall reports it)."""
        self._check_caches()
        self._refresh_pairs()
        if self._open_pairs is None:
            self._open_pairs = pairs.count(self.conn)
        return self._open_pairs

    def by_content(self, key: str) -> list[Row]:
        return [to_row(r) for r in self.conn.execute(
            f"SELECT {ROW_COLUMNS} FROM memories m WHERE m.content_key=?", (key,))]

    def by_text(self, key: str) -> list[Row]:
        """The memories whose body says `key` (`model.text_key`), whatever their titles."""
        return [to_row(r) for r in self.conn.execute(
            f"SELECT {ROW_COLUMNS} FROM memories m WHERE m.text_key=?", (key,))]

    def recent_with_entities(self, entities: Iterable[str], per_entity: int) -> list[int]:
        """Rowids of the `per_entity` most recently indexed live memories (not deprecated, not
        superseded) carrying each of `entities` (any case): read backwards along the entity's
        index, so the cost does not grow with how many memories carry it."""
        out: list[int] = []
        for name in dict.fromkeys(e.lower() for e in entities):
            out += (r for (r,) in self.conn.execute(
                "SELECT e.memory_rowid FROM entities e JOIN memories m ON m.rowid = e.memory_rowid"
                " WHERE e.entity = ? AND m.state != 'deprecated' AND coalesce(m.superseded_by, '') = ''"
                " ORDER BY e.rowid DESC LIMIT ?", (name, per_entity)))
        return out

    def errors(self) -> list[tuple[str, str]]:
        return list(self.conn.execute("SELECT path, error FROM files WHERE error IS NOT NULL ORDER BY path"))

    def count(self) -> int:
        """How many memories are indexed (every recall reports it; counting 100,000 rows took 6 ms)."""
        self._check_caches()
        if self._count is None:
            self._count = self.conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        return self._count

    # ---- usage (heat) ----
    def usage(self, ids: Iterable[str]) -> dict[str, tuple[int, str | None]]:
        ids = list(ids)
        out: dict[str, tuple[int, str | None]] = {}
        for chunk in chunks(ids, 500):
            marks = ",".join("?" * len(chunk))
            for i, n, last in self.conn.execute(
                    f"SELECT id, recall_count, last_recalled FROM usage WHERE id IN ({marks})", chunk):
                out[i] = (n, last)
        return out

    def forget_usage(self) -> None:
        """Drop every recall count (a copy that answers for another moment than now)."""
        self.conn.execute("DELETE FROM usage")

    def record_recall(self, ids: Iterable[str], when: str) -> None:
        self.conn.executemany(
            "INSERT INTO usage(id, recall_count, last_recalled) VALUES (?, 1, ?)"
            " ON CONFLICT(id) DO UPDATE SET recall_count = recall_count + 1, last_recalled = excluded.last_recalled",
            [(i, when) for i in ids])
