"""Query planner and fusion: any user string -> one positive `text` score per memory rowid.

Planning (`plan`) turns free text into four signals, each safe by construction because user text
only ever reaches FTS5 inside double-quoted strings built from alphanumeric terms:

* ``word``  - `fts_word`: the query's words (stop words dropped), OR-ed; words of 4+ characters
  are prefix terms (`deploy*` finds `deployment`).
* ``stem``  - `fts_stem`: the same words through `textproc.terms` (Snowball stems, identifier
  parts, Korean particle stripping), OR-ed.
* ``tri``   - `fts_tri`: raw chunks of 3+ characters as substring phrases (`flags.yaml`,
  `UserBy`), OR-ed.
* ``like``  - `Index.like`: needles FTS cannot match: 1-2 character words and symbol tokens such as
  `C#`, `C++`, `.NET`.

Fusion (`fuse`): each FTS signal's bm25 is made positive and divided by that signal's best score
for this query (so every signal contributes on a 0..1 scale), then the signals are summed with
the weights in `WEIGHTS`. The weights were tuned on LoCoMo conversations 0-4 and checked on
XQuAD/KorQuAD (docs/recall-eval.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from memory_mcp import textproc

__all__ = ["WEIGHTS", "Plan", "SearchIndex", "plan", "fts_or", "text_scores", "tokens"]


class SearchIndex(Protocol):
    """The part of `memory_mcp.index.Index` the planner uses."""

    def fts(self, table: str, match: str, limit: int) -> list[tuple[int, float]]: ...

    def like(self, needles: list[str], limit: int) -> list[tuple[int, int]]: ...


# Fusion weights per signal (see module docstring and docs/recall-eval.md for how they were chosen).
WEIGHTS: dict[str, float] = {"word": 1.0, "stem": 1.0, "tri": 0.3, "like": 0.3}

# Words at least this long become prefix terms in the word signal.
PREFIX_MIN = 4
# Caps that keep a 10 KB query cheap: FTS5 cost grows with the number of OR-ed phrases.
MAX_TERMS = 64
MAX_TRI = 16
MAX_LIKE = 8

# Symbol tokens FTS tokenizers destroy: a word followed by #/+ (C#, F#, C++), or .NET-style.
_SYMBOL_RE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9]*[#+]+|\.[A-Za-z][A-Za-z0-9]*)$")


@dataclass
class Plan:
    """The signals one query expands to. Empty lists mean the signal is not run."""

    words: list[str] = field(default_factory=list)
    stems: list[str] = field(default_factory=list)
    tri: list[str] = field(default_factory=list)
    like: list[str] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (self.words or self.stems or self.tri or self.like)


def _quote(term: str) -> str:
    """An FTS5 string literal: the only way user text enters a MATCH expression."""
    return '"' + term.replace('"', '""') + '"'


def fts_or(terms: list[str], prefix_min: int = 0) -> str:
    """OR of quoted terms; terms of `prefix_min`+ characters (if > 0) get a prefix `*`."""
    parts = []
    for t in terms:
        q = _quote(t)
        if prefix_min and len(t) >= prefix_min:
            q += "*"
        parts.append(q)
    return " OR ".join(parts)


def _dedup(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for it in items:
        if it not in seen:
            seen.add(it)
            out.append(it)
    return out


def tokens(text: str) -> list[str]:
    """Content words of `text` (lower-cased, stop words dropped, order kept, deduplicated).

    Falls back to all words when every word is a stop word ("who is it?" still searches). The
    store may reuse this for its conflict gate so both sides agree on what a term is.
    """
    words = textproc.word_tokens(text)
    content = [w for w in words if not textproc.is_stopword(w) and not textproc.is_stopword(textproc.stem_word(w))]
    return _dedup(content or words)


def plan(query: str) -> Plan:
    """Expand a free-text query into the four signals. Pure; never raises."""
    p = Plan()
    if not query or not query.strip():
        return p
    words = tokens(query)
    stop_all = len(words) > 0 and all(textproc.is_stopword(w) for w in words)
    # Word signal: words FTS can match (3+ characters, or any digit run); shorter ones go to LIKE.
    p.words = [w for w in words if len(w) >= 3 or w.isdigit() or textproc.script_of(w) == "hangul"][:MAX_TERMS]
    stems: list[str] = []
    for w in words:
        for t in textproc.terms(w):
            if stop_all or not textproc.is_stopword(t):
                stems.append(t)
    p.stems = _dedup(stems)[:MAX_TERMS]
    chunks = textproc.chunks(query)
    # Trigram phrases: raw chunks with something FTS words lose (punctuation inside, mixed case
    # identifiers) or any content chunk of 3+ characters; the trigram tokenizer cannot match
    # anything shorter.
    tri = []
    for c in chunks:
        if len(c) < 3:
            continue
        low = c.lower()
        if not any(ch.isalnum() for ch in low):
            continue
        if textproc.is_stopword(low):
            continue
        tri.append(low)
    p.tri = _dedup(tri)[:MAX_TRI]
    like = [c for c in chunks if _SYMBOL_RE.match(c)]
    like += [w for w in words if len(w) <= 2 and not w.isdigit() and not textproc.is_stopword(w)]
    p.like = _dedup([n.lower() for n in like])[:MAX_LIKE]
    return p


def _normalised(rows: list[tuple[int, float]]) -> dict[int, float]:
    """bm25 (negative, lower = better) -> positive score scaled so the best row is 1."""
    if not rows:
        return {}
    best = max(-s for _, s in rows)
    if best <= 0:
        return {rid: 1.0 for rid, _ in rows}
    return {rid: max(-s, 0.0) / best for rid, s in rows}


def run_signals(index: SearchIndex, p: Plan, limit: int) -> dict[str, dict[int, float]]:
    """Run each non-empty signal of `p`, returning per-signal normalised scores (0..1)."""
    out: dict[str, dict[int, float]] = {}
    if p.words:
        out["word"] = _normalised(index.fts("fts_word", fts_or(p.words, PREFIX_MIN), limit))
    if p.stems:
        out["stem"] = _normalised(index.fts("fts_stem", fts_or(p.stems), limit))
    if p.tri:
        out["tri"] = _normalised(index.fts("fts_tri", fts_or(p.tri), limit))
    if p.like:
        n = len(p.like)
        out["like"] = {rid: hits / n for rid, hits in index.like(p.like, limit) if hits > 0}
    return out


def fuse(signals: dict[str, dict[int, float]], weights: dict[str, float] | None = None) -> dict[int, float]:
    """Weighted sum of the per-signal scores."""
    w = WEIGHTS if weights is None else weights
    total: dict[int, float] = {}
    for name, scores in signals.items():
        wt = w.get(name, 0.0)
        if wt <= 0:
            continue
        for rid, s in scores.items():
            total[rid] = total.get(rid, 0.0) + wt * s
    return total


def text_scores(index: SearchIndex, query: str, pool: int) -> dict[int, float]:
    """Plan `query`, run its signals on `index`, fuse: rowid -> positive text score (higher =
    better), at most `pool` entries. Any string is accepted; an empty query gives {}."""
    if pool <= 0:
        return {}
    p = plan(query)
    if p.is_empty():
        return {}
    # Each signal looks deeper than the pool so a memory that is second-best on two signals can
    # still beat one that is best on only one.
    limit = max(pool * 2, 50)
    fused = fuse(run_signals(index, p, limit))
    top = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:pool]
    return dict(top)
