"""Memory ids: ULIDs, a 48-bit time in milliseconds then 80 random bits, written as 26 characters of
Crockford's base 32 (so ids sort by the time they were made). Made here: the library that made them
imported importlib.metadata and typing_extensions for its own version, ~15 ms of every command that
writes a memory, for a dozen lines of arithmetic."""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
TIME_CHARS = 10  # 10 characters of 5 bits hold the 48-bit time (the first is at most 7)


_last = 0  # the value of the last ULID made now, so that the next one sorts after it
_minting = threading.Lock()


def new_ulid(at: float | None = None) -> str:
    """A new ULID for the time `at` (seconds since the epoch; default now). Made now, each sorts
    after the one before in this process, also within one millisecond (the random part is raised
    by one): the order of a session's writes is the order of their ids, which neighbours in time
    read when two share a second."""
    global _last
    ms = int((time.time() if at is None else at) * 1000)
    value = (ms << 80) | int.from_bytes(os.urandom(10), "big")
    if at is None:
        with _minting:
            if value <= _last and (_last >> 80) >= ms:
                value = _last + 1
            _last = value
    return "".join(ALPHABET[(value >> shift) & 31] for shift in range(125, -1, -5))


def ulid_time(ulid: str) -> datetime:
    """When the ULID `ulid` was made (to the millisecond, UTC); ValueError for a character outside
    the alphabet."""
    ms = 0
    for char in ulid[:TIME_CHARS].upper():
        ms = ms * 32 + ALPHABET.index(char)
    return datetime.fromtimestamp(ms / 1000, UTC)
