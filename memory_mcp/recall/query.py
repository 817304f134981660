"""Running and fusing a query's signals: any user string -> one positive `text` score per memory rowid.

Planning is planner.py's (`planner.plan`): up to six signals from any string, each a safe MATCH
expression. This module runs them on the index and fuses what they find.

Fusion (`fuse`): the score of a memory is the weighted sum of its positive bm25 on each FTS
signal (`WEIGHTS`); the two LIKE signals add the fraction of their needles found, scaled to the best
FTS score of the query (1.0 when FTS found nothing): a symbol match weighs like the best text
match.
Summing raw bm25 beat per-signal max-normalisation and reciprocal-rank fusion on every set; the
weights were tuned on LoCoMo conversations 0-4 and checked on XQuAD/KorQuAD (docs/recall-eval.md).

Time intent: a question asking "when" (when / когда / 언제) also runs a ``time`` signal, an OR of
time expressions (yesterday, last week, month names, вчера, 어제, ...) on `fts_stem`; it only
re-orders memories the other signals found, lifting the ones that say when something happened
(`TIME_WEIGHT`; LoCoMo R@5 58.3 -> 58.7 on the tuning conversations, 56.9 -> 57.5 held out).

Coverage (`COVERAGE_EXP`): the fused score of each candidate is multiplied by
(share of the query's content terms the memory contains) ** 0.5, the classic "coord" factor. bm25
alone lets one rare term outweigh three matched common ones, and FTS5 clamps the IDF of a term
found in more than half the memories to ~0, so a speaker's or project's name counted for nothing.
(LoCoMo R@5 57.0 -> 58.3 on the tuning conversations, XQuAD ru R@1 0.913 -> 0.922.)

`text_scores` finally divides by the query's best fused score, so `text` is in (0, 1] with the best
match at 1.0 (the scale the store uses for "no query" and MMR's similarity). This keeps the order
and also hides FTS5's IDF clamp: a term in more than half of a small store gets an IDF of 1e-6, so
raw scores there are ~1e-6 and would round to 0.

Neighbours in time (`neighbours.spread`, after coverage): the memories written just before and after
one of the best candidates in its thread (its session, else its `source`) gain a share of its score,
when they are candidates too.

No padding (`MIN_SHARE`): a candidate scoring under a thousandth of the best is dropped. Such a
memory shares with the query only terms FTS5's clamp zeroed (in a store of 5, a word 3 of them
hold), while another memory matched properly: it would be listed with score 0.0, i.e. as padding.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from memory_mcp.index import textproc
from memory_mcp.recall import neighbours, planner

if TYPE_CHECKING:
    from memory_mcp.index.schema import RowFilter

__all__ = ["WEIGHTS", "SearchIndex", "apply_coverage", "best_of", "fts5_idf", "fuse", "run_signals", "text_scores"]


class SearchIndex(Protocol):
    """The part of `memory_mcp.index.db.Index` the planner uses."""

    def fts(self, table: str, match: str, limit: int, where: RowFilter | None = None,
            within: Sequence[int] | None = None, among: str | None = None) -> list[tuple[int, float]]: ...

    def doc_freq(self, terms: Iterable[str]) -> dict[str, int]: ...

    def count(self) -> int: ...

    def like(self, needles: list[str], limit: int, where: RowFilter | None = None) -> list[tuple[int, int]]: ...

    def stem_texts(self, rowids: list[int]) -> dict[int, str]: ...

    def matches_any(self, table: str, match: str) -> bool: ...

    def neighbours(self, rowids: Iterable[int], window: int, where: RowFilter | None = None
                   ) -> dict[int, list[int]]: ...


# Fusion weights per signal. Stems carry the most (inflection-proof); exact words add a bonus for
# the form the user typed; trigram and LIKE are fallbacks that must not reorder prose results.
WEIGHTS: dict[str, float] = {"word": 0.5, "stem": 1.0, "tri": 0.2, "sym": 1.0, "like": 0.2,
                             "pre": 0.2, "root": 0.2, "ent": 1.0}

# Share of the query's best fused score a memory full of time expressions can gain on "when" questions.
TIME_WEIGHT = 0.5
_TIME_CUES = (
    "yesterday today tonight tomorrow ago last next week weekend month year recently since before after "
    "morning evening night date monday tuesday wednesday thursday friday saturday sunday january february "
    "march april may june july august september october november december "
    "вчера сегодня завтра назад прошлой прошлом неделе неделю выходные месяц году лет утром вечером "
    "ночью дата январе феврале марте апреле мае июне июле августе сентябре октябре ноябре декабре "
    "어제 오늘 내일 지난 다음 주말 년 월 일 시 날짜 아침 저녁 밤"
)
_TIME_TERMS = list(dict.fromkeys(t for t in textproc.terms(_TIME_CUES) if t))

# Exponent of the coverage ("coord") factor; 0 disables it. 0.5 beat 1 and 2 (docs/recall-eval.md).
COVERAGE_EXP = 0.5
# Share of the best fused score under which a candidate is no result (see the module docstring).
MIN_SHARE = 1e-3
# How many fused candidates get the coverage factor (the rest keep their order below them).
COVERAGE_DEPTH = 100


def _run_prefix(index: SearchIndex, p: planner.Plan, limit: int, where: RowFilter | None,
                out: dict[str, list[tuple[int, float]]]) -> None:
    """Add the ``pre`` and ``root`` signals for the words of `p` whose stem no memory holds."""
    held = {s for s in {s for _, s in p.roots} if index.matches_any("fts_stem", planner.quote(s))}
    words: list[str] = []
    roots: list[str] = []
    for word, stem in p.roots:
        if stem not in held:
            w, r = planner.prefix_needles(word, stem)
            words += w
            roots += r
    for name, table, needles in (("pre", "fts_word", words), ("root", "fts_stem", roots)):
        if needles:
            match = " OR ".join(planner.dedup(needles)[:planner.MAX_TERMS])
            out[name] = [(r, -s) for r, s in index.fts(table, match, limit, where)]


# FTS5's bm25 constant k1 (fts5_aux.c): a term adds less than (K1 + 1) x its IDF to any row.
K1 = 1.2
# `best_of`'s first try: the rarest terms until the others could add at most this share of the
# query's bound. 0.25 beat 0.4, 0.5 and one term on the perf harness's two 10k stores; at 100k
# generated 0.5 did better (20.8 against 25.0 ms median stem query), 0.25 kept for the common size.
FIRST_SHARE = 0.25


def fts5_idf(rows: int, hits: int) -> float:
    """bm25's IDF as FTS5 computes it, clamped to 1e-6 for a term in over half the rows."""
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0 else 1e-6


def best_of(index: SearchIndex, table: str, terms: list[str], limit: int, where: RowFilter | None = None
            ) -> list[tuple[int, float]]:
    """`index.fts(table, planner.fts_or(terms), limit, where)`, the same list, scoring fewer rows when a bound
    allows (MaxScore). `terms` are stemmed terms as `term_df` counts them (the `fts_stem` table's).

    bm25 sums over the query's terms, and one term adds less than (K1 + 1) x its IDF to any row (the
    term-frequency part saturates). So when the `limit`-th best of the rows holding one of the rarest
    terms scores above all the other terms could add, no row holding only those can enter the list:
    ranking the rows holding a rare term, each by the whole query's bm25 (`fts` with `among`), is
    exact. A query of common words matches a third of a generated store (34,000 of 100,000) and bm25
    over every match was most of its cost. When the first try falls short, its `limit`-th score says
    how many more terms the second must take (it ranks a superset, so it cannot score lower); the
    whole query is the fallback. A quoted term that FTS5 splits into a phrase matches at least the
    memories `term_df` counts, so no IDF here is below FTS5's and the bound stays safe."""
    match = planner.fts_or(terms)
    if len(terms) < 2:
        return index.fts(table, match, limit, where)
    df = index.doc_freq(terms)
    rows = index.count()
    rarest = sorted(terms, key=lambda t: df.get(t, 0))
    idf = [fts5_idf(rows, df.get(t, 0)) for t in rarest]
    # rest[k]: the most the terms after the k rarest can add to a row.
    rest = [(K1 + 1) * sum(idf[k:]) for k in range(len(idf) + 1)]
    k = next(k for k in range(1, len(idf) + 1) if rest[k] <= FIRST_SHARE * rest[0])
    while k < len(terms):
        found = index.fts(table, match, limit, where, among=planner.fts_or(rarest[:k]))
        if len(found) < limit:
            break
        least = -found[-1][1]
        if least > rest[k] * (1 + 1e-9):
            return found
        k = next(j for j in range(k + 1, len(idf) + 1) if rest[j] < least)
    return index.fts(table, match, limit, where)


def run_signals(index: SearchIndex, p: planner.Plan, limit: int, where: RowFilter | None = None
                ) -> dict[str, list[tuple[int, float]]]:
    """Run each non-empty signal of `p` over the memories `where` admits (all when None):
    signal -> [(rowid, positive score)], best first."""
    out: dict[str, list[tuple[int, float]]] = {}
    if p.stems:
        out["stem"] = [(r, -s) for r, s in best_of(index, "fts_stem", p.stems, limit, where)]
    if p.words:
        # Only the stem signal's candidates are scored (see the module docstring); they passed `where`
        # already, and checking it again for every match cost as much as the bm25 saved.
        within = [r for r, _ in out.get("stem", [])] or None
        out["word"] = [(r, -s) for r, s in index.fts("fts_word", planner.fts_or(p.words), limit,
                                                     where if within is None else None, within)]
    if p.entities:
        match = " OR ".join(f"entities : {planner.quote(e)}" for e in p.entities[:planner.MAX_TERMS])
        out["ent"] = [(r, -s) for r, s in index.fts("fts_word", match, limit, where)]
    if p.roots:
        _run_prefix(index, p, limit, where, out)
    tri = p.tri
    if p.tri_fallback and not out.get("word") and not out.get("stem"):
        tri = planner.dedup(tri + p.tri_fallback)[:planner.MAX_TRI]
    if tri:
        out["tri"] = [(r, -s) for r, s in index.fts("fts_tri", planner.fts_or(tri), limit, where)]
    if p.when and (out.get("word") or out.get("stem")):
        out["time"] = [(r, -s) for r, s in index.fts("fts_stem", planner.fts_or(_TIME_TERMS), limit * 4, where)]
    found = bool(out.get("word") or out.get("stem"))
    for name, needles in (("sym", p.sym), ("like", [] if found else p.like)):
        if needles:
            n = len(needles)
            out[name] = [(r, hits / n) for r, hits in index.like(needles, limit, where) if hits > 0]
    return out


_LIKE_SIGNALS = ("sym", "like")


def fuse(signals: dict[str, list[tuple[int, float]]], weights: dict[str, float] | None = None) -> dict[int, float]:
    """Weighted sum of the FTS signals' positive bm25, plus the LIKE fraction scaled to the best
    FTS score of the query (1.0 when FTS found nothing)."""
    w = WEIGHTS if weights is None else weights
    total: dict[int, float] = {}
    for name, rows in signals.items():
        if name in _LIKE_SIGNALS or name == "time":
            continue
        wt = w.get(name, 0.0)
        for rid, s in rows:
            total[rid] = total.get(rid, 0.0) + wt * max(s, 0.0)
    fts_found = bool(total)
    scale = max(total.values(), default=0.0) or 1.0
    time_rows = signals.get("time")
    if time_rows and total:
        # Only re-orders what the query found: a memory about some other day is no answer.
        best_time = max(s for _, s in time_rows) or 1.0
        for rid, s in time_rows:
            if rid in total:
                total[rid] += w.get("time", TIME_WEIGHT) * scale * s / best_time
    for name in _LIKE_SIGNALS:
        wt = w.get(name, 0.0) if fts_found else 1.0
        for rid, frac in signals.get(name, []):
            total[rid] = total.get(rid, 0.0) + wt * scale * frac
    return {rid: s for rid, s in total.items() if s > 0}


def apply_coverage(index: SearchIndex, p: planner.Plan, fused: dict[int, float]) -> dict[int, float]:
    """Multiply the best `COVERAGE_DEPTH` candidates by (matched query terms / query terms) ** exp.

    Candidates below the depth are scaled by the smallest factor seen so they stay below."""
    terms = set(p.stems)
    if COVERAGE_EXP <= 0 or len(terms) < 2 or not fused:
        return fused
    ranked = sorted(fused, key=lambda r: (-fused[r], r))
    head = ranked[:COVERAGE_DEPTH]
    texts = index.stem_texts(head)
    if not texts:
        return fused
    out: dict[int, float] = {}
    lowest = 1.0
    # A term is held when it stands between spaces in the space-joined stems: five times faster
    # than splitting each text into a set (0.1 against 0.5 ms for 100 memories).
    needles = [f" {t} " for t in terms]
    for rid in head:
        text = f" {texts.get(rid, '')} "
        found = sum(1 for needle in needles if needle in text)
        factor = (max(found, 1) / len(terms)) ** COVERAGE_EXP
        lowest = min(lowest, factor)
        out[rid] = fused[rid] * factor
    for rid in ranked[COVERAGE_DEPTH:]:
        out[rid] = fused[rid] * lowest
    return out


def text_scores(index: SearchIndex, query: str, pool: int, where: RowFilter | None = None,
                entities: Sequence[str] = ()) -> dict[int, float]:
    """Plan `query`, run its signals on the memories of `index` that `where` admits, fuse: rowid ->
    text score in (0, 1], the best match 1.0, at most `pool` entries. `entities` are the canonical
    names of the dictionary entities the query mentions. Any string is accepted; an empty query
    gives {}."""
    if pool <= 0:
        return {}
    p = planner.plan(query)
    p.entities = list(entities)
    if p.is_empty():
        return {}
    # Each signal looks deeper than the pool so a memory that is second-best on two signals can
    # still beat one that is best on only one.
    limit = max(pool * 2, 50)
    fused = neighbours.spread(index, apply_coverage(index, p, fuse(run_signals(index, p, limit, where))), where)
    top = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:pool]
    if not top:
        return {}
    best = top[0][1]
    return {rid: s / best for rid, s in top if s >= best * MIN_SHARE}
