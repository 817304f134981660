"""The score formula, the token budget and MMR diversity. Pure functions over index rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TypeVar

from memory_mcp.truth.lifecycle import WITHHOLD_AT
from memory_mcp.truth.model import parse_iso

T = TypeVar("T")

TRUST_WEIGHT = {"user-stated": 1.0, "agent-inferred": 0.85, "imported": 0.7}
STATE_WEIGHT = {"active": 1.0, "archived": 0.5, "deprecated": 0.25}
FEEDBACK_WEIGHT = 0.3
# What the session digest shows before anything else, in this order.
DIGEST_FIRST = ("preference", "decision")
DIGEST_LIMIT = 40  # the most memories a session digest lists, before its token budget cuts it


def freshness(updated: str | None, now: datetime) -> float:
    """0.15 within 7 days of the last update, 0.05 within 30, else 0."""
    when = parse_iso(updated)
    if when is None:
        return 0.0
    days = (now - when).total_seconds() / 86400
    if days <= 7:
        return 0.15
    if days <= 30:
        return 0.05
    return 0.0


def heat(recall_count: int) -> float:
    return min(0.2, 0.02 * recall_count)


def score(text: float, trust: str, state: str, updated: str | None, recall_count: int, feedback: float,
          now: datetime) -> float:
    """text × trust × state × (1 + freshness + heat) × (1 + 0.3 × feedback)."""
    return (text * TRUST_WEIGHT.get(trust, 0.7) * STATE_WEIGHT.get(state, 0.25)
            * (1 + freshness(updated, now) + heat(recall_count)) * (1 + FEEDBACK_WEIGHT * feedback))


def withheld(feedback: float) -> bool:
    """A memory reported misleading often enough is not returned at all."""
    return feedback <= WITHHOLD_AT


def mmr(items: Sequence[T], relevance: Callable[[T], float],
        similarity: Callable[[T, T], float], diversity: float, limit: int) -> list[T]:
    """Maximal marginal relevance: greedily pick the item best balancing relevance and novelty.

    `diversity` 0 keeps relevance order; 1 picks the most dissimilar items. Relevance is scaled to
    [0, 1] by the best score so the two terms are comparable."""
    if diversity <= 0 or len(items) <= 1:
        return list(items)[:limit]
    top = max(relevance(i) for i in items) or 1.0
    chosen: list[T] = []
    rest = list(items)
    while rest and len(chosen) < limit:
        def gain(item: T) -> float:
            redundancy = max((similarity(item, c) for c in chosen), default=0.0)
            return (1 - diversity) * relevance(item) / top - diversity * redundancy
        best = max(rest, key=gain)
        chosen.append(best)
        rest.remove(best)
    return chosen
