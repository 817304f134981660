"""The person's own record of memories, kept where only they write: which versions of which
memories this program wrote on this machine, which they accepted or rejected, and which stores this
version has seen (`standing` has the words).

Each mark is keyed by a memory's id and the git blob of its file's bytes, so an edited version is a
new version with no mark (not accepted yet) and nothing in a memory file can claim a standing. The
record is one SQLite file in the user's config folder beside trust.json
(`$XDG_CONFIG_HOME/memory-mcp/standing.sqlite3`): never in a store, which its writers and a team
share. Only the command line (`memory-mcp accept`, `trust`) and the store's own writes change it; no
MCP tool accepts or rejects.

Standard library only: every hook reads it (one query for the few memories it shows).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from memory_mcp.truth.layout import config_dir
from memory_mcp.truth.standing import ACCEPTED, OWN, REJECTED, UNACCEPTED

RECORD_FILE = "standing.sqlite3"
Version = tuple[str, str]  # (memory id, git blob of its file)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS marks (id TEXT NOT NULL, blob TEXT NOT NULL, standing TEXT NOT NULL, at TEXT NOT NULL,
    PRIMARY KEY (id, blob)) WITHOUT ROWID;
-- Rejections are few and every recall counts them.
CREATE INDEX IF NOT EXISTS marks_by_standing ON marks(standing);
CREATE TABLE IF NOT EXISTS stores (path BLOB PRIMARY KEY, at TEXT NOT NULL) WITHOUT ROWID;
"""
_CHUNK = 400  # versions per query: two parameters each, under SQLite's 999


def record_path() -> Path:
    return config_dir() / RECORD_FILE


def _key(root: Path) -> bytes:
    """A store's key: its path's bytes (a path need not be UTF-8, and SQLite text must be)."""
    return os.fsencode(root)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@contextmanager
def _writing() -> Iterator[sqlite3.Connection]:
    path = record_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path, timeout=10)) as conn:
        conn.executescript(_SCHEMA)
        with conn:
            yield conn


class Reader:
    """The record as it is, read-only: a hook opens one for all it asks. With no record yet, nothing
    is marked and no store was seen."""

    def __init__(self, kept: bool = False) -> None:
        """`kept`: the reader outlives one call and is used from the server's worker threads (its
        owner serialises the calls: `Session.reader`)."""
        self.conn: sqlite3.Connection | None = None
        path = record_path()
        if path.is_file():
            try:
                self.conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=1,
                                            check_same_thread=not kept)
                self.conn.execute("SELECT 1 FROM stores LIMIT 1")
            except sqlite3.Error:
                self.close()

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def standings(self, versions: Iterable[Version]) -> dict[Version, str]:
        """The mark of each version that has one (own, accepted or rejected); the others are not
        accepted yet."""
        wanted = list(dict.fromkeys(versions))
        out: dict[Version, str] = {}
        if self.conn is None:
            return out
        for i in range(0, len(wanted), _CHUNK):
            part = wanted[i : i + _CHUNK]
            cond = " OR ".join("(id = ? AND blob = ?)" for _ in part)
            out.update({(a, b): s for a, b, s in self.conn.execute(
                f"SELECT id, blob, standing FROM marks WHERE {cond}", [x for v in part for x in v])})
        return out

    def rejected_count(self) -> int:
        """How many versions are rejected: a recall asks for that many more hits, so hiding them
        never leaves it short."""
        if self.conn is None:
            return 0
        return int(self.conn.execute("SELECT count(*) FROM marks WHERE standing = ?", (REJECTED,)).fetchone()[0])

    def seen(self, root: Path) -> bool:
        """Whether this version has seen the store at `root` before (its baseline is taken)."""
        if self.conn is None:
            return False
        return self.conn.execute("SELECT 1 FROM stores WHERE path = ?", (_key(root),)).fetchone() is not None


def standing_of(version: Version, marks: dict[Version, str]) -> str:
    return marks.get(version, UNACCEPTED)


def listed(standing: str) -> list[Version]:
    """Every version marked `standing`."""
    with Reader() as r:
        if r.conn is None:
            return []
        return [(a, b) for a, b in r.conn.execute("SELECT id, blob FROM marks WHERE standing = ?", (standing,))]


def mark(versions: Iterable[Version], standing: str) -> None:
    """Mark versions `standing`. Own is never overwritten by accepted or rejected (the person wrote it;
    `forget` retires it); accepting a rejected version or rejecting an accepted one replaces the mark."""
    rows = [(i, b, standing, _now()) for i, b in dict.fromkeys(versions) if i and b]
    if not rows:
        return
    keep = "" if standing == OWN else f" WHERE marks.standing != '{OWN}'"
    with _writing() as conn:
        conn.executemany("INSERT INTO marks(id, blob, standing, at) VALUES (?,?,?,?) ON CONFLICT(id, blob) DO UPDATE"
                         f" SET standing = excluded.standing, at = excluded.at{keep}", rows)


def mark_new(versions: Iterable[Version], standing: str) -> None:
    """Mark versions `standing` that have no mark yet (a rule's decision never overrides the person's)."""
    rows = [(i, b, standing, _now()) for i, b in dict.fromkeys(versions) if i and b]
    if rows:
        with _writing() as conn:
            conn.executemany("INSERT OR IGNORE INTO marks(id, blob, standing, at) VALUES (?,?,?,?)", rows)


def unmark(versions: Iterable[Version], standing: str) -> int:
    """Take the mark `standing` off these versions (they are not accepted again); how many had it."""
    gone = 0
    with _writing() as conn:
        for i, b in dict.fromkeys(versions):
            gone += conn.execute("DELETE FROM marks WHERE id = ? AND blob = ? AND standing = ?",
                                 (i, b, standing)).rowcount
    return gone


def take_baseline(root: Path, held: Iterable[Version], again: bool = False) -> bool:
    """(`root` resolved.) Accept what the store at `root` holds now, the first time this version sees it (`again`:
    whatever was seen, as trusting a store does), leaving own and rejected marks as they are; whether
    it was taken."""
    if not again:
        with Reader() as r:
            if r.seen(root):
                return False
    rows = [(i, b, ACCEPTED, _now()) for i, b in held if i and b]
    with _writing() as conn:
        conn.executemany("INSERT OR IGNORE INTO marks(id, blob, standing, at) VALUES (?,?,?,?)", rows)
        conn.execute("INSERT OR REPLACE INTO stores(path, at) VALUES (?, ?)", (_key(root), _now()))
    return True
