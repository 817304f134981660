"""The conflict gate: which existing memories a new one may contradict, and pair identity."""

from __future__ import annotations

import functools
import hashlib
import math
import re
from dataclasses import dataclass

from memory_mcp.index import textproc
from memory_mcp.index.db import Index
from memory_mcp.index.schema import Row
from memory_mcp.recall import loanwords, planner, quantities
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
# A restatement with its value changed and no word saying so ("Ingest workers target Python 3.12"
# after "... run on Python 3.10") is raised when the old text's value is gone and a new one of the
# same kind stands in its place (`swapped`), the pair shares an entity, and this much (weighted):
SWAP_SIMILARITY = 0.2
# A restatement changes a value or two; two notes written from one template ("X is 55 ms at p95,
# Y reviews it") differ in most of theirs. More values than this gone or new is not a swap.
SWAP_LIMIT = 2

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


# What a value is, beyond numbers, identifiers and names written as such: number words, units and
# how often (quantities), and weekdays (Korean and Russian write them in lower case; Russian by
# stem, Korean as parts of a word).
_WEEKDAYS = (frozenset(textproc.stem_word(w) for w in ("понедельник", "вторник", "среда", "четверг", "пятница",
                                                        "суббота", "воскресенье")),
             ("월요일", "화요일", "수요일", "목요일", "금요일", "토요일", "일요일"))
_TOKEN = re.compile(r"[^\s]+")
_EDGE = ".,;:!?()[]{}\"'`«»“”"
_LATIN_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]*")
# How far either side of a number or identifier the two texts must share a word for one value to
# stand in the other's place: "after 5 seconds" / "at two seconds", not "is 2 GB" / "after six hours".
CONTEXT = 2


@dataclass(frozen=True)
class Value:
    kind: str  # "number", "ident", "name" or "often"
    key: str  # what two texts compare: digits, a lower-cased identifier, a name's stem, "1/1h"
    context: frozenset[str]  # stems of the words around it (numbers and identifiers only)


def _kind(core: str, script: str, initial: bool, foreign: bool) -> str | None:
    """What kind of value the word `core` (of `script`) is, or None: `initial` when it opens a
    sentence (a capital there says nothing), `foreign` when the text is Russian or Korean (a Latin
    word there is a product's name)."""
    low = core.lower()
    if quantities.number_of(low) or quantities.split_unit(core):
        return "number"
    # "e.g" is an abbreviation, not a path.
    if any(ch.isdigit() for ch in core) or (len(core) > 3 and any(ch in "._/:" for ch in core.strip("._/:"))):
        return "ident"
    # GitHub, PostgreSQL, JWT: a capital inside a Latin word names a thing wherever it stands.
    if (foreign and script == "latin") or (core[0].isupper() and not initial) \
            or (script == "latin" and any(ch.isupper() for ch in core[1:])) \
            or textproc.stem_word(low) in _WEEKDAYS[0] \
            or any(day in core for day in _WEEKDAYS[1]):
        return "name"
    return None


def _context_word(word: str) -> str:
    """A word beside a value as two texts compare it: a unit by its one name ("GB" and "gigabytes"
    are "gb"), any other by its stem."""
    low = word.lower()
    return quantities.unit_of(low) or textproc.stem_word(low)


@functools.lru_cache(maxsize=2048)
def values(text: str) -> frozenset[Value]:
    """The values `text` states (numbers, identifiers, names, weekdays, how often): what a
    replacement swaps."""
    tokens = _TOKEN.findall(textproc.normalize(text))
    words = [w.strip(_EDGE) for w in tokens]
    # A Latin word in Russian or Korean text is a product's name; in English it is only a word.
    foreign = 2 * sum(textproc.script_of(w) == "latin" for w in words) < len(words)
    often = quantities.frequencies([w.lower() for w in words])
    inside = {j for i, (n, _) in often.items() for j in range(i, i + n)}
    kinds: list[str | None] = []
    cores: list[str] = []
    units: dict[int, str] = {}  # a unit written on its number ("8GB", "30초")
    sentence: list[int] = []  # which sentence each word is in: a value's context stays inside it
    initial, prev_number, n = True, False, 0
    for i, raw in enumerate(words):
        script = textproc.script_of(raw) if raw else "other"
        core = raw
        if script == "hangul":  # "8080이다", "PostgreSQL에": the value before the particle
            run = _LATIN_RUN.match(raw)
            core = run.group(0) if run else raw
            if run and (split := quantities.split_unit(raw)):
                core, units[i] = split
            elif not run and (latin := loanwords.name_of(raw)):
                core, script = latin, "latin"  # 레디스 is Redis: a name, as a Latin word here is
            # 두 시간, 여덟 개: a native numeral before its counter.
            if raw in quantities.KOREAN_NUMBERS and i + 1 < len(words) and tokens[i][-1] not in _EDGE:
                core = quantities.KOREAN_NUMBERS[raw]
        elif split := quantities.split_unit(raw):
            core, units[i] = split
        kind = _kind(core, script, initial, foreign or core != raw and script == "latin") \
            if core and i not in inside else None
        n += initial and i > 0
        # "2 GB": a unit after a number is part of that value, not one of its own.
        kinds.append(None if prev_number and kind != "number" else kind)
        cores.append(core)
        sentence.append(n)
        prev_number = kind == "number"
        initial = tokens[i][-1] in ".!?:" if raw else initial
    out = {Value("often", key, frozenset()) for _, key in often.values()}
    for i, (kind, core) in enumerate(zip(kinds, cores, strict=True)):
        if not kind:
            continue
        around = [j for j in (*range(max(0, i - CONTEXT), i), *range(i + 1, min(len(words), i + 1 + CONTEXT)))
                  if words[j] and sentence[j] == sentence[i]]
        context = frozenset() if kind == "name" else \
            frozenset((_context_word(words[j]) for j in around), ) | ({units[i]} if i in units else set())
        key = (quantities.number_of(core.lower()) or core) if kind == "number" else core.lower()
        out.add(Value(kind, key if kind != "name" else textproc.stem_word(core.lower()), context))
    return frozenset(out)


def swapped(new: str, old: str, new_entities: list[str], old_entities: list[str]) -> bool:
    """Whether `new` states a value where `old` stated another of the same kind: one entity for
    another, or a value of `old` gone from `new` and one of its kind new in it (numbers and
    identifiers also with a word around them in common), a few at most (`SWAP_LIMIT`)."""
    mine, theirs = {e.lower() for e in new_entities}, {e.lower() for e in old_entities}
    if len(mine - theirs) == 1 and len(theirs - mine) == 1:
        return True
    a, b = values(new), values(old)
    keys_a, keys_b = {v.key for v in a}, {v.key for v in b}
    if len(keys_a - keys_b) > SWAP_LIMIT or len(keys_b - keys_a) > SWAP_LIMIT:
        return False
    gone = [v for v in b if v.key not in keys_a]
    # How often something happens is said of the memory's subject: no word around it need match.
    return any(v.kind == w.kind and (v.kind in ("name", "often") or v.context & w.context)
               for v in a if v.key not in keys_b for w in gone)


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


def is_conflict(similarity: float, overlap: float, shared: bool, named: bool, cue: str | None,
                swap: bool = False) -> bool:
    """Whether a related pair may be a replacement or contradiction (see `CHANGE_SIMILARITY`,
    `SWAP_SIMILARITY`)."""
    if swap and shared and similarity >= SWAP_SIMILARITY:
        return True
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
        if row.id == subject.id or row.state != "active" or row.superseded_by or settled(subject, row):
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
        # A derived title is the first sentence without its full stop: the stop keeps the title's
        # last word and the body's first apart (the capital that opens a sentence is not a name).
        swap = bool(shared) and weighted >= SWAP_SIMILARITY and swapped(
            f"{subject.title}. {subject.excerpt}", f"{row.title}. {row.excerpt}", subject.entities, row.entities)
        if not is_conflict(weighted, overlap, bool(shared), named_in_both(shared, probe, theirs), cue, swap):
            continue
        other = parse_iso(row.updated or row.created)
        gap = abs((when - other).total_seconds()) / 86400 if when and other else 0.0
        out.append(Neighbour(row, shared, round(sim, 3), round(gap, 2)))
    out.sort(key=lambda n: (len(n.shared_entities) > 0, n.similarity, n.row.updated or ""), reverse=True)
    return out[:limit]
