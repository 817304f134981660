"""The checks every piece of text bound for a memory file or a commit message passes: limits,
dates, control characters and credentials. Refusals are typed errors that name the limit or the
kind of credential, never the value."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime

from memory_mcp.truth import globs
from memory_mcp.truth.errors import InvalidArgument, SecretDetected, TooLarge
from memory_mcp.truth.model import (
    CONTENT_MAX,
    ENTITIES_MAX,
    ENTITY_MAX,
    SOURCE_MAX,
    TITLE_MAX,
    FieldSpec,
    Tool,
    enum_value,
    settable,
)
from memory_mcp.truth.secrets import Finding, scan

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def check_text(content: str | None, title: str | None, source: str | None, line: int | None = None) -> None:
    """A memory's content, title and source: within their limits, no control character, no credential.
    `line`: the line of a source file that holds the whole content (a paste), which a refusal names
    instead of the line of the content (its derived heading is line 1 of a body the person never saw)."""
    if content is not None and len(content) > CONTENT_MAX:
        raise TooLarge(f"content is {len(content):,} characters; the limit is {CONTENT_MAX:,}. "
                       "Split it into several memories or keep a summary and a pointer.")
    if title is not None and len(title) > TITLE_MAX:
        raise TooLarge(f"title is {len(title)} characters; the limit is {TITLE_MAX}.")
    check_short(source=source)
    check_inputs(line, content=content, title=title)


def check_entities(entities: list[str]) -> list[str]:
    """The entity names within their limits and free of credentials, blank ones dropped."""
    if len(entities) > ENTITIES_MAX:
        raise TooLarge(f"{len(entities)} entities; the limit is {ENTITIES_MAX}.")
    for e in entities:
        if len(e) > ENTITY_MAX:
            raise TooLarge(f"an entity is {len(e)} characters; the limit is {ENTITY_MAX}.")
    check_inputs(entities=entities)
    return [e for e in entities if e.strip()]


def check_date(value: str | None, what: str = "review_after") -> str | None:
    """A date as YYYY-MM-DD (a timestamp is cut to its day); None or '' clears it."""
    if value is None or value == "":
        return None
    try:
        return date.fromisoformat(value).isoformat() if len(value) == 10 else \
            datetime.fromisoformat(value.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        raise InvalidArgument(f"{what} '{value[:40]}' is not a date; use YYYY-MM-DD.") from None


def check_short(**fields: str | None) -> None:
    """A one-line field (source, reason, note): within the length limit and free of credentials."""
    for what, value in fields.items():
        if value is not None and len(value) > SOURCE_MAX:
            raise TooLarge(f"{what} is {len(value)} characters; the limit is {SOURCE_MAX}.")
    check_inputs(**fields)


def check_inputs(line: int | None = None, /, **fields: str | list[str] | None) -> None:
    """Refuse text bound for a file or a commit message that holds a credential or control characters
    (a NUL would make the file look binary and break `git commit`). `line`: see check_text."""
    for what, value in fields.items():
        for text in value if isinstance(value, list) else [value]:
            if text and _CONTROL.search(text):
                raise InvalidArgument(f"{what} contains a control character (such as NUL); remove it and call again.")
            found = scan(text) if text else []
            if found:
                raise SecretDetected(
                    f"{what} contains what looks like a credential ({kinds(found, line)}). Memories are committed to git: "
                    "remove the value and say where it is kept instead (e.g. 'in the team vault'), then call again.")


def kinds(found: list[Finding], line: int | None = None) -> str:
    """The kinds and lines of credentials found, for an error message (never the values); every one
    on `line` when the text is all one line of a source."""
    return "; ".join(dict.fromkeys(f"{f.kind} on line {line or f.line}" for f in found))


def _field_value(spec: FieldSpec, value: object) -> object:
    """One value a caller sets, checked by its field's kind (a script may pass anything)."""
    if spec.kind == "enum" and spec.enum is not None:
        return enum_value(spec.enum, value, spec.name)
    if spec.kind == "list":
        if isinstance(value, str) or not isinstance(value, (list, tuple)) or \
                not all(isinstance(v, str) for v in value):
            raise InvalidArgument(f"{spec.name} must be a list of strings.")
        if spec.name == "entities":
            return check_entities(list(value))
        if spec.name == "paths":
            check_inputs(paths=list(value))
            return globs.check(list(value))
        check_inputs(**{spec.name: list(value)})
        return list(dict.fromkeys(v for v in value if v.strip()))
    if spec.kind == "number":
        low, high = spec.bounds or (float("-inf"), float("inf"))
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise InvalidArgument(f"{spec.name} must be a number from {low} to {high}.")
        return float(value)
    if not isinstance(value, str):
        raise InvalidArgument(f"{spec.name} must be a string.")
    if spec.kind == "date":
        return check_date(value, spec.name)
    check_short(**{spec.name: value})
    return " ".join(value.split())


def settable_values(given: Mapping[str, object], tool: Tool) -> dict[str, object]:
    """The frontmatter values `given` (an options object's `fields`) sets for the fields `tool` may
    set (model.settable), each checked by its kind; a field given as None is absent. A name `tool`
    may not set is refused. Entity names are not normalised here: that needs the store's dictionary."""
    specs = settable(tool)
    unknown = sorted(set(given) - {spec.name for spec in specs})
    if unknown:
        raise InvalidArgument(f"memory_{tool} cannot set {', '.join(unknown)}; it sets "
                              f"{', '.join(spec.name for spec in specs)}.")
    out: dict[str, object] = {}
    for spec in specs:
        value = given.get(spec.name)
        if value is not None:
            out[spec.name] = _field_value(spec, value)
    return out
