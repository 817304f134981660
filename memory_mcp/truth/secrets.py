"""Credential detection for content about to be remembered, and for files written by hand.

Memories are committed to git and may be pushed to a remote, so a credential must never reach a
file. Findings name the kind and the line, never any character of the value. Documented example
keys (AWS's AKIAIOSFODNN7EXAMPLE and friends) count: an agent cannot tell them from real ones.

Most rules are a vendor's fixed prefix and length. Two are heuristics and carry a check on the
matched value: an AWS secret key (40 characters of base64 with no prefix of its own) and a value
assigned to a secret-looking name; both must look random, so git hashes, UUIDs, identifiers and
placeholders such as `${DB_PASSWORD}` pass. A value that is code (`settings.OPENAI_API_KEY`,
`HTTPBasicAuth(user, pw)`, an `ALL_CAPS_NAME`) is a reference to a secret, not one; a quoted value
assigned to a password's name is a literal, and counts even when a person made it up (`"hunter2"`).

`mask` replaces each flagged value by `[redacted <kind>]`, for text that is shown rather than stored.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from memory_mcp.truth.secret_rules import RULES, Rule, longest_run


@dataclass(frozen=True)
class Finding:
    """One credential-looking match: what kind, on which 1-based line. Never the value."""

    kind: str
    line: int


# One character eight times running: `sk_live_xxxxxxxxxxxx`, `ghp_000000...`, a placeholder in a vendor's
# shape. Random values of these lengths practically never hold such a run.
_FILLER = re.compile(r"([^-])\1{7}")


_NAME_CHAR = re.compile(r"[\w.-]")


def _starts(rule: Rule, text: str, lower: Callable[[], str]) -> Iterator[int]:
    """The positions where a match of an anchored rule may start, in order."""
    assert rule.anchor is not None
    last = -1
    for hit in rule.anchor.finditer(lower()):
        start = hit.start()
        if rule.back:
            floor = max(0, start - 81)  # a name is at most 80 characters
            while start > floor and _NAME_CHAR.match(text, start - 1):
                start -= 1
        if start > last:
            last = start
            yield start


def _matches(rule: Rule, text: str, lower: Callable[[], str] | None = None) -> Iterator[re.Match[str]]:
    """The valid matches of `rule` in `text`. After a match the value does not make a credential of,
    the search goes on from where the value starts: in `Note: DB_PASSWORD=...` the first match is the
    name `Note` with the value `DB_PASSWORD=...`, and the real assignment starts inside that value.
    An anchored rule is tried only where its anchor says a match may start."""
    lower = lower or functools.cache(text.lower)
    if rule.anchor is not None and len(lower()) == len(text):  # lower() keeps positions (not with "İ")
        end = 0
        for start in _starts(rule, text, lower):
            if start < end:
                continue
            m = rule.pattern.match(text, start)
            if m is not None and (rule.valid is None or rule.valid(m)) and not _FILLER.search(text, *_span(rule, m, text)):
                yield m
                end = m.end()
        return
    pos = 0
    while (m := rule.pattern.search(text, pos)) is not None:
        if (rule.valid is None or rule.valid(m)) and not _FILLER.search(text, *_span(rule, m, text)):
            yield m
            pos = max(m.end(), pos + 1)
            continue
        start = next((m.start(g) for g in ("value", "qvalue", "value2", "value3") if g in rule.pattern.groupindex
                      and m.start(g) > m.start()), -1)
        pos = start if start > pos else max(m.start() + 1, pos + 1)


def scan(text: str) -> list[Finding]:
    """Every credential-looking match in `text`: its kind and 1-based line, at most one per kind."""
    found: dict[str, Finding] = {}
    lower = functools.cache(text.lower)
    longest = functools.cache(lambda: longest_run(text))
    for rule in RULES:
        if not rule.may_match(text, lower, longest):
            continue
        for m in _matches(rule, text, lower):
            found[rule.kind] = Finding(rule.kind, text.count("\n", 0, m.start()) + 1)
            break
    return sorted(found.values(), key=lambda f: f.line)


def _slug(kind: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")


_KEY_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----", re.IGNORECASE)


def _span(rule: Rule, m: re.Match[str], text: str) -> tuple[int, int]:
    """What of a match is the secret: its value group, else the whole match (a private key block up
    to its END line, or the rest of the text when it has none)."""
    for group in ("value", "qvalue", "value2", "value3"):
        if group in rule.pattern.groupindex and m.group(group) is not None:
            return m.span(group)
    if rule.kind == "private key block" and m.group()[:10].upper() == "-----BEGIN":
        end = _KEY_END.search(text, m.end())
        return m.start(), end.end() if end else len(text)
    return m.span()


def mask(text: str) -> str:
    """`text` with each value the scanner flags replaced by `[redacted <kind>]`, the rest unchanged.
    For showing a file that holds a credential (recall, read, export, the digest) without the value."""
    lower = functools.cache(text.lower)
    longest = functools.cache(lambda: longest_run(text))
    spans: list[tuple[int, int, str]] = []
    for rule in RULES:
        if rule.may_match(text, lower, longest):
            spans += [(*_span(rule, m, text), _slug(rule.kind)) for m in _matches(rule, text, lower)]
    if not spans:
        return text
    spans.sort()
    out, pos = [], 0
    for start, end, slug in spans:
        if end <= pos:
            continue  # inside a span already masked
        if start < pos:  # overlaps the one masked before: its placeholder covers this too
            pos = end
            continue
        out += [text[pos:start], f"[redacted {slug}]"]
        pos = end
    out.append(text[pos:])
    return "".join(out)
