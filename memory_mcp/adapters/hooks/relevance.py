"""Which prompts the prompt hook answers, and which recall hits it injects (the file hook and the
digest leave out what `injectable` leaves out, too).

Recall scores are relative (the best hit of any query scores about 1), so they cannot tell a real
match from the best of bad ones, and a store that holds conversation has a chat turn sharing a word
with almost any prompt. The floor is lexical: words that carry no project meaning (function words,
acknowledgements, thanks, words about the conversation itself, small talk) are set aside; a prompt
left with none wants nothing and is not searched at all. No word list holds all of small talk, so
a hit must also show that the words it shares are the project's: two shared words are enough; one
is enough only for a hit that does not read as conversation (`conversational`), on a prompt that is
not about the session itself ("what did you change?"), when no hit that reads as conversation uses
that word and scores as high (in a store with chat in it, "minute" or "style" is everyday English;
in one without, nothing changes). Runners-up are kept by their score's margin to the best hit that
cleared the floor. Tuned on tests/hook_eval.py and tests/chatter_set.py's tuned set
(docs/design-notes.md).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from memory_mcp.truth.standing import UNACCEPTED

if TYPE_CHECKING:
    from memory_mcp.truth.recall import Hit

# A runner-up is injected when it scores at least MARGIN x the best hit that shares a word.
MARGIN = 0.85
MIN_WORDS = 3

# Function words: sharing one says nothing about relevance (words under three letters never count).
_FUNCTION = """
the and but then for with from are was were been being its this
that these those our you your she they them his her their what whats which who whom how when
where why can could should would will shall may might must does did done doing have has had not never
yes let lets get got gets make made makes new old one two some any all about into out down over off
back more most very just also still there here than too much many say like want need use used using add
now next thing things something anything bit lot way across after during while until since because
through without within between each every other another such only even ever own same both few less put
puts goes behind under near inside outside take takes give gives look looks seem seems know knows"""

# Acknowledgements, thanks and praise.
_ASSENT = """
okay okey yep yeah yup sure fine right correct agreed agree true indeed noted understood alright
thanks thank thx cheers appreciated appreciate grateful kudos please pls sorry oops
good great nice cool awesome perfect excellent brilliant wonderful amazing fantastic superb neat sweet lovely
helpful useful clear exactly totally absolutely definitely really truly quite pretty well job work
lgtm wow hmm huh"""

# Words about the conversation itself: what the agent said did, what should with it.
_META = """
explain explanation summarize summarise summary recap repeat rephrase clarify elaborate describe
simpler simply briefly shorter longer detail details step steps answer answers question questions reply
said told tell wrote written meant mean means think thought idea point sense understand confused
change changes changed diff show undo redo continue keep going carry proceed stop wait hold pause
last previous earlier before above below first second ahead try again mind forget"""

# Small talk: greetings, time day, weather, food, rest, family and pets, pastimes, feelings.
_SMALL_TALK = """
hello hiya hey morning afternoon evening night tonight today tomorrow yesterday weekend week
monday tuesday wednesday thursday friday saturday sunday holiday holidays vacation
bye goodbye later soon talk chat see mate buddy friend friends folks guys everyone
weather rain raining rainy sunny snow snowing windy typical
coffee tea lunch dinner breakfast snack food eat ate hungry drink beer
tired sleepy sleep slept break minutes ten grab
family kids kid wife husband mom dad mum cat cats dog dogs pet pets
game games movie movies film films music song songs shows watch watched watching
play played playing fun funny lol haha hahaha lmao joke jokes favourite favorite
happy sad glad excited bored busy stressed feel feeling feels life day days went come came"""

# A memory in the first or second person singular, or exclaimed, reads as conversation. (Patterns
# as text: `re` compiles them at first use, not when the hook imports this module.)
_TALK = r"(?i)!|\b(?:i|i'm|i've|i'll|i'd|me|my|mine|myself|you|you're|you've|your|yours|yourself)\b"
# A prompt about the session: "did you", "have we", "you just", "you made", "you changed", "your last".
_SESSION = (r"(?i)\b(?:did|have|had|were|was) (?:you|we|i)\b|\byou(?:'ve| just| did| made| \w+ed)\b"
            r"|\byour (?:last|previous|earlier)\b")

# The sets are written as text; split once here.
CHATTER = frozenset(f"{_ASSENT} {_META} {_SMALL_TALK}".split())
STOP_WORDS = CHATTER | frozenset(_FUNCTION.split())


def content_words(text: str) -> set[str]:
    """Words of three or more characters that are not stop words, cut to five characters so that
    inflections meet (invoices/invoice, deploys/deploy) without a stemmer to import."""
    return {w[:5] for w in re.findall(r"[a-z0-9_]{3,}", text.lower()) if w not in STOP_WORDS}


def wants_nothing(prompt: str) -> bool:
    """A prompt the hook does not search on: a slash command, fewer than MIN_WORDS words of three
    or more letters, or nothing left once stop words are set aside ("thanks, explain what you just
    did"; "how was your weekend?")."""
    return (prompt.startswith("/") or len(re.findall(r"\w{3,}", prompt)) < MIN_WORDS
            or not content_words(prompt))


def query(prompt: str) -> str:
    """The prompt as the hook searches on it: its chatter words left out, so a chat turn that
    shares "thanks" or "weekend" does not outscore the memory "thanks, now the tax rounding" asks
    for. Function words stay: recall weighs them little, and a leading "why" asks for a decision."""
    return " ".join(w for w in prompt.split() if re.sub(r"\W", "", w.lower()) not in CHATTER)


def chosen(hits: list[Hit], prompt: str) -> list[Hit]:
    """The hits that clear the floor, in their order: each shows that the words it shares with the
    prompt are the project's (`_evidence`) and scores at least MARGIN x the best hit that does."""
    words = content_words(prompt)
    shared = [words & content_words(f"{h.title} {h.excerpt}") for h in hits]
    talk = [(h, s) for h, s in zip(hits, shared, strict=True) if conversational(h)]
    one_word = not about_session(prompt)
    sharing = [h for h, s in zip(hits, shared, strict=True) if _evidence(h, s, talk, one_word)]
    if not sharing:
        return []
    best = max(h.score for h in sharing)
    return [h for h in sharing if h.score >= MARGIN * best]


def _evidence(h: Hit, shared: set[str], talk: list[tuple[Hit, set[str]]], one_word: bool) -> bool:
    """Whether `h` sharing `shared` with the prompt is a match: two words always; one word only when
    `one_word`, `h` does not read as conversation and no hit in `talk` (those that do) uses that
    word at a score as high as `h`'s."""
    if len(shared) != 1:
        return len(shared) > 1
    word = next(iter(shared))
    return one_word and not conversational(h) and not any(word in s and t.score >= h.score for t, s in talk)


def conversational(h: Hit) -> bool:
    """Whether a memory reads as conversation rather than as a note about a project: an exclamation,
    or I, me, my, you or your (a project note says what is, not who told whom)."""
    return re.search(_TALK, f"{h.title} {h.excerpt}") is not None


def about_session(prompt: str) -> bool:
    """Whether a prompt asks about the session itself: what the agent (or we) did or said, its
    last answer ("what did you change?", "explain what you just did", "your last answer")."""
    return re.search(_SESSION, prompt) is not None


def injectable(h: Hit) -> bool:
    """Whether a hook may show `h` unasked: not a flagged memory the person has not accepted (what a
    teammate's commit or a pull brings; docs/security.md, "Text that tries"). Recall finds it, marked."""
    return not (h.flagged and h.standing == UNACCEPTED)
