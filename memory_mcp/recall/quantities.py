"""Values written in words, as the conflict gate compares them: numbers spelt out ("eight",
"восемь", 여덟 개), units by any of their names ("GB", "gigabytes", "гигабайт", 기가), and how
often something happens ("hourly", "once a day", "каждый час", "раз в сутки", 매시간, 하루에 한 번).
A restatement writes the same kind of value in other words: "2 GB" / "eight gigabytes",
"once a day" / "every hour". Pure functions over words; the gate (conflicts.values) calls them."""

from __future__ import annotations

import re

_EN_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
               "eleven", "twelve")
# Russian numerals by their forms (a stem would take семья for семь and три for тридцать).
_RU_NUMBERS = (("ноль", "нуль"), ("один", "одна", "одно", "одну", "одного", "одной"), ("два", "две", "двух"),
               ("три", "трёх", "трех"), ("четыре", "четырёх", "четырех"), ("пять", "пяти"), ("шесть", "шести"),
               ("семь", "семи"), ("восемь", "восьми"), ("девять", "девяти"), ("десять", "десяти"))
# Korean native numerals, as written before a counter (한 번, 두 개, 여덟 시간).
_KO_NUMBERS = ("", "한", "두", "세", "네", "다섯", "여섯", "일곱", "여덟", "아홉", "열")
NUMBER_WORDS: dict[str, str] = {
    **{w: str(i) for i, w in enumerate(_EN_NUMBERS)},
    **{w: str(i) for i, forms in enumerate(_RU_NUMBERS) for w in forms},
    "twenty": "20", "thirty": "30", "sixty": "60", "двадцать": "20", "тридцать": "30", "шестьдесят": "60",
}
KOREAN_NUMBERS: dict[str, str] = {w: str(i) for i, w in enumerate(_KO_NUMBERS) if w}

# Each unit's names -> one name. Russian by the start of the word (гигабайта, секундами), Korean
# as written after a number (8기가, 30초) or alone after a numeral (두 시간).
_UNITS: dict[str, tuple[str, ...]] = {
    "kb": ("kb", "kib", "kilobyte", "кб", "килобайт", "킬로바이트"),
    "mb": ("mb", "mib", "megabyte", "мб", "мегабайт", "메가", "메가바이트"),
    "gb": ("gb", "gib", "gig", "gigabyte", "гб", "гигабайт", "기가", "기가바이트"),
    "tb": ("tb", "tib", "terabyte", "тб", "терабайт", "테라", "테라바이트"),
    "ms": ("ms", "millisecond", "мс", "миллисекунд", "밀리초"),
    "s": ("s", "sec", "second", "сек", "секунд", "초"),
    "min": ("min", "minute", "мин", "минут", "분"),
    "h": ("h", "hr", "hour", "ч", "час", "시간"),
    "d": ("day", "night", "день", "дня", "дней", "сутк", "сут", "일", "날", "하루"),
    "w": ("week", "недел", "주", "주일", "일주일"),
    "mo": ("month", "месяц", "달", "개월"),
    "y": ("year", "год", "лет", "년", "해"),
    "%": ("%", "percent", "процент", "퍼센트"),
}
_UNIT_OF = {name: unit for unit, names in _UNITS.items() for name in names}
# Russian unit names by their case endings, longest name first (миллисекунд before секунд); not
# any word they begin (часть, минимум).
_RU_UNIT_STARTS = sorted((n for n in _UNIT_OF if re.fullmatch(r"[а-яё]{3,}", n)), key=len, reverse=True)
_RU_ENDINGS = frozenset(("", "а", "у", "ы", "и", "е", "ю", "ь", "я", "ов", "ев", "ей", "ам", "ах", "ами", "ой",
                         "ом", "ки", "ок"))
_KO_UNIT_STARTS = sorted((n for n in _UNIT_OF if re.fullmatch(r"[가-힣]+", n)), key=len, reverse=True)
_DIGITS_THEN = re.compile(r"(\d+(?:[.,]\d+)?)(.+)")


def number_of(word: str) -> str | None:
    """The digits a lower-cased word stands for ("eight" -> "8", "2" -> "2"), or None."""
    if re.fullmatch(r"\d+(?:[.:,]\d+)*", word):
        return word
    return NUMBER_WORDS.get(word)


def unit_of(word: str) -> str | None:
    """The one name of the unit a lower-cased word names ("gigabytes" -> "gb", "секундами" -> "s")."""
    if word in _UNIT_OF:
        return _UNIT_OF[word]
    if word.endswith("s") and word[:-1] in _UNIT_OF:
        return _UNIT_OF[word[:-1]]
    return next((_UNIT_OF[s] for s in _RU_UNIT_STARTS if word.startswith(s) and word[len(s):] in _RU_ENDINGS), None)


def split_unit(core: str) -> tuple[str, str] | None:
    """A number with its unit written on ("8GB", "30s", "8기가바이트다", "5분마다" -> ("5", "min")),
    or None when what follows the digits is no unit ("8080이다", "3d")."""
    m = _DIGITS_THEN.fullmatch(core.lower())
    if not m:
        return None
    rest = m.group(2)
    unit = unit_of(rest) or next((_UNIT_OF[s] for s in _KO_UNIT_STARTS if rest.startswith(s)), None)
    return (m.group(1), unit) if unit else None


# How often, by the one name of the period: a key "count/period" ("1/1h" hourly, "2/1d" twice a day,
# "1/6h" every six hours), so "daily" and "every day" are one value and "every hour" another.
_EN_ADVERBS = {"hourly": "1h", "daily": "1d", "nightly": "1d", "weekly": "1w", "monthly": "1mo",
               "yearly": "1y", "annually": "1y"}
_RU_ADVERBS = {"ежеминутн": "1min", "ежечасн": "1h", "ежедневн": "1d", "еженощн": "1d", "еженедельн": "1w",
               "ежемесячн": "1mo", "ежегодн": "1y"}
_KO_EVERY = {"매분": "1min", "매시간": "1h", "매일": "1d", "날마다": "1d", "매주": "1w", "매달": "1mo",
             "매월": "1mo", "매년": "1y"}
_EN_EVERY = frozenset(("every", "each"))
_EN_PER = frozenset(("a", "an", "per", "every", "each"))
_EN_TIMES = {"once": "1", "twice": "2"}


def _period(words: list[str], i: int) -> tuple[int, str] | None:
    """(words used, "N" + unit) for a period at words[i]: "hour", "6 hours", "шесть часов"."""
    if i < len(words) and (unit := unit_of(words[i])) and unit not in ("%", "kb", "mb", "gb", "tb"):
        return 1, f"1{unit}"
    if i + 1 < len(words) and (n := number_of(words[i])) and (unit := unit_of(words[i + 1])):
        return 2, f"{n}{unit}"
    return None


def _english(words: list[str], i: int) -> tuple[int, str] | None:
    w = words[i]
    if w in _EN_ADVERBS:
        return 1, f"1/{_EN_ADVERBS[w]}"
    if w in _EN_EVERY and (p := _period(words, i + 1)):
        return 1 + p[0], f"1/{p[1]}"
    count = _EN_TIMES.get(w)
    used = 1
    if count is None and i + 1 < len(words) and words[i + 1] == "times" and (count := number_of(w)):
        used = 2
    if count and i + used < len(words) and words[i + used] in _EN_PER and (p := _period(words, i + used + 1)):
        return used + 1 + p[0], f"{count}/{p[1]}"
    return None


def _russian(words: list[str], i: int) -> tuple[int, str] | None:
    w = words[i]
    if adverb := next((k for s, k in _RU_ADVERBS.items() if w.startswith(s)), None):
        return 1, f"1/{adverb}"
    if w.startswith("кажд") and (p := _period(words, i + 1)):
        return 1 + p[0], f"1/{p[1]}"
    count, used = ("1", 1) if w == "раз" else (number_of(w), 2)
    if count and used == 2 and (i + 1 >= len(words) or words[i + 1] not in ("раз", "раза")):
        return None
    if count and i + used + 1 < len(words) and words[i + used] in ("в", "за") and (p := _period(words, i + used + 1)):
        return used + 1 + p[0], f"{count}/{p[1]}"
    return None


def _korean(words: list[str], i: int) -> tuple[int, str] | None:
    w = words[i]
    if every := next((k for s, k in _KO_EVERY.items() if w.startswith(s)), None):
        return 1, f"1/{every}"
    if w.endswith("마다") and len(w) > 2:  # 시간마다, 6시간마다, 두 시간마다
        head = w[:-2]
        split = split_unit(head)
        if split:
            return 1, f"1/{split[0]}{split[1]}"
        if (unit := unit_of(head)) and i > 0 and (n := KOREAN_NUMBERS.get(words[i - 1])):
            return 1, f"1/{n}{unit}"
        return (1, f"1/1{unit}") if unit else None
    # 하루에 한 번, 일주일에 두 번, 하루 세 번: a period, then how many times.
    head = w[:-1] if w.endswith("에") else w
    unit = _UNIT_OF.get(head) if head in ("하루", "일주일", "주", "달", "한달", "시간", "해") else None
    if unit and i + 1 < len(words):
        nxt = words[i + 1]
        count = KOREAN_NUMBERS.get(nxt.removesuffix("번")) or number_of(nxt.removesuffix("번"))
        if count and (nxt.endswith("번") or (i + 2 < len(words) and words[i + 2].startswith("번"))):
            return (2 if nxt.endswith("번") else 3), f"{count}/1{unit}"
    return None


def frequencies(words: list[str]) -> dict[int, tuple[int, str]]:
    """Where `words` (lower-cased, edge punctuation stripped) say how often: index of the first
    word -> (how many words, key)."""
    out: dict[int, tuple[int, str]] = {}
    i = 0
    while i < len(words):
        found = _english(words, i) or _russian(words, i) or _korean(words, i) if words[i] else None
        if found:
            out[i] = found
            i += found[0]
        else:
            i += 1
    return out
