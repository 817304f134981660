"""The conflict gate: which existing memories a new one may contradict, and pair identity."""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass

from memory_mcp.index import textproc
from memory_mcp.index.db import Index
from memory_mcp.index.schema import Row
from memory_mcp.recall import planner
from memory_mcp.truth.model import parse_iso

NEIGHBOUR_LIMIT = 3
# The candidate search is bounded so the gate costs the same at 1,000 and 100,000 memories: the
# subject's rarest terms (at most PROBE_TERMS, whose memories together number at most
# PROBE_POSTINGS) searched for the PROBE_LIMIT best matches, plus the ENTITY_LIMIT most recently
# indexed live memories of each of its entities. Searching the whole store with the planner and
# taking every memory that shares an entity made the gate 1.5-2.1x slower at 10,000 than 7e4e5f0's.
PROBE_TERMS = 8
PROBE_POSTINGS = 1000
PROBE_LIMIT = 8
ENTITY_LIMIT = 8
# Term overlap (Jaccard over stemmed, stop-word-free terms of title and excerpt) at which two memories
# without a shared entity are worth a look. Same-entity pairs are always candidates.
MIN_SIMILARITY = 0.3
AMBIGUITY_WINDOW_DAYS = 7
# What makes a related pair a conflict ("this may replace or contradict that"): the new text says
# that something changed or is not so and shares some terms with the old, or it shares an entity
# and most of its terms. A shared entity alone is not enough: importing 2,000 notes about a few
# services raised 5,984 pairs. Chosen on the tune half of tests/data/conflict_pairs.json and the perf
# harness's generated notes; the held-out half is reported by tests/recall/test_conflict_gate.py.
# Rarity-weighted term overlap (`weighted_jaccard`) a pair needs to be raised:
CHANGE_SIMILARITY = 0.15  # with a "change" cue the newer text has and the older has not
NOT_SIMILARITY = 0.1  # with a "not" cue only, and a shared entity named in both texts
NOT_ALONE_SIMILARITY = 0.3  # with a "not" cue only otherwise
ALONE_OVERLAP = 0.8  # with no cue, and only with a shared entity: the weighted overlap coefficient
# Plain overlap below which a pair with a cue is not weighed at all (keeps the df lookups few).
PLAIN_FLOOR = 0.1

# Words that say a statement changed ("change") or does not hold ("not"): English as written,
# Russian by stem (its verbs inflect: переехал, переехало), Korean as parts of a word (않 is inside
# 않고, 아니 inside 아니라), as Korean writes its endings on. "not" words are also how a rule is
# written ("never run X", "use X instead of Y"), so they need more shared terms (`NOT_SIMILARITY`).
_CUES: dict[str, tuple[frozenset[str], frozenset[str], tuple[str, ...]]] = {
    "change": (
        frozenset(("now", "longer", "anymore", "switched", "switch", "replaced", "replaces", "moved", "migrated",
                   "renamed", "deprecated", "changed", "upgraded", "downgraded", "dropped", "removed", "since")),
        frozenset(textproc.stem_word(w) for w in ("теперь", "больше", "уже", "перешли", "перевели", "перенесли",
                                                  "переехал", "заменили", "передумал", "сократили", "увеличили",
                                                  "изменили", "отказались")),
        ("이제", "더이상", "바꿨", "바꾸었", "옮겼", "줄였", "늘렸", "변경했", "교체했")),
    "not": (
        frozenset(("instead", "not", "never", "no", "isnt", "arent", "doesnt", "dont", "wasnt", "werent", "wont",
                   "cannot", "dislikes")),
        frozenset(textproc.stem_word(w) for w in ("вместо", "не", "нет", "никогда", "против")),
        ("대신", "않", "아니", "없", "싫")),
}


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


# About 1.5 KB an entry (measured): 2,048 bound it to 3 MB where 8,192 allowed 12 MB, and 600 gate
# checks on a real-text store hit it as often at either size (benchmarks/bench_caches.py).
@functools.lru_cache(maxsize=2048)
def term_set(text: str) -> frozenset[str]:
    """The planner's content stems of `text`: what two memories must share to be about one topic.

    Cached: a bulk import runs the gate once per memory over mostly the same candidate rows."""
    return frozenset(planner.stems(text))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def weighted_overlap(a: frozenset[str], b: frozenset[str], df: dict[str, int], n: int) -> tuple[float, float]:
    """(Jaccard, overlap coefficient) with each term weighted by its rarity in the store
    (log(1 + n / df)): two notes written from one pattern ("use X instead of Y in Z") share its
    common words, not their subject. The overlap coefficient (shared / the smaller text) is what a
    short restatement with one value changed ("4 workers" / "16 workers") keeps high."""
    if not a or not b:
        return 0.0, 0.0

    def weight(terms: frozenset[str]) -> float:
        return sum(math.log(1 + n / max(df.get(t, 0), 1)) for t in terms)
    both = weight(a & b)
    return both / weight(a | b), both / min(weight(a), weight(b))


@functools.lru_cache(maxsize=2048)
def cues(text: str) -> frozenset[tuple[str, str]]:
    """(kind, word) for the words of `text` that say something changed or is not so (`_CUES`)."""
    out: set[tuple[str, str]] = set()
    for word in textproc.word_tokens(text.replace("’", "").replace("'", "")):
        script = textproc.script_of(word)
        for kind, (en, ru, ko) in _CUES.items():
            if script == "latin" and word in en:
                out.add((kind, word))
            elif script == "cyrillic" and textproc.stem_word(word) in ru:
                out.add((kind, textproc.stem_word(word)))
            elif script == "hangul":
                out.update((kind, part) for part in ko if part in word)
    return frozenset(out)


def cue_kind(new: str, old: str) -> str | None:
    """The strongest cue the newer text has and the older has not ("change", then "not"), or None:
    "use X instead of Y" in both is style, not news."""
    fresh = {kind for kind, _ in cues(new) - cues(old)}
    return next((k for k in _CUES if k in fresh), None)


def named_in_both(entities: list[str], a: str, b: str) -> bool:
    """Whether one of `entities` is written in both texts, by its terms (so `каталога` names
    каталог, `알림을` names 알림, `web workspace` names web-workspace): a tag alone may be loose, a
    name in both says the two are about the same thing."""
    ta, tb = set(textproc.terms(a)), set(textproc.terms(b))
    return any((name := {textproc.stem_word(w) for w in textproc.word_tokens(e)}) and name <= ta and name <= tb
               for e in entities)


def is_conflict(similarity: float, overlap: float, shared: bool, named: bool, cue: str | None) -> bool:
    """Whether a related pair may be a replacement or contradiction (see `CHANGE_SIMILARITY`)."""
    if cue == "change":
        return similarity >= CHANGE_SIMILARITY
    if cue == "not":
        return similarity >= (NOT_SIMILARITY if named else NOT_ALONE_SIMILARITY)
    return shared and overlap >= ALONE_OVERLAP


def settled(a: Row | Subject, b: Row) -> bool:
    """A pair a person or agent already decided: kept both, or one supersedes the other."""
    return (b.id in a.distinct_from or a.id in b.distinct_from or b.superseded_by == a.id
            or (isinstance(a, Row) and a.superseded_by == b.id))


def candidates(index: Index, subject: Subject) -> set[int]:
    """The rowids of the memories worth weighing against the subject: a bounded search (see
    `PROBE_TERMS`), so its cost does not grow with the store."""
    df = index.doc_freq(term_set(f"{subject.title} {subject.excerpt}"))
    found = set(index.recent_with_entities(subject.entities, ENTITY_LIMIT))
    probe: list[str] = []
    postings = 0
    # Rarest first: a restatement shares its subject's distinctive words, not its common ones.
    for term, n in sorted(((t, n) for t, n in df.items() if n), key=lambda tn: (tn[1], tn[0])):
        if len(probe) == PROBE_TERMS or postings + n > PROBE_POSTINGS:
            break
        probe.append(term)
        postings += n
    if probe:
        found.update(rowid for rowid, _ in index.fts("fts_stem", planner.fts_or(probe), PROBE_LIMIT))
    return found


def neighbours(index: Index, subject: Subject, limit: int = NEIGHBOUR_LIMIT) -> list[Neighbour]:
    """Up to `limit` live memories the subject may contradict, most similar first."""
    return weigh(index, subject, candidates(index, subject), limit)


def weigh(index: Index, subject: Subject, rowids: set[int], limit: int = NEIGHBOUR_LIMIT) -> list[Neighbour]:
    """Of the memories `rowids`, up to `limit` the subject may replace or contradict, most similar first."""
    probe = f"{subject.title} {subject.excerpt}"
    names = {e.lower() for e in subject.entities}
    mine = term_set(probe)
    when = parse_iso(subject.updated)
    related: list[tuple[Row, list[str], float, str | None]] = []
    for row in index.rows(rowids):
        if row.id == subject.id or row.state == "deprecated" or row.superseded_by or settled(subject, row):
            continue
        shared = sorted(e for e in row.entities if e.lower() in names)
        theirs = f"{row.title} {row.excerpt}"
        sim = jaccard(mine, term_set(theirs))
        if (shared or sim >= MIN_SIMILARITY) and sim >= PLAIN_FLOOR:
            related.append((row, shared, sim, cue_kind(probe, theirs)))
    df = index.doc_freq(mine.union(*(term_set(f"{r.title} {r.excerpt}") for r, _, _, _ in related)))
    total = index.count()
    out: list[Neighbour] = []
    for row, shared, sim, cue in related:
        theirs = f"{row.title} {row.excerpt}"
        weighted, overlap = weighted_overlap(mine, term_set(theirs), df, total)
        if not is_conflict(weighted, overlap, bool(shared), named_in_both(shared, probe, theirs), cue):
            continue
        other = parse_iso(row.updated or row.created)
        gap = abs((when - other).total_seconds()) / 86400 if when and other else 0.0
        out.append(Neighbour(row, shared, round(sim, 3), round(gap, 2)))
    out.sort(key=lambda n: (len(n.shared_entities) > 0, n.similarity, n.row.updated or ""), reverse=True)
    return out[:limit]
