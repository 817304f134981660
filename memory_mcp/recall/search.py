"""Recall's pipeline over the index: filters as SQL, the planner's text scores, the score formula,
diversity and the token budget. Reads only the index; the use case holds the lock around it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from memory_mcp.index.db import Index
from memory_mcp.index.schema import RankFacts, Row, RowFilter
from memory_mcp.recall import query, ranking, vectors
from memory_mcp.truth import budget, globs, lifecycle
from memory_mcp.truth.errors import InvalidArgument
from memory_mcp.truth.model import MemoryType, State, enum_value
from memory_mcp.truth.recall import Hit, Recall, Replaced

RECALL_MAX = 50
CHAIN_ON_HIT = 5
# A why-question ("why did we switch to pnpm?") asks for a decision's reasons: decisions' scores are
# multiplied by this for one. The why-set (tests/data/why_set.json, benchmarks/why_eval.py) R@1 went
# 66.7 -> 95.2; no recall_eval set moved (docs/recall-eval.md, "Why-questions").
WHY_DECISION_BOOST = 1.5
_WHY = re.compile(r"^\W*(why|how come)\b|почему|зачем|отчего|왜", re.IGNORECASE)


def row_filter(opts: Recall, entities: Sequence[str]) -> RowFilter:
    """The memories a recall may return: its types, its entities (already normalised), the states
    it includes, and never a memory withheld by feedback. Unknown types are refused."""
    states = {State.ACTIVE.value}
    if opts.include_archived:
        states.add(State.ARCHIVED.value)
    if opts.include_deprecated:
        states.add(State.DEPRECATED.value)
    types = frozenset(enum_value(MemoryType, t, "type").value for t in opts.types)
    if opts.file and opts.query.strip():
        raise InvalidArgument("pass query or file, not both: file lists the memories whose paths globs match it.")
    return RowFilter(frozenset(states), types, tuple(entities), lifecycle.WITHHOLD_AT)


def run(index: Index, opts: Recall, where: RowFilter, mentioned: Sequence[str] = (),
        now: datetime | None = None, matched: Callable[[Row], bool] | None = None,
        pool: int = 0) -> tuple[list[Hit], bool]:
    """The ranked hits of `opts` among the memories `where` admits, and whether the token budget
    cut the list short. `mentioned`: the dictionary entities the query names (by name or alias);
    `now`: the moment ages are counted from (a recall as of a day counts from that day's end);
    `matched`: whether a row's globs match `opts.file`, when the caller matched them already;
    `pool`: how many of a query's best text matches are ranked (0: eight for each hit asked for).
    The order depends on the pool, so a caller asking the same query for more hits with the same
    pool gets the same hits first."""
    limit = opts.limit
    now = now or datetime.now(UTC)
    candidates: Sequence[Row | RankFacts]
    if opts.file:
        about = matched or (lambda r: globs.matches_any(r.paths, opts.file))
        rows = [r for r in index.select(replace(where, with_paths=True)) if about(r)]
        order = {r.rowid: file_order(r, opts.file) for r in rows}
        candidates, scores = rows, {r.rowid: 1.0 for r in rows}
    elif opts.query.strip():
        pool = pool or max(limit * 8, 64)
        scores = vectors.dense_scores(index.conn, opts.query, query.text_scores(index, opts.query, pool, where, mentioned),
                                      where, pool)
        candidates = index.rank_facts(scores)
    else:
        candidates = index.select(where)
        scores = {r.rowid: 1.0 for r in candidates}
    usage = index.usage(r.id for r in candidates)
    why = WHY_DECISION_BOOST if _WHY.search(opts.query) else 1.0
    scored: list[tuple[float, Row | RankFacts]] = []
    for cand in candidates:
        s = ranking.score(scores[cand.rowid], cand.trust, cand.state, cand.updated,
                          usage.get(cand.id, (0, None))[0], cand.feedback, now)
        if cand.type == MemoryType.DECISION.value:
            s *= why
        if s >= opts.min_score:
            scored.append((s, cand))
    # Without a query the list is newest first; with one, by score; by file, the most specific
    # first (`file_order`); newest first among equals.
    scored.sort(key=lambda x: (x[1].updated or x[1].created or "", x[1].id), reverse=True)
    if opts.query.strip():
        scored.sort(key=lambda x: x[0], reverse=True)
    elif opts.file:
        scored.sort(key=lambda x: order[x[1].rowid])
    head = _whole(index, scored[: limit * 3])
    if opts.diversity > 0:
        from memory_mcp.recall import (
            conflicts,  # only here: the prompt hook's recall (no diversity) has no use for it
        )

        sets = {row.rowid: conflicts.term_set(f"{row.title} {row.excerpt}") for _, row in head}
        head = ranking.mmr(head, lambda x: x[0], lambda a, b: conflicts.jaccard(sets[a[1].rowid], sets[b[1].rowid]),
                           opts.diversity, limit)
    hits, cut = _within_budget(head[:limit], opts.max_tokens)
    return [_with_chain(index, h, row) for h, (_, row) in zip(hits, head, strict=False)], cut


def file_order(row: Row, file: str) -> tuple[int, ...]:
    """The one order of the memories about a file (the PreToolUse hook, `recall --file`), smallest
    first: the memory whose paths name the file exactly, then the glob with the longest literal
    prefix (`src/billing/**` before `src/**`), then `**` (`globs.specificity`); at the same level
    the newest comes first. The trust rank (the person's own, then accepted, then unreviewed)
    belongs at the same level, before recency: it goes last in this tuple."""
    return globs.specificity(row.paths, file)


def _whole(index: Index, ranked: list[tuple[float, Row | RankFacts]]) -> list[tuple[float, Row]]:
    """`ranked` with each entry's whole row, in its order (a query's candidates were scored on
    their ranking columns only)."""
    rows = {r.rowid: r for r in index.rows(c.rowid for _, c in ranked if not isinstance(c, Row))}
    return [(s, c if isinstance(c, Row) else rows[c.rowid]) for s, c in ranked]


def _with_chain(index: Index, h: Hit, row: Row) -> Hit:
    """`h` with the memories its row superseded, down the chain, at most CHAIN_ON_HIT."""
    if not row.supersedes:
        return h

    def older(mem_id: str) -> list[str]:
        r = index.get(mem_id)
        return r.supersedes if r else []

    chain = lifecycle.walk(row.id, older, limit=CHAIN_ON_HIT)[:CHAIN_ON_HIT]
    found = [(i, index.get(i)) for i in chain]
    return replace(h, supersedes=[Replaced(i, r.title) for i, r in found if r is not None])


def _within_budget(ranked: list[tuple[float, Row]], max_tokens: int) -> tuple[list[Hit], bool]:
    """The hits that fit `max_tokens` (0: no budget; the first hit always fits)."""
    hits: list[Hit] = []
    spent = 0
    for s, row in ranked:
        cost = budget.hit_tokens(row.path, row.title, row.excerpt)
        if max_tokens and hits and spent + cost > max_tokens:
            return hits, True
        spent += cost
        hits.append(hit(row, s))
    return hits, False


def hit(row: Row, score: float) -> Hit:
    """A recall result for an index row."""
    return Hit(id=row.id, path=row.path, title=row.title, excerpt=row.excerpt, type=row.type, state=row.state,
               trust=row.trust, entities=row.entities, updated=row.updated, score=round(score, 4),
               superseded_by=row.superseded_by)
