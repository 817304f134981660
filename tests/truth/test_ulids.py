"""Memory ids made without a library: the ULID layout (48-bit milliseconds, 80 random bits, Crockford
base 32), as the ULID specification's own example reads."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_mcp.truth.model import ULID_RE
from memory_mcp.truth.ulids import new_ulid, ulid_time


def test_the_specifications_example_reads_as_its_time() -> None:
    # The specification's example id, 1469922850259 ms after the epoch (as python-ulid reads it too).
    assert ulid_time("01ARZ3NDEKTSV4RRFFQ69G5FAV") == datetime.fromtimestamp(1469922850.259, UTC)


def test_a_new_id_is_a_ulid_of_its_time_and_sorts_by_it() -> None:
    first, later = new_ulid(1_700_000_000.0), new_ulid(1_700_000_000.002)
    assert ULID_RE.match(first) and ULID_RE.match(later)
    assert ulid_time(first) == datetime.fromtimestamp(1_700_000_000, UTC)
    assert first < later
    assert new_ulid(1_700_000_000.0) != first  # the 80 random bits
    assert ulid_time(new_ulid()).year >= 2026
