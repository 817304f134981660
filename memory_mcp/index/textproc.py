"""Tokenisation and term normalisation, shared by the index (upsert time) and the query planner.

Three views of a text exist:

* **words** (`word_tokens`): lower-cased alphanumeric runs, the same units SQLite's `unicode61`
  tokenizer produces. These feed the `fts_word` table (SQLite tokenizes the raw text itself) and
  the planner's word terms.
* **terms** (`terms`): normalised index terms for the `fts_stem` table. English and Russian words
  are reduced by the Snowball stemmers of PyStemmer (chosen per token by script), identifiers are
  split into their parts (`getUserById` -> get user by id, `snake_case`, `E4012` -> e 4012 and the
  whole token), and Korean words lose their particles and endings (`보안을` -> 보안, `끄는` -> 끄);
  Korean stems of 3+ syllables also give their syllable bigrams, so compounds are found by parts.
* **raw chunks** (`chunks`): whitespace-delimited pieces with surrounding punctuation trimmed, used
  for trigram phrases and LIKE needles (`config/flags.yaml`, `C#`, `.NET`).

Everything here is pure, deterministic and cheap; the functions are called once per memory at
upsert time and once per query.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import Stemmer

# Version of what `terms`/`stem_text` produce. The index's SCHEMA_VERSION includes it, so changing
# the terms (stemmer, tables, Korean rules) rebuilds every index instead of mixing old and new terms.
TERMS_VERSION = "3"

__all__ = [
    "TERMS_VERSION",
    "chunks",
    "is_stopword",
    "korean_stem",
    "normalize",
    "script_of",
    "split_identifier",
    "stem_text",
    "stem_word",
    "terms",
    "word_tokens",
]

# An identifier-ish span: letters, digits and underscores (`snake_case`, `getUserById`, `E4012`).
_SPAN_RE = re.compile(r"\w+")
# unicode61 treats every non-letter, non-digit as a separator, underscore included.
_WORD_RE = re.compile(r"[^\W_]+")
# Parts of one underscore-free identifier: ACRONYM (not followed by lower case), Capitalised or
# lower-case run, digit run, or a run of non-ASCII letters (Cyrillic, Hangul, ...), kept whole.
_PART_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\W\d_A-Za-z]+")

_HANGUL_RE = re.compile(r"[\uac00-\ud7a3]")
_CYRILLIC_RE = re.compile(r"[\u0400-\u04ff]")
_LATIN_RE = re.compile(r"[A-Za-z\u00c0-\u024f]")

_EN = Stemmer.Stemmer("english")
_RU = Stemmer.Stemmer("russian")
# PyStemmer keeps its own cache too, but a module-level LRU in front of it avoids the per-call
# overhead for the very repetitive vocabulary of a memory store. Sizes from benchmarks/bench_caches.py
# (docs/performance.md): a full entry is about 150 B (English) and 180 B (Russian); a quarter of the
# old 65,536 cost no CPU measurable on a 7,314-memory real-text store, and bounds both to 5.3 MB.
_EN_CACHE = functools.lru_cache(maxsize=16384)(_EN.stemWord)
_RU_CACHE = functools.lru_cache(maxsize=16384)(_RU.stemWord)

# Korean particles (josa) and verbal endings (eomi), longest first. Korean has no Snowball
# stemmer; stripping the closed class of particles/endings from an eojeol is the standard light
# approach (measured on KorQuAD, see docs/recall-eval.md). Only whole syllables are stripped.
_KO_SUFFIXES: tuple[str, ...] = tuple(
    sorted(
        {
            # particles
            "에서부터", "으로부터", "에게서", "한테서", "에서는", "에서도", "에서의", "으로는", "으로도",
            "으로서", "으로써", "에게는", "에게도", "까지는", "까지도", "부터는", "이라고", "이라는",
            "이라도", "이지만", "에서", "에게", "한테", "으로", "까지", "부터", "보다", "처럼", "만큼",
            "이나", "이며", "이랑", "라고", "라는", "에는", "에도", "와는", "과는", "께서", "로서",
            "로써", "로는", "로도", "에의", "이란", "이다", "이고", "인가", "인지", "이요",
            "은", "는", "이", "가", "을", "를", "의", "에", "로", "와", "과", "도", "만", "랑", "란",
            "요",
            # endings (the frequent ones of 하다/되다 verbs and plain verbs)
            "하였다", "되었다", "하였으며", "되었으며", "했으며", "됐으며", "하였고", "되었고",
            "습니다", "합니다", "됩니다", "했다가", "하면서", "되면서", "하여서", "이었다", "였으며",
            "했다", "했던", "했고", "하는", "하고", "하여", "해서", "하던", "하게", "하지", "하기",
            "하며", "하면", "하다", "한다", "되는", "되어", "되고", "되던", "되며", "되면", "된다",
            "됐다", "었다", "았다", "였다", "었던", "았던", "였던", "는다", "으며", "으면", "으나",
            "니다", "면서", "지만", "려고", "도록", "어서", "아서", "인데", "는데", "은데",
            "고", "며", "면", "서", "지", "게", "던", "다", "한", "된", "할", "될", "함", "됨",
        },
        key=len,
        reverse=True,
    )
)

# English irregular verb forms -> base form, applied before the Snowball stemmer, which only
# knows suffixes: a question asks "what did she buy" and the memory says "she bought". This is an
# exception table (what a lemmatiser ships), not a suffix rule; forms that are also common nouns
# (ground, rose, wound, bit) are left out. LoCoMo R@5 58.3 -> 59.2 (docs/recall-eval.md).
_EN_IRREGULAR_SRC = """
arise arose arisen | awake awoke awoken | be was were been | bear bore borne | beat beaten |
become became | begin began begun | bend bent | bet | bite bitten | bleed bled |
blow blew blown | break broke broken | breed bred | bring brought | build built | burn burnt |
buy bought | catch caught | choose chose chosen | cling clung | come came | cost | creep crept |
cut | deal dealt | dig dug | draw drew drawn | dream dreamt | drink drank drunk | drive drove driven |
eat ate eaten | fall fell fallen | feed fed | feel felt | fight fought | find found | flee fled |
fly flew flown | forbid forbade forbidden | forget forgot forgotten | forgive forgave forgiven |
freeze froze frozen | get got gotten | give gave given | go went gone | grow grew grown |
hang hung | have has had | hear heard | hide hid hidden | hit | hold held | hurt | keep kept |
kneel knelt | know knew known | lay laid | lead led | lean leant | leap leapt | learn learnt |
leave left | lend lent | let | lie lain | light lit | lose lost | make made | mean meant | meet met |
pay paid | prove proven | put | quit | read | ride rode ridden | ring rang rung | rise risen |
run ran | say said | see saw seen | seek sought | sell sold | send sent | set | shake shook shaken |
shine shone | shoot shot | show shown | shrink shrank shrunk | shut | sing sang sung | sink sank sunk |
sit sat | sleep slept | slide slid | speak spoke spoken | speed sped | spend spent | spin spun |
split | spread | spring sprang sprung | stand stood | steal stole stolen | stick stuck | sting stung |
stink stank stunk | strike struck | swear swore sworn | sweep swept | swim swam swum | swing swung |
take took taken | teach taught | tear tore torn | tell told | think thought | throw threw thrown |
understand understood | wake woke woken | wear wore worn | weep wept | win won |
write wrote written | child children | person people | man men | woman women | mouse mice |
foot feet | tooth teeth
"""
_EN_IRREGULAR: dict[str, str] = {
    form: group.split()[0]
    for group in _EN_IRREGULAR_SRC.split("|")
    for form in group.split()[1:]
}


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Query-side stop words: function words and question words that carry no topic. BM25's IDF
# already discounts them, but they still add noise to OR queries over short memories (measured).
_STOP_EN = _wordset(
    """
    a an the and or but if of to in on at by for with from as into onto about over under than then
    is are was were be been being am do does did done doing have has had having will would shall
    should can could may might must i me my mine we us our ours you your yours he him his she her
    hers it its they them their theirs this that these those there here what which who whom whose
    when where why how whats s t d ll re ve m not no so too very just also any some all each
    both either neither up down out off again further once only own same such other more most
    many much few lot kind sort thing things
    """
)
_STOP_RU = _wordset(
    """
    и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее её мне
    было вот от меня еще ещё нет о об из ему когда даже ли если уже или ни быть был него до вас
    там себя ей они тут где есть ней для мы тебя их чем была сам без чего тоже себе под будет ж
    тогда кто этот того этого какой какая какое какие каким какую ним здесь этом этой эти эту
    тот та те при нас про них им это который которая которое которые которых котором
    чтобы чтоб были также ко сколько почему зачем куда откуда чей чья чьи
    """
)
_STOP_KO = _wordset(
    """
    무엇 무엇인가 무엇인지 무슨 어떤 어떻게 어디 어디인가 어느 언제 누구 누가 몇 왜 얼마 얼마나 그 이 저
    것 수 등 및 때 곳 인물 사람 이름
    """
)


_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def normalize(text: str) -> str:
    """NFKC-normalise so full-width forms, ligatures and compatibility jamo compare equal; control
    characters become spaces (a NUL would end an SQLite string early)."""
    return unicodedata.normalize("NFKC", _CONTROL_RE.sub(" ", text))


def script_of(token: str) -> str:
    """Classify a token as 'hangul', 'cyrillic', 'latin', 'digit' or 'other' (first match wins)."""
    if _HANGUL_RE.search(token):
        return "hangul"
    if _CYRILLIC_RE.search(token):
        return "cyrillic"
    if _LATIN_RE.search(token):
        return "latin"
    if token.isdigit():
        return "digit"
    return "other"


def word_tokens(text: str) -> list[str]:
    """Lower-cased alphanumeric runs, matching what `unicode61` indexes in `fts_word`."""
    return [m.group(0).lower() for m in _WORD_RE.finditer(normalize(text))]


def split_identifier(span: str) -> list[str]:
    """Split one `\\w+` span into identifier parts, original case kept.

    `getUserById` -> [get, User, By, Id]; `snake_case` -> [snake, case]; `E4012` -> [E, 4012];
    `HTTPServer` -> [HTTP, Server]. A plain word comes back as a single part.
    """
    parts: list[str] = []
    for piece in span.split("_"):
        if piece:
            parts.extend(_PART_RE.findall(piece))
    return parts


def korean_stem(word: str) -> str:
    """Strip one trailing particle or ending from a Hangul word, keeping at least one syllable."""
    for suffix in _KO_SUFFIXES:
        if len(word) > len(suffix) and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def stem_word(word: str) -> str:
    """Normalise one lower-cased, underscore-free word by its script."""
    script = script_of(word)
    if script == "latin":
        return str(_EN_CACHE(_EN_IRREGULAR.get(word, word)))
    if script == "cyrillic":
        return str(_RU_CACHE(word.replace("ё", "е")))
    if script == "hangul":
        return korean_stem(word)
    return word


def terms(text: str, drop_stopwords: bool = False) -> list[str]:
    """Normalised index terms of `text`, in order, duplicates kept (BM25 wants term frequency).

    Identifier spans contribute their parts (stemmed) and, when they had more than one part, the
    whole lower-cased span too, so both `getUserById` and `user` find `getUserById`. With
    `drop_stopwords` (query side), stop words are dropped *before* stemming: their stems are
    not in the list (`does` -> `doe`, `why` -> `whi`).
    """
    out: list[str] = []
    for span in _SPAN_RE.findall(normalize(text)):
        out += _span_terms(span, drop_stopwords)
    return out


# A store's vocabulary repeats: caching whole spans makes indexing and the conflict gate's term sets
# several times cheaper than stemming every occurrence (benchmarks/perf.py, docs/performance.md).
# 8,192 spans hold about 3.2 MB (measured: 16,384 held 6.5 MB, for a hit rate of 0.902 against 0.893).
@functools.lru_cache(maxsize=8192)
def _span_terms(span: str, drop_stopwords: bool) -> tuple[str, ...]:
    """The terms of one `\\w+` span (see `terms`)."""
    parts = split_identifier(span)
    if not parts:
        return ()
    if len(parts) == 1:
        word = parts[0].lower()
        if drop_stopwords and is_stopword(word):
            return ()
        st = stem_word(word)
        if len(st) >= 3 and script_of(st) == "hangul":
            # Korean compounds (국가보안법) are written without spaces; syllable bigrams of
            # the stem let 보안 find them (KorQuAD R@1 0.873 -> 0.893, docs/recall-eval.md).
            return (st, *(st[i : i + 2] for i in range(len(st) - 1)))
        return (st,)
    out = [stem_word(p.lower()) for p in parts if not (drop_stopwords and is_stopword(p.lower()))]
    # The joined form lets a query typed as one word (getuserbyid, e4012) match too.
    out.append("".join(p.lower() for p in parts))
    return tuple(out)


def stem_text(text: str) -> str:
    """Whitespace-joined `terms(text)`: the column text stored in the `fts_stem` table."""
    return " ".join(terms(text))


def is_stopword(word: str) -> bool:
    """True for a lower-cased word (or Korean stem) that carries no topic in a query."""
    return word in _STOP_EN or word in _STOP_RU or word in _STOP_KO


_CHUNK_TRIM = "\"'`()[]{}<>,;:!?“”‘’«»…"


def chunks(text: str) -> list[str]:
    """Whitespace-delimited pieces of `text`, NFKC-normalised, surrounding punctuation trimmed.

    Internal punctuation is kept (`config/flags.yaml`, `C++`, `.NET`, `user@host`) because these
    are what trigram phrases and LIKE needles look for. A trailing full stop is trimmed unless the
    chunk starts with one (`.NET`).
    """
    out: list[str] = []
    for raw in normalize(text).split():
        chunk, prev = raw, ""
        while chunk != prev:  # "(flags.yaml)." needs brackets and the full stop trimmed in turn
            prev = chunk
            chunk = chunk.strip(_CHUNK_TRIM)
            if chunk.endswith(".") and not chunk.startswith("."):
                chunk = chunk.rstrip(".")
        if chunk:
            out.append(chunk)
    return out
