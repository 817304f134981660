"""The conflict gate: which existing memories a new one may contradict, and pair identity."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

from . import query
from .index import Index
from .model import parse_iso
from .schema import Row

NEIGHBOUR_LIMIT = 3
POOL = 32
# Term overlap (Jaccard over stemmed, stop-word-free terms of title and excerpt) at which two memories
# without a shared entity are worth a look. Same-entity pairs are always candidates.
MIN_SIMILARITY = 0.3
AMBIGUITY_WINDOW_DAYS = 7


@dataclass(frozen=True)
class Subject:
    """The memory being written, as the gate sees it."""

    id: str
    title: str
    excerpt: str
    entities: list[str]
    updated: str | None
    distinct_from: list[str]


@dataclass(frozen=True)
class Neighbour:
    row: Row
    shared_entities: list[str]
    similarity: float
    age_days: float

    @property
    def latest_wins_eligible(self) -> bool:
        """More than a week apart: the newer one can be taken as the current intent."""
        return self.age_days > AMBIGUITY_WINDOW_DAYS


def pair_hash(a: str, b: str) -> str:
    """Order-free identity of a pair of memories."""
    x, y = sorted((a, b))
    return hashlib.sha256(f"{x}:{y}".encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=8192)
def term_set(text: str) -> frozenset[str]:
    """The planner's content stems of `text`: what two memories must share to be about one topic.

    Cached: a bulk import runs the gate once per memory over mostly the same candidate rows."""
    return frozenset(query.stems(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def settled(a: Row | Subject, b: Row) -> bool:
    """A pair a person or agent already decided: kept both, or one supersedes the other."""
    return (b.id in a.distinct_from or a.id in b.distinct_from or b.superseded_by == a.id
            or (isinstance(a, Row) and a.superseded_by == b.id))


def neighbours(index: Index, subject: Subject, limit: int = NEIGHBOUR_LIMIT) -> list[Neighbour]:
    """Up to `limit` live memories the subject may contradict, most similar first."""
    probe = f"{subject.title} {subject.excerpt}"
    candidates = set(query.text_scores(index, probe, POOL))
    by_entity = index.with_entities(subject.entities)
    candidates |= set(by_entity)
    mine = term_set(probe)
    when = parse_iso(subject.updated)
    out: list[Neighbour] = []
    for row in index.rows(candidates):
        if row.id == subject.id or row.state == "deprecated" or row.superseded_by or settled(subject, row):
            continue
        shared = sorted(e for e in row.entities if e.lower() in by_entity.get(row.rowid, set()))
        sim = jaccard(mine, term_set(f"{row.title} {row.excerpt}"))
        if not shared and sim < MIN_SIMILARITY:
            continue
        other = parse_iso(row.updated or row.created)
        gap = abs((when - other).total_seconds()) / 86400 if when and other else 0.0
        out.append(Neighbour(row, shared, round(sim, 3), round(gap, 2)))
    out.sort(key=lambda n: (len(n.shared_entities) > 0, n.similarity, n.row.updated or ""), reverse=True)
    return out[:limit]
