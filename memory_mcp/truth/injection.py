"""Memory text that tries to steer the model: the rules that flag it, and what a flag says.

Memories are put in front of a model at every session start, on prompts and on file reads, so text
in a store can try to pass for something else: a frame of the client's (`</system-reminder>`, a chat
template's `<|im_start|>`), a header or a line of our own hooks (`# Memory digest`, `- [ID] preference,
today: ...`), characters a person does not see (zero-width, bidi, tag characters, controls), phrases
that address the model (ignore your instructions, do not tell the user, reveal your prompt, send a
secret out) and remote scripts piped into a shell. Such a memory is flagged, never refused: imperative
text is what preferences are ("always run make lint before a commit"), and a flag is a heuristic.

A finding names its kind, the 1-based line of the file and a reason of ours; never the text it
matched, which is the hostile part. Phrases are looked for with the invisible characters taken out
(`ig\\u200bnore` is still `ignore`) and across line breaks (the hooks fold a memory onto one line);
a phrase inside quotes is a mention (a note about the injection bug that was fixed), not a use.

The index keeps the findings of every file (`index/flagged.py`): a change to these rules changes what
that table holds, so it bumps the leading number of `schema.SCHEMA_VERSION`.
Standard library only, pure functions.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from memory_mcp.truth.visible import HIDDEN

FRAME = "forged frame"
LINE = "forged memory line"
HIDDEN_TEXT = "hidden characters"
PHRASE = "injection phrase"
SCRIPT = "remote script"
KINDS = (FRAME, LINE, HIDDEN_TEXT, PHRASE, SCRIPT)


@dataclass(frozen=True)
class Flag:
    """One way a memory tries: its kind (one of KINDS), the 1-based line of the file, and why, in
    our words. Never the matched text."""

    kind: str
    line: int
    reason: str


@dataclass(frozen=True)
class _Rule:
    """A pattern and its prefilter: every match holds one of `keys` and, when given, one of `also`
    (lower case, words single-spaced), so a text holding none is not searched at all. Searching
    costs about 0.4 us a character for a rule; looking for its keys, a few percent of that.

    The pattern is compiled the first time a text passes the prefilter: compiling them all took
    about 4 ms of each one-shot `memory-mcp remember` (bench_cli.py), whose text most pass by."""

    kind: str
    reason: str
    source: str
    flags: int
    keys: tuple[str, ...]
    also: tuple[str, ...]

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.source, self.flags)

    def may_match(self, flat: str) -> bool:
        return (not self.keys or any(k in flat for k in self.keys)) and (
            not self.also or any(k in flat for k in self.also))


def _rule(kind: str, reason: str, keys: tuple[str, ...], pattern: str, flags: int = re.IGNORECASE,
          also: tuple[str, ...] = ()) -> _Rule:
    return _Rule(kind, reason, pattern, flags | re.MULTILINE, keys, also)


_TYPES = "fact|preference|decision|episode|reference|knowledge"
_ULID = r"\[[0-9A-HJKMNP-TV-Z]{26}\]"
_ROLE_TAGS = (r"system[-_ ]?reminder|system|sys|system[-_]?prompt|instructions?|user[-_]instructions|"
              r"system[-_]instructions|important|function[-_]calls|function[-_]results|invoke|tool[-_]use|"
              r"tool[-_]result|tool[-_]call|assistant|human|developer|admin|override|memory-data|"
              r"user-prompt-submit-hook|command-(?:name|message|args)")

# The rules are made on the first scan, not on an import for `Flag` or `note` alone.
@functools.cache
def _shapes() -> tuple[_Rule, ...]:
    """Rules on the text with invisible characters taken out, line by line (line anchors hold)."""
    return (
        _rule(FRAME, "a tag shaped like a frame of the client's or a role of the chat", ("<",),
              rf"<\s*/?\s*(?:{_ROLE_TAGS})(?:\s[^<>\n]*)?>"),
        _rule(FRAME, "a token of a chat template", ("<|", "[inst]", "[/inst]", "<<sys>>", "<</sys>>"), r"<\|[a-z_]{2,20}\|>|\[/?INST\]|<</?SYS>>"),
        _rule(FRAME, "a line opening a turn of the chat", ("human", "assistant", "system"), r"^\s*(?:Human|Assistant|SYSTEM)\s*:", 0),
        _rule(FRAME, "a heading or introduction shaped like those of our hooks",
              ("memory digest", "session digest", "memory-data", "memory-mcp:"), r"^#{1,6}\s*memory digest\s*$|the session digest, the most important memories first|"
              r"between the two memory-data lines|memory-mcp: stored memories|<\s*/?\s*memory-data"),
        # Every match is a list item opening on an id in brackets or a bold title, and names a type:
        # without a prefilter, this pattern alone took 1.2 ms to compile in each `memory-mcp remember`.
        _rule(LINE, "a line shaped like one of our memory lines (an id in brackets with a type)", ("- [", "- **"),
              rf"-\s+{_ULID}\s+(?:{_TYPES})\b|-\s+{_ULID}\s+[^\n]*\((?:{_TYPES})\s*,|"
              rf"-\s+\*\*[^*\n]+\*\*\s*\((?:{_TYPES})\b[^)\n]*\)(?:\s*{_ULID})?", 0,
              also=tuple(_TYPES.split("|"))),
        _rule(SCRIPT, "a remote script piped into a shell", ("curl", "wget", "iwr", "irm", "invoke-", "fetch", "iex"),
              r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^|\n]{0,200}\|\s*"
              r"(?:sudo\s+)?(?:ba|z|k|da|fi)?sh\b|\|\s*iex\b|\b(?:ba|z)?sh\s+-c\s+[\"']?\$\(\s*(?:curl|wget)\b|"
              r"(?:source|\.)\s+<\(\s*(?:curl|wget)\b|\beval\s+[\"']?\$\(\s*(?:curl|wget)\b",
              also=("|", "$(", "<(")),
    )


_IGNORE = r"ignor\w*|disregard\w*|forget|override|bypass"
_RULES_OF_MODEL = r"(?:instructions?|prompts?|rules|guidelines|directions|directives|safety\s+(?:rules|checks))"
_SECRET_PATH = (r"(?:~|\$HOME|\.)?/?\.(?:ssh|aws|kube|gnupg|docker)/\S*|\bid_(?:rsa|ed25519|ecdsa)\b|"
                r"\.env\b(?![.\w-])|\.npmrc\b|\.netrc\b|\.git-credentials\b|\bauthorized_keys\b|"
                r"environment variables")
_SEND = (r"\b(?:send|upload|post|exfiltrat\w*|leak|e-?mail|paste|transfer)\b|print the contents|"
         r"https?://|/(?:var/)?tmp/|отправ\w*|загрузи\w*|전송|보내|업로드")


@functools.cache
def _phrases() -> tuple[_Rule, ...]:
    """Rules on the same text read as one run of words (the hooks show a memory on one line)."""
    return (
        _rule(PHRASE, "tells the model to set its instructions aside",
              ("ignor", "disregard", "forget", "override", "bypass", "previous", "prior", "earlier"),
              rf"\b(?:{_IGNORE})\b(?:\s+(?:all|any|the|your|of|previous|prior|above|earlier|preceding|former|"
              rf"system|original|existing|these|those|safety|and)){{0,4}}\s+{_RULES_OF_MODEL}\b|"
              r"\bforget\s+(?:everything|all)\s+(?:you\s+(?:were|have\s+been|'ve\s+been)\s+told|above|before)|"
              rf"\b(?:previous|prior|earlier)\s+{_RULES_OF_MODEL}\s+(?:are|is)\s+(?:revoked|void|cancelled|over)"),
        _rule(PHRASE, "claims to override the system or to bring new instructions",
              ("override", "new instruction", "new system", "new prompt", "you are now", "developer mode", "priority",
               "the ai", "the assistant", "the model", "the llm", "the agent", "obey", "pretend", "act as if",
               "no restrictions"),
              r"\b(?:system|admin|developer)\s+override\b|\bnew\s+(?:system\s+)?(?:instructions|prompt)\b\s*(?::|from\b)|"
              r"\bnew\s+system\s+prompt\b|\byou\s+are\s+now\b|\bdeveloper\s+mode\b|"
              r"\b(?:take|takes|taking)\s+priority\s+over\b|\bpriority\s+0\b|"
              r"\b(?:note|message|instructions?)\s+(?:to|for)\s+the\s+(?:ai|assistant|model|llm|agent)\b|"
              r"\bobey\s+(?:only|the\s+instructions|this|these|me)\b|\bpretend\s+(?:you\s+are|to\s+be)\b|"
              r"\bact\s+as\s+if\s+(?:they|the\s+user|the\s+person)\b|\bno\s+restrictions\b"),
        _rule(PHRASE, "tells the model to keep something from the person", ("user", "person", "human", "operator"),
              r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|mention|show|notify)\b(?:\s+\S+){0,3}?\s+(?:the\s+)?"
              r"(?:user|person|human|operator)\b|\bwithout\s+(?:telling|asking|informing|notifying)\s+the\s+"
              r"(?:user|person|human)\b|\bwithout\s+the\s+(?:user|person)'s\s+knowledge\b",
              also=("tell", "inform", "mention", "show", "notify", "without")),
        _rule(PHRASE, "asks the model to reveal its prompt", ("system prompt", "instructions", "hidden prompt"),
              r"\b(?:reveal|print|show|output|repeat|leak|dump)\s+(?:me\s+)?(?:your|the)\s+(?:\w+\s+)?"
              r"(?:system\s+prompt|instructions|hidden\s+prompt)",
              also=("reveal", "print", "show", "output", "repeat", "leak", "dump")),
        _rule(PHRASE, "asks to send a secret or credential out",
              (".ssh/", ".aws/", ".kube/", ".gnupg/", ".docker/", "id_rsa", "id_ed25519", "id_ecdsa", ".env", ".npmrc",
               ".netrc", ".git-credentials", "authorized_keys", "environment variables"),
              rf"(?:{_SEND})(?:\s+\S+){{0,6}}?\s+(?:{_SECRET_PATH})|(?:{_SECRET_PATH})(?:\s+\S+){{0,6}}?\s+(?:{_SEND})",
              also=("send", "upload", "post", "exfiltrat", "leak", "mail", "paste", "transfer", "print the contents",
                    "http", "tmp/", "отправ", "загрузи", "전송", "보내", "업로드")),
        _rule(PHRASE, "a destructive command", ("rm -", "--no-preserve-root", "mkfs.", ":()"),
              r"\brm\s+-(?:rf|fr)\s+(?:~|/|\$HOME)(?:\s|$|/\s)|--no-preserve-root|\bmkfs\.|:\(\)\s*\{\s*:\|:&\s*\};:"),
        # Russian
        _rule(PHRASE, "tells the model to set its instructions aside",
              ("игнорир", "забудь", "переопределение", "ты теперь", "новые инструкции"),
              r"\b(?:игнорир\w*|забудь\w*|забудьте)\s+(?:\S+\s+){0,3}?(?:инструкц\w*|указани\w*|правил\w*)|"
              r"\bсистемное\s+переопределение\b|\bты\s+теперь\b|\bновые\s+инструкции\b"),
        _rule(PHRASE, "tells the model to keep something from the person", ("пользовател", "без ведома"),
              r"\bне\s+(?:говори|сообщай|рассказывай|показывай)\w*\s+(?:\S+\s+)?пользовател\w*|\bбез\s+ведома\b"),
        # Korean
        _rule(PHRASE, "tells the model to set its instructions aside", ("무시", "무효", "재정의", "지금부터"),
              r"(?:이전|앞의|위의|기존)\S*\s+(?:\S+\s+){0,2}?(?:지시|지침|명령|규칙|프롬프트)\S*\s+(?:\S+\s+){0,2}?"
              r"(?:무시|무효)|시스템\s*재정의|지금부터\s+(?:너|당신)는"),
        _rule(PHRASE, "tells the model to keep something from the person", ("사용자에게",),
              r"사용자에게\s+(?:알리지|말하지|보여주지)\s*말"),
        _rule(PHRASE, "asks the model to reveal its prompt", ("프롬프트",), r"시스템\s*프롬프트\S*\s+(?:출력|보여|공개)"),
    )


# Joiners between two characters of a script or an emoji sequence are writing, not hiding: ZWJ in
# 👩‍💻, ZWNJ in Persian or Hindi words. Between ASCII (or at an edge) they hide.
_JOINERS = re.compile(r"(?<=[^\x00-\x7f])[\u200c\u200d](?=[^\x00-\x7f])")
_QUOTED = re.compile(r"\"[^\"\n]{1,200}\"|(?<!\w)'[^'\n]{1,200}'(?!\w)|`[^`\n]{1,200}`|“[^”\n]{1,200}”|"
                     r"«[^»\n]{1,200}»")


def scan(text: str) -> list[Flag]:
    """How `text` (a memory file, or what a write is about to put in one) tries, at most one finding
    per kind (its first line), by line."""
    found: dict[str, Flag] = {}
    hidden = _hidden(text)
    if hidden:
        found[HIDDEN_TEXT] = hidden
    clean = HIDDEN.sub("", _JOINERS.sub("", text)) if hidden else text
    flat = " ".join(clean.lower().split())
    for rule in _shapes():
        if rule.kind not in found and rule.may_match(flat) and (m := rule.pattern.search(clean)):
            found[rule.kind] = Flag(rule.kind, clean.count("\n", 0, m.start()) + 1, rule.reason)
    quoted: list[tuple[int, int]] | None = None
    for rule in _phrases():
        if PHRASE in found:
            break
        if not rule.may_match(flat):
            continue
        for m in rule.pattern.finditer(clean):
            if quoted is None:
                quoted = [q.span() for q in _QUOTED.finditer(clean)]
            if not any(a <= m.start() and m.end() <= b for a, b in quoted):
                found[PHRASE] = Flag(PHRASE, clean.count("\n", 0, m.start()) + 1, rule.reason)
                break
    return sorted(found.values(), key=lambda f: (f.line, KINDS.index(f.kind)))


_CLASSES = (("tag characters", re.compile("[\U000e0000-\U000e007f]")),
            ("bidi controls", re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")),
            ("zero-width characters", re.compile("[\u200b-\u200d\u2060\ufeff\u00ad]")),
            ("control characters", re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")))


def _hidden(text: str) -> Flag | None:
    """The finding for invisible and control characters, or None: their first line and which kinds,
    with how many (a run of tag characters can spell a whole sentence)."""
    if HIDDEN.search(text) is None:
        return None
    bare = _JOINERS.sub("", text.replace("\r\n", "\n"))
    first = HIDDEN.search(bare)
    if first is None:
        return None
    n = len(HIDDEN.findall(bare))
    kinds = [name for name, pattern in _CLASSES if pattern.search(bare)] or ["format characters"]
    return Flag(HIDDEN_TEXT, bare.count("\n", 0, first.start()) + 1,
                f"{n} invisible or control character{'s' if n != 1 else ''} ({', '.join(kinds)})")


def note(flags: list[Flag]) -> str:
    """One sentence for a result that wrote or read a flagged memory: what was found, on which lines."""
    found = "; ".join(f"{f.kind} on line {f.line} ({f.reason})" for f in flags)
    return (f"flagged, as text that tries to steer the model: {found}. It is kept and marked as flagged "
            "wherever it is shown; memory_status lists it.")
