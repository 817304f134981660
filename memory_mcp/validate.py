"""The checks every piece of text bound for a memory file or a commit message passes: limits,
dates, control characters and credentials. Refusals are typed errors that name the limit or the
kind of credential, never the value."""

from __future__ import annotations

import re
from datetime import date, datetime

from .errors import InvalidArgument, SecretDetected, TooLarge
from .model import CONTENT_MAX, ENTITIES_MAX, ENTITY_MAX, SOURCE_MAX, TITLE_MAX, Tool, enum_value, settable
from .secrets import Finding, scan

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def check_text(content: str | None, title: str | None, source: str | None) -> None:
    """A memory's content, title and source: within their limits, no control character, no credential."""
    if content is not None and len(content) > CONTENT_MAX:
        raise TooLarge(f"content is {len(content):,} characters; the limit is {CONTENT_MAX:,}. "
                       "Split it into several memories or keep a summary and a pointer.")
    if title is not None and len(title) > TITLE_MAX:
        raise TooLarge(f"title is {len(title)} characters; the limit is {TITLE_MAX}.")
    check_short(source=source)
    check_inputs(content=content, title=title)


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


def check_inputs(**fields: str | list[str] | None) -> None:
    """Refuse text bound for a file or a commit message that holds a credential or control characters
    (a NUL would make the file look binary and break `git commit`)."""
    for what, value in fields.items():
        for text in value if isinstance(value, list) else [value]:
            if text and _CONTROL.search(text):
                raise InvalidArgument(f"{what} contains a control character (such as NUL); remove it and call again.")
            found = scan(text) if text else []
            if found:
                raise SecretDetected(
                    f"{what} contains what looks like a credential ({kinds(found)}). Memories are committed to git: "
                    "remove the value and say where it is kept instead (e.g. 'in the team vault'), then call again.")


def kinds(found: list[Finding]) -> str:
    """The kinds and lines of credentials found, for an error message (never the values)."""
    return "; ".join(f"{f.kind} on line {f.line}" for f in found)


def settable_values(opts: object, tool: Tool) -> dict[str, object]:
    """The frontmatter values `opts` sets for the fields `tool` may set (model.settable), each
    checked by its kind; a field `opts` leaves None is absent. Entity names are not normalised here:
    that needs the store's dictionary."""
    out: dict[str, object] = {}
    for spec in settable(tool):
        value = getattr(opts, spec.name)
        if value is None:
            continue
        if spec.kind == "enum" and spec.enum is not None:
            out[spec.name] = enum_value(spec.enum, value, spec.name)
        elif spec.kind == "list" and spec.name == "entities":
            out[spec.name] = check_entities(list(value))
        elif spec.kind == "list":
            check_inputs(**{spec.name: list(value)})
            out[spec.name] = list(dict.fromkeys(v for v in value if v.strip()))
        elif spec.kind == "date":
            out[spec.name] = check_date(value, spec.name)
        elif spec.kind == "text":
            check_short(**{spec.name: value})
            out[spec.name] = " ".join(str(value).split())
        else:
            out[spec.name] = value
    return out
