"""Query planning: any user string -> the signals recall runs on the index (query.py runs and
fuses them). Pure functions over text; no SQL here.

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
  When stems part further along a root, ``root`` also looks up the other derivations' stems
  (`derivations`): English by a table of derivational endings (decide / decision, retain /
  retention: a shared prefix alone would find decimal and retail), Russian by a stem prefix of at
  least five letters (запуст- / запуск), Korean through the letters of its syllables (만드는 /
  만들려면, 골라 / 고르려면, 바꿔 / 바꾸려면).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memory_mcp.index import textproc

# Shortest leading part of a stem (`root`) and of a word (`pre`) the prefix signals look up, by
# script: a Hangul syllable holds two or three letters, and Russian roots of three letters are
# common (реш-ить / реша-ть) while a three-letter word prefix matches half the vocabulary.
_ROOT_MIN = {"latin": 4, "cyrillic": 3, "hangul": 2}
_PRE_MIN = {"latin": 4, "cyrillic": 4, "hangul": 2}

# Words that make a question ask "when" (the time signal, query.TIME_WEIGHT).
_WHEN_WORDS = frozenset({"when", "когда", "언제"})

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


def quote(term: str) -> str:
    """An FTS5 string literal: the only way user text enters a MATCH expression."""
    return '"' + term.replace('"', '""') + '"'


def fts_or(terms: list[str]) -> str:
    """OR of quoted terms: a MATCH expression that cannot be a syntax error for non-empty terms."""
    return " OR ".join(quote(t) for t in terms)


def dedup(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def tokens(text: str) -> list[str]:
    """Content words of `text`: lower-cased `unicode61`-style words, stop words dropped, order
    kept, deduplicated. Falls back to all words when every word is a stop word ("who is it?")."""
    words = textproc.word_tokens(text)
    content = [w for w in words if not textproc.is_stopword(w)]
    return dedup(content or words)


def stems(text: str) -> list[str]:
    """Normalised content terms of `text` (as `fts_stem` holds them), for the store's conflict gate
    and duplicate checks: two texts share a topic when they share stems."""
    # Not cached here: the one caller, conflicts.term_set, caches its own sets, so a second cache of
    # the same texts never hit (0 hits in 5,570 calls over 30 writes at 10k) and held 3 MB.
    return dedup(textproc.terms(text, drop_stopwords=True) or textproc.terms(text))


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
    p.stems = dedup(terms or [t for t in textproc.terms(query) if t not in degraded])[:MAX_TERMS]
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
    p.tri = dedup(tri)[:MAX_TRI]
    p.tri_fallback = dedup(fallback)[:MAX_TRI]
    p.when = any(w in _WHEN_WORDS for w in textproc.word_tokens(query))
    p.sym = dedup(sym)[:MAX_LIKE]
    p.like = dedup(like)[:MAX_LIKE]
    # Only words the stemmer cut an ending from: a made-up token (`heronadd`) has no root to share,
    # and its prefix would find `heronedit`.
    # A word the stemmer left whole may still be one derivation of a root (retain, 바꿔).
    p.roots = [(w, st) for w in p.words if not w.isdigit()
               and ((st := textproc.stem_word(w)) != w or opened(w) or derivations(w, st))
               and len(w) >= _ROOT_MIN.get(textproc.script_of(w), len(w) + 1)][:MAX_TRI]
    return p


# English derivational endings that change the stem (Snowball keeps decid- and decis- apart): each
# ending of a word and what the same root ends in as another part of speech. Read both ways.
_EN_DERIVATIONS = (
    ("ision", "ide"), ("usion", "ude"), ("osion", "ode"), ("asion", "ade"), ("ention", "ain"),
    ("enance", "ain"), ("eption", "eive"), ("iption", "ibe"), ("orption", "orb"), ("umption", "ume"),
    ("etition", "ete"), ("etition", "eat"), ("ission", "it"), ("anation", "ain"), ("uction", "uce"),
    ("uction", "oy"), ("ication", "y"), ("ial", "y"), ("iance", "y"), ("ansion", "and"), ("ension", "end"),
    ("ention", "end"), ("ure", ""), ("ation", "e"), ("ment", ""), ("al", ""),
)
# A Russian stem prefix shorter than this finds other roots (запа- of запах for запуст-).
_RU_ROOT_MIN = 5


def derivations(word: str, stem: str) -> list[str]:
    """`fts_stem` needles for the other derivations of `word`'s root (see the module docstring)."""
    script = textproc.script_of(word)
    out: list[str] = []
    if script == "latin":
        for a, b in _EN_DERIVATIONS:
            for end, other in ((a, b), (b, a)):
                if word.endswith(end) and len(word) - len(end) >= 2:
                    st = textproc.stem_word(word[:len(word) - len(end)] + other)
                    if st != stem:
                        out.append(quote(st))
    elif script == "cyrillic" and len(stem) > _RU_ROOT_MIN:
        out.append(quote(stem[:max(_RU_ROOT_MIN, len(stem) - 2)]) + "*")
    elif script == "hangul":
        # The word too: a stripped "particle" may be the verb's own ending (도와 is not 도 + 와).
        out += (quote(v) + "*" for w in dict.fromkeys((textproc.korean_stem(word), word)) for v in korean_stems(w))
    return dedup(out)


def _syllable(initial: int, vowel: int, final: int) -> str:
    return chr(_HANGUL_BASE + (initial * 21 + vowel) * 28 + final)


def _jamo(ch: str) -> tuple[int, int, int] | None:
    code = ord(ch) - _HANGUL_BASE
    if not 0 <= code < 11172:
        return None
    return code // 588, code % 588 // 28, code % 28


# Vowels a verb's last syllable takes before -어/-아 (쓰+어 -> 써, 바꾸+어 -> 바꿔, 고치+어 -> 고쳐): the
# vowel of the form as written -> the verb's own. ㅓ ㅏ ㅝ ㅘ ㅕ by index.
_VOWEL_OF = {4: (18,), 0: (18,), 14: (13,), 9: (13, 8), 10: (11,), 6: (20,)}
# Letter indices: ㄹ, ㅇ as a first letter; ㄹ, ㄷ, ㅅ, ㅂ as a last; the vowel ㅡ.
_RIEUL_FIRST, _IEUNG_I = 5, 11
_RIEUL, _DIGEUT, _SIOS, _BIEUP, _EU = 8, 7, 19, 17, 18


def korean_stems(stem: str) -> list[str]:
    """The verb stems a Korean form may come from when its letters change with the ending (the
    irregular verbs): 만드 (만드는) -> 만들, 골라 -> 고르, 바꿔 -> 바꾸, 써 -> 쓰, 도와 -> 도우, 듣 -> 들으,
    짓 -> 지으. Compared letter by letter, as 만들 and 만드 share no syllable."""
    if len(stem) < 1 or any(_jamo(ch) is None for ch in stem):
        return []
    head, last = stem[:-1], _jamo(stem[-1])
    assert last is not None
    initial, vowel, final = last
    out: list[str] = []
    if final == 0:
        out.append(head + _syllable(initial, vowel, _RIEUL))  # ㄹ drops before ㄴ: 만드는 of 만들다
        for own in _VOWEL_OF.get(vowel, ()):
            out.append(head + _syllable(initial, own, 0))  # 써 -> 쓰, 바꿔 -> 바꾸, 고쳐 -> 고치
        if initial == _IEUNG_I and vowel in (14, 9) and head:  # ㅂ verbs: 도와 -> 도우 / 돕, 구워 -> 구우
            out.append(head + _syllable(_IEUNG_I, 13, 0))
            h = _jamo(head[-1])
            if h and h[2] == 0:
                out.append(head[:-1] + _syllable(h[0], h[1], _BIEUP))
        if initial == _RIEUL_FIRST and vowel in (0, 4) and head:  # 르 verbs: 골라 -> 고르, 불러 -> 부르
            h = _jamo(head[-1])
            if h and h[2] == _RIEUL:
                out.append(head[:-1] + _syllable(h[0], h[1], 0) + _syllable(_RIEUL_FIRST, _EU, 0))
    elif final == _DIGEUT:  # ㄷ verbs: 듣 -> 들으, 걷 -> 걸으
        out.append(head + _syllable(initial, vowel, _RIEUL) + _syllable(_IEUNG_I, _EU, 0))
    elif final == _SIOS:  # ㅅ verbs: 짓 -> 지으
        out.append(head + _syllable(initial, vowel, 0) + _syllable(_IEUNG_I, _EU, 0))
    return [v for v in dedup(out) if v != stem]


def prefix_needles(word: str, stem: str) -> tuple[list[str], list[str]]:
    """The `fts_word` prefix query and the `fts_stem` terms that look up `word` by its leading
    characters: MATCH expressions (quoted, `*` outside the quotes), empty when there are none.
    A Korean past form also looks up its verb stem (`바꿨어` -> 바꾸*)."""
    script = textproc.script_of(word)
    verb = opened(word)
    if stem == word and not verb:
        return [], derivations(word, stem)  # its prefix has no root to share (heronadd, retail)
    least = _ROOT_MIN.get(script, len(word) + 1)
    words = [quote(word[:max(_PRE_MIN.get(script, len(word)), len(word) - 3)]) + "*"]
    roots = [quote(stem[:n]) for n in range(least, len(stem))]
    if len(stem) >= least:
        roots.append(quote(stem) + "*")
    if verb:
        words.append(quote(verb) + "*")
        roots.append(quote(verb) + "*")
    roots += derivations(word, stem)
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
