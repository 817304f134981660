"""The score formula of design 5.2, and its effect on recall order through the core."""

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory_mcp.app.store import Store
from memory_mcp.recall import ranking

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def ago(days: float) -> str:
    return (NOW - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(("days", "expected"), [(0, 0.15), (7, 0.15), (8, 0.05), (30, 0.05), (31, 0.0)])
def test_freshness_windows(days: float, expected: float) -> None:
    assert ranking.freshness(ago(days), NOW) == expected


def test_freshness_of_a_missing_or_bad_date_is_zero() -> None:
    assert ranking.freshness(None, NOW) == 0.0 and ranking.freshness("yesterday", NOW) == 0.0


def test_heat_grows_then_caps() -> None:
    assert [ranking.heat(n) for n in (0, 5, 10, 50)] == [0.0, pytest.approx(0.1), pytest.approx(0.2), 0.2]


def test_score_multiplies_every_factor() -> None:
    s = ranking.score(2.0, "agent-inferred", "archived", ago(3), 5, -0.5, NOW)
    assert s == pytest.approx(2.0 * 0.85 * 0.5 * (1 + 0.15 + 0.1) * (1 - 0.15))


def test_helpful_feedback_and_recalls_lift_a_memory_above_its_twin(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store")
    a = store.remember("The gannet worker retries failed jobs.", title="Gannet retries A")
    b = store.remember("The gannet worker retries failed jobs!", title="Gannet retries B")
    first = [h.id for h in store.recall("gannet worker retries").results]
    loser = first[1]
    store.feedback(loser, helpful=True)
    assert [h.id for h in store.recall("gannet worker retries").results][0] == loser
    store.feedback(loser, helpful=False)
    store.feedback(loser, helpful=False)  # now -0.3: below its twin despite more recalls
    assert [h.id for h in store.recall("gannet worker retries").results][0] != loser
    assert {a.id, b.id} == set(first)
