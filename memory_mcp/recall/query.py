"""Query planner and fusion: any user string -> one positive `text` score per memory rowid.

Planning (`plan`) turns free text into up to six signals. It is safe by construction: user text only
ever reaches FTS5 inside double-quoted string literals (quotes doubled), joined with `OR`, so no
operator, column filter, `NEAR`, `*`, `^` or bracket typed by the user is ever interpreted.

* ``word`` - `fts_word`: the query's content words exactly as `unicode61` indexes them, scored only
  for the stem signal's candidates: a memory holding a word holds its stem, and bm25 over every
  match was most of the query's cost (a query matching 28,000 of 100,000 memories: 28 -> 5 ms;
  LoCoMo, XQuAD and KorQuAD figures unchanged to the decimal). With no stem match, over all.
* ``stem`` - `fts_stem`: the same words through `textproc.terms` (Snowball stems for English and
  Russian, identifier parts, Korean particle stripping and syllable bigrams). Ranked by `best_of`:
  the list ranking every match gives, with bm25 computed for fewer of them.
* ``tri``  - `fts_tri`: substring phrases for chunks words lose: identifiers with punctuation or
  mixed case (`config/flags.yaml`, `getUserBy`, `E4012`); plain chunks only when the word and stem
  signals found nothing (a fragment such as `ployme`).
* ``sym``  - `Index.like`: symbol tokens no FTS table can match (`C#`, `C++`, `.NET`). Their
  1-2 character remains (`c`) are dropped from the word/stem signals, which cannot tell C# from C++.
* ``like`` - `Index.like`: other 1-2 character Latin/Cyrillic words as substrings (`db` in `MongoDB`),
  only when the word and stem signals found nothing: as whole words FTS matches them already, and
  as substrings (`go` in `ago`) they are noise next to real matches (LoCoMo R@10 66.6 -> 66.9).
* ``ent`` - `fts_word`'s entities column: the dictionary entities the query names by their name or
  an alias (the caller finds them, `Dictionary.mentioned`), so `billing` finds the memories of
  `payments-service` when billing is its alias; weighs like a stem match.
* ``pre`` / ``root`` - leading characters of each content word whose stem no memory holds:
  Snowball stems words of one root apart (`логировать` -> логирова, `логи` -> лог; `logger` ->
  logger, `logging` -> log), so such a word would otherwise find nothing. ``pre`` is the prefix
  query `w[:max(4, len-3)]*` on `fts_word` (the memory's word is longer); ``root`` looks on
  `fts_stem` for the stem's own shorter prefixes (down to 4 letters, 3 Cyrillic, 2 Hangul) and
  stems it begins (the memory's word is shorter). Both weigh little (`WEIGHTS`).

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
one of the best candidates in its `source` gain a share of its score, when they are candidates too.

No padding (`MIN_SHARE`): a candidate scoring under a thousandth of the best is dropped. Such a
memory shares with the query only terms FTS5's clamp zeroed (in a store of 5, a word 3 of them
hold), while another memory matched properly: it would be listed with score 0.0, i.e. as padding.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from memory_mcp.index import textproc
from memory_mcp.recall import neighbours

if TYPE_CHECKING:
    from memory_mcp.index.schema import RowFilter

__all__ = ["WEIGHTS", "Plan", "SearchIndex", "apply_coverage", "best_of", "fts5_idf", "fts_or", "fuse", "plan",
           "run_signals", "text_scores", "tokens"]


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

# Shortest leading part of a stem (`root`) and of a word (`pre`) the prefix signals look up, by
# script: a Hangul syllable holds two or three letters, and Russian roots of three letters are
# common (реш-ить / реша-ть) while a three-letter word prefix matches half the vocabulary.
_ROOT_MIN = {"latin": 4, "cyrillic": 3, "hangul": 2}
_PRE_MIN = {"latin": 4, "cyrillic": 4, "hangul": 2}

# Share of the query's best fused score a memory full of time expressions can gain on "when" questions.
TIME_WEIGHT = 0.5
_WHEN_WORDS = frozenset({"when", "когда", "언제"})
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

# Caps that keep a 10 KB query cheap: FTS5 cost grows with the number of OR-ed phrases.
MAX_TERMS = 64
MAX_TRI = 16
MAX_LIKE = 8

# Symbol tokens FTS tokenizers destroy: a word followed by #/+ (C#, F#, C++), or .NET-style.
_SYMBOL_RE = re.compile(r"^(?:[A-Za-z][A-Za-z0-9]*[#+]+|\.[A-Za-z][A-Za-z0-9]*)$")
# A chunk worth a substring search even when its words matched: punctuation between word
# characters (flags.yaml, a/b, user@host), a case change inside (getUserBy), letters+digits (E4012).
_IDENT_RE = re.compile(r"\w[^\w\s]+\w|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]")


@dataclass
class Plan:
    """The signals one query expands to. An empty list means the signal is not run.

    `tri_fallback` holds plain chunks searched by trigram only if words and stems found nothing.
    """

    words: list[str] = field(default_factory=list)
    stems: list[str] = field(default_factory=list)
    tri: list[str] = field(default_factory=list)
    tri_fallback: list[str] = field(default_factory=list)
    sym: list[str] = field(default_factory=list)
    like: list[str] = field(default_factory=list)
    roots: list[tuple[str, str]] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    when: bool = False

    def is_empty(self) -> bool:
        return not (self.words or self.stems or self.tri or self.tri_fallback or self.sym or self.like
                    or self.entities)


def _quote(term: str) -> str:
    """An FTS5 string literal: the only way user text enters a MATCH expression."""
    return '"' + term.replace('"', '""') + '"'


def fts_or(terms: list[str]) -> str:
    """OR of quoted terms: a MATCH expression that cannot be a syntax error for non-empty terms."""
    return " OR ".join(_quote(t) for t in terms)


def _dedup(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def tokens(text: str) -> list[str]:
    """Content words of `text`: lower-cased `unicode61`-style words, stop words dropped, order
    kept, deduplicated. Falls back to all words when every word is a stop word ("who is it?")."""
    words = textproc.word_tokens(text)
    content = [w for w in words if not textproc.is_stopword(w)]
    return _dedup(content or words)


def stems(text: str) -> list[str]:
    """Normalised content terms of `text` (as `fts_stem` holds them), for the store's conflict gate
    and duplicate checks: two texts share a topic when they share stems."""
    # Not cached here: the one caller, conflicts.term_set, caches its own sets, so a second cache of
    # the same texts never hit (0 hits in 5,570 calls over 30 writes at 10k) and held 3 MB.
    return _dedup(textproc.terms(text, drop_stopwords=True) or textproc.terms(text))


# Only the first terms of a query are searched, so stemming a megabyte of pasted text buys nothing.
MAX_QUERY_CHARS = 16_384


def plan(query: str) -> Plan:
    """Expand a free-text query into the signals. Pure; never raises; any string is accepted."""
    p = Plan()
    query = query[:MAX_QUERY_CHARS]
    if not query or not query.strip():
        return p
    chunks = textproc.chunks(query)
    sym = [c.lower() for c in chunks if _SYMBOL_RE.match(c)]
    # What FTS makes of `C#` / `C++` (a lone `c`) matches every C-something: leave it to LIKE.
    degraded = {w for c in sym for w in textproc.word_tokens(c) if len(w) <= 2}
    words = [w for w in tokens(query) if w not in degraded]
    p.words = words[:MAX_TERMS]
    # Terms come from the original text, not the lower-cased words: camelCase splits need the case.
    terms = [t for t in textproc.terms(query, drop_stopwords=True) if t not in degraded]
    # If stripping left nothing (a query of stop words only), search the stop words themselves.
    p.stems = _dedup(terms or [t for t in textproc.terms(query) if t not in degraded])[:MAX_TERMS]
    tri: list[str] = []
    fallback: list[str] = []
    for chunk in chunks:
        # The trigram tokenizer cannot match fewer than 3 characters.
        if len(chunk) < 3 or not any(ch.isalnum() for ch in chunk):
            continue
        low = chunk.lower()
        if _IDENT_RE.search(chunk):
            tri.append(low)
        elif not textproc.is_stopword(low):
            fallback.append(low)
    # Short Latin/Cyrillic words (go, ui, db, я) are also matched as substrings: trigram cannot and
    # a whole-word match misses `MongoDB`. Hangul is left out: its stems and bigrams cover it.
    like = [w for w in words if len(w) <= 2 and not w.isdigit() and textproc.script_of(w) != "hangul"
             and not textproc.is_stopword(w)]
    p.tri = _dedup(tri)[:MAX_TRI]
    p.tri_fallback = _dedup(fallback)[:MAX_TRI]
    p.when = any(w in _WHEN_WORDS for w in textproc.word_tokens(query))
    p.sym = _dedup(sym)[:MAX_LIKE]
    p.like = _dedup(like)[:MAX_LIKE]
    # Only words the stemmer cut an ending from: a made-up token (`heronadd`) has no root to share,
    # and its prefix would find `heronedit`.
    p.roots = [(w, st) for w in p.words if not w.isdigit() and ((st := textproc.stem_word(w)) != w or opened(w))
               and len(w) >= _ROOT_MIN.get(textproc.script_of(w), len(w) + 1)][:MAX_TRI]
    return p


def prefix_needles(word: str, stem: str) -> tuple[list[str], list[str]]:
    """The `fts_word` prefix query and the `fts_stem` terms that look up `word` by its leading
    characters: MATCH expressions (quoted, `*` outside the quotes), empty when there are none.
    A Korean past form also looks up its verb stem (`바꿨어` -> 바꾸*)."""
    script = textproc.script_of(word)
    least = _ROOT_MIN.get(script, len(word) + 1)
    words = [_quote(word[:max(_PRE_MIN.get(script, len(word)), len(word) - 3)]) + "*"]
    roots = [_quote(stem[:n]) for n in range(least, len(stem))]
    if len(stem) >= least:
        roots.append(_quote(stem) + "*")
    verb = opened(word)
    if verb:
        words.append(_quote(verb) + "*")
        roots.append(_quote(verb) + "*")
    return words, roots


# Hangul syllables are composed: 0xAC00 + (initial * 21 + vowel) * 28 + final. A past tense fuses the
# verb's last vowel with 었/았 into one syllable ending in ㅆ (final 20): 바꾸+었 -> 바꿨, 옮기+었 -> 옮겼,
# 하+였 -> 했, 되+었 -> 됐. The vowel before the fusion, by the fused one (ㅏ and ㅓ absorb 아/어).
_HANGUL_BASE, _SSANG_SIOS, _HIEUH, _IEUNG = 0xAC00, 20, 18, 11
_VOWEL_BEFORE = {14: 13, 9: 8, 10: 11, 6: 20, 0: 0, 4: 4, 1: 1}  # ㅝ->ㅜ ㅘ->ㅗ ㅙ->ㅚ ㅕ->ㅣ ㅏ ㅓ ㅐ


def opened(word: str) -> str | None:
    """The verb stem inside a Korean past form (`바꿨어` -> 바꾸, `결정했다` -> 결정하), when it keeps at
    least two syllables; None for any other word."""
    for i, ch in enumerate(word[1:], 1):
        code = ord(ch) - _HANGUL_BASE
        if not 0 <= code < 11172 or code % 28 != _SSANG_SIOS:
            continue
        initial, vowel = divmod(code // 28, 21)
        if initial == _IEUNG and vowel in (0, 4, 6):
            # 았/었/였 written out (만들+었다): no fusion, the stem is what comes before it.
            return word[:i] if i >= 2 else None
        before = _VOWEL_BEFORE.get(vowel)
        if before is None:
            return None
        if vowel == 1 and initial == _HIEUH:
            before = 0  # 했 is 하 + 였
        return word[:i] + chr(_HANGUL_BASE + (initial * 21 + before) * 28)
    return None


def _run_prefix(index: SearchIndex, p: Plan, limit: int, where: RowFilter | None,
                out: dict[str, list[tuple[int, float]]]) -> None:
    """Add the ``pre`` and ``root`` signals for the words of `p` whose stem no memory holds."""
    held = {s for s in {s for _, s in p.roots} if index.matches_any("fts_stem", _quote(s))}
    words: list[str] = []
    roots: list[str] = []
    for word, stem in p.roots:
        if stem not in held:
            w, r = prefix_needles(word, stem)
            words += w
            roots += r
    for name, table, needles in (("pre", "fts_word", words), ("root", "fts_stem", roots)):
        if needles:
            match = " OR ".join(_dedup(needles)[:MAX_TERMS])
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
    """`index.fts(table, fts_or(terms), limit, where)`, the same list, scoring fewer rows when a bound
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
    match = fts_or(terms)
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
        found = index.fts(table, match, limit, where, among=fts_or(rarest[:k]))
        if len(found) < limit:
            break
        least = -found[-1][1]
        if least > rest[k] * (1 + 1e-9):
            return found
        k = next(j for j in range(k + 1, len(idf) + 1) if rest[j] < least)
    return index.fts(table, match, limit, where)


def run_signals(index: SearchIndex, p: Plan, limit: int, where: RowFilter | None = None
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
        out["word"] = [(r, -s) for r, s in index.fts("fts_word", fts_or(p.words), limit,
                                                     where if within is None else None, within)]
    if p.entities:
        match = " OR ".join(f"entities : {_quote(e)}" for e in p.entities[:MAX_TERMS])
        out["ent"] = [(r, -s) for r, s in index.fts("fts_word", match, limit, where)]
    if p.roots:
        _run_prefix(index, p, limit, where, out)
    tri = p.tri
    if p.tri_fallback and not out.get("word") and not out.get("stem"):
        tri = _dedup(tri + p.tri_fallback)[:MAX_TRI]
    if tri:
        out["tri"] = [(r, -s) for r, s in index.fts("fts_tri", fts_or(tri), limit, where)]
    if p.when and (out.get("word") or out.get("stem")):
        out["time"] = [(r, -s) for r, s in index.fts("fts_stem", fts_or(_TIME_TERMS), limit * 4, where)]
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


def apply_coverage(index: SearchIndex, p: Plan, fused: dict[int, float]) -> dict[int, float]:
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
    p = plan(query)
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
