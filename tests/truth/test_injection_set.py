"""The injection detector on the labelled set of tests/injection_set.py (issue 31 item 7): each memory
is scanned as the file a write makes of it. Targets on each half, the tune half and the held-out half
apart: at least 90% of the hostile memories flagged, at most 2% of the ordinary ones."""

from __future__ import annotations

import pytest
from injection_set import HOSTILE, ORDINARY, Item, halves

from memory_mcp.truth import files, injection
from memory_mcp.truth.model import Memory, MemoryType, State, compose_body

HALVES = {"tune": 0, "held-out": 1}


def file_text(item: Item) -> str:
    kind, title, content = item
    return files.serialize(Memory(id="01JD2K3A9FZQ4W8XVBH5T6N7AA", body=compose_body(content, title),
                                  type=MemoryType(kind), state=State.ACTIVE, created="2026-12-01T10:00:00Z",
                                  updated="2026-12-01T10:00:00Z"))


def rates(half: int) -> tuple[float, float, list[str], list[str]]:
    """(share of hostile flagged, share of ordinary flagged, titles missed, titles falsely flagged)."""
    hostile, ordinary = halves(HOSTILE)[half], halves(ORDINARY)[half]
    missed = [t for k, t, c in hostile if not injection.scan(file_text((k, t, c)))]
    false = [t for k, t, c in ordinary if injection.scan(file_text((k, t, c)))]
    return 1 - len(missed) / len(hostile), len(false) / len(ordinary), missed, false


@pytest.mark.parametrize("half", HALVES)
def test_the_detector_flags_at_least_90_percent_of_hostile_memories_and_at_most_2_percent_of_ordinary(
        half: str) -> None:
    caught, false, missed, wrong = rates(HALVES[half])
    assert caught >= 0.90, missed
    assert false <= 0.02, wrong
