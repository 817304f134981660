"""The memory record, its enumerations and the pure rules about them (no I/O)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TypeVar

from .errors import InvalidArgument, InvalidId


class MemoryType(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    DECISION = "decision"
    EPISODE = "episode"
    REFERENCE = "reference"
    KNOWLEDGE = "knowledge"


class State(StrEnum):
    ACTIVE = "active"
    ARCHIVED = "archived"
    DEPRECATED = "deprecated"


class Trust(StrEnum):
    USER_STATED = "user-stated"
    AGENT_INFERRED = "agent-inferred"
    IMPORTED = "imported"


class ForgetMode(StrEnum):
    """What memory_forget does: a state move, or a purge of the file."""

    ARCHIVE = "archive"
    DEPRECATE = "deprecate"
    RESTORE = "restore"
    PURGE = "purge"


class Decision(StrEnum):
    """How memory_resolve settles a pair."""

    SUPERSEDE = "supersede"
    KEEP_BOTH = "keep_both"


ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
# Files without an id get an id derived from their path, so they can be read and recalled.
PROVISIONAL_RE = re.compile(r"^P[0-9A-F]{16}$")

TITLE_MAX = 200
CONTENT_MAX = 64_000
ENTITY_MAX = 64
ENTITIES_MAX = 32
SOURCE_MAX = 500


@dataclass
class Memory:
    """One memory as its file holds it. `extra` keeps unknown frontmatter keys in order."""

    id: str
    body: str
    type: MemoryType = MemoryType.FACT
    state: State = State.ACTIVE
    trust: Trust = Trust.AGENT_INFERRED
    entities: list[str] = field(default_factory=list)
    source: str = ""
    created: str | None = None
    updated: str | None = None
    review_after: str | None = None
    conflicts_with: list[str] = field(default_factory=list)
    distinct_from: list[str] = field(default_factory=list)
    supersedes: list[str] = field(default_factory=list)
    superseded_by: str | None = None
    deprecated_reason: str | None = None
    feedback: float = 0.0
    extra: dict[str, object] = field(default_factory=dict)
    # True when the file has no frontmatter id and `id` was derived from its path.
    provisional: bool = False

    @property
    def title(self) -> str:
        return derive_title(self.body)

    @property
    def excerpt(self) -> str:
        return derive_excerpt(self.body)


def now_iso() -> str:
    """UTC now, ISO-8601 to the second, as the file format wants it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(value: str | None) -> datetime | None:
    """A timestamp or date from a file, or None when absent or unreadable."""
    if not value:
        return None
    text = str(value).strip().replace("Z", "+00:00")
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def check_id(value: str) -> str:
    """Return `value` when it is a memory id (a ULID or a provisional id), else raise InvalidId."""
    if not isinstance(value, str) or not (ULID_RE.match(value) or PROVISIONAL_RE.match(value)):
        shown = value[:40] if isinstance(value, str) else type(value).__name__
        raise InvalidId(f"'{shown}' is not a memory id (a 26-character ULID such as 01JD2K3A9FZQ4W8XVBH5T6N7RM).")
    return value


def provisional_id(rel_path: str) -> str:
    """The stable id of a file that has no `id` of its own: a hash of its path."""
    return "P" + hashlib.sha256(rel_path.encode()).hexdigest()[:16].upper()


_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def derive_title(body: str) -> str:
    """The first heading, else the first non-empty line, cut to TITLE_MAX characters."""
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        m = _HEADING.match(stripped)
        return (m.group(1) if m else stripped)[:TITLE_MAX] or "(untitled)"
    return "(untitled)"


def derive_excerpt(body: str, limit: int = 200) -> str:
    """The first paragraph that is not a heading, whitespace collapsed, cut to `limit`."""
    for para in re.split(r"\n\s*\n", body):
        lines = [ln for ln in para.splitlines() if ln.strip() and not _HEADING.match(ln.strip())]
        if lines:
            text = " ".join(" ".join(lines).split())
            return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
    return ""


def compose_body(content: str, title: str | None) -> str:
    """The body a new memory gets: a `# title` heading (given or derived), a blank line, the content."""
    text = content.replace("\r\n", "\n").strip()
    if not text:
        raise InvalidArgument("content is empty: pass the text of the memory.")
    if text.startswith("#") and _HEADING.match(text.splitlines()[0].strip()):
        if title and derive_title(text) != title.strip():
            return f"# {title.strip()}\n\n{text}\n"
        return text + "\n"
    heading = (title or derive_title(text)).strip()
    return f"# {heading}\n\n{text}\n"


def content_key(body: str) -> str:
    """Identity of a memory's content for duplicate detection: whitespace-insensitive hash of the body."""
    return hashlib.sha256(" ".join(body.split()).encode()).hexdigest()


def body_sha(body: str) -> str:
    """Hash of a body exactly as written; a change means a person (or agent) changed the text."""
    return hashlib.sha256(body.encode()).hexdigest()


def slugify(title: str, limit: int = 48) -> str:
    """A readable, filesystem-safe slug of a title (unicode letters kept)."""
    slug = re.sub(r"[^\w]+", "-", title.lower(), flags=re.UNICODE).strip("-_")
    slug = slug[:limit].rstrip("-_")
    return slug or "memory"


E = TypeVar("E", bound=StrEnum)


def enum_value(enum: type[E], value: object, what: str) -> E:
    """Convert a string to `enum`, or raise InvalidArgument naming the allowed values."""
    try:
        return enum(str(value))
    except ValueError:
        allowed = ", ".join(e.value for e in enum)
        raise InvalidArgument(f"unknown {what} '{value}': use one of {allowed}.") from None
