"""The SQLite connection under the index: how it is opened, its transactions, statement chunks."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar


class Transaction:
    """`with index.transaction():` one atomic commit (BEGIN IMMEDIATE), nested ones joining the
    outer; derived rows are completed just before it commits, caches dropped when it rolls back."""

    def __init__(self, conn: sqlite3.Connection, on_rollback: Callable[[], None],
                 before_commit: Callable[[], None]) -> None:
        self.conn = conn
        self.on_rollback = on_rollback  # what was read inside the transaction may be undone
        self.before_commit = before_commit  # derived rows the transaction's changes call for
        self.outer = False

    def __enter__(self) -> None:
        self.outer = not self.conn.in_transaction
        if self.outer:
            self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, tb) -> None:  # type: ignore[no-untyped-def]
        if not self.outer:
            return
        if exc_type:
            self._rollback()
            return
        try:
            self.before_commit()
            self.conn.execute("COMMIT")
        except BaseException:
            # A COMMIT that failed (a full disk, a deferred constraint) can leave the transaction open:
            # every later transaction() would then nest inside it and never commit, and other processes
            # would wait on its write lock.
            self._rollback()
            raise

    def _rollback(self) -> None:
        self.on_rollback()
        # SQLite may have rolled back by itself already (a full disk mid-statement).
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


T = TypeVar("T")


def chunks(items: list[T], size: int) -> Iterator[list[T]]:
    """`items` in lists of at most `size` (SQLite limits the parameters of one statement)."""
    for i in range(0, len(items), size):
        yield items[i : i + size]


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), waiting up to 30 s for a lock."""
    conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=30000")
    # SQLite's lower() folds ASCII only; the substring fallback must match `бд` in `СУБД` too.
    conn.create_function("py_lower", 1, lambda t: t.lower() if isinstance(t, str) else t, deterministic=True)
    return conn
