"""The memory record, its enumerations and the pure rules about them (no I/O)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import MISSING, dataclass, field, fields, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal, TypeVar

from memory_mcp.truth.errors import InvalidArgument, InvalidId


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


class BulkDecision(StrEnum):
    """How `memory-mcp conflicts --resolve` settles every pair it selects: keep_both as memory_resolve's,
    or newer, a supersede whose direction the dates give (a bulk call cannot name each winner)."""

    KEEP_BOTH = "keep_both"
    NEWER = "newer"


ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
# Files without an id get an id derived from their path, so they can be read and recalled.
PROVISIONAL_RE = re.compile(r"^P[0-9A-F]{16}$")

TITLE_MAX = 200
CONTENT_MAX = 64_000
ENTITY_MAX = 64
ENTITIES_MAX = 32
SOURCE_MAX = 500


# ---- frontmatter fields: declared once, on Memory below ----
# How a field reads from and writes to a file (files.py), what its index column is (index/db.py):
#   id     the ULID identity (read and written on its own rules: provisional ids, ULID check)
#   enum   one value of the StrEnum its default belongs to, written bare
#   list   a flow list of names, `[a, b]`; a bare string reads as a one-item list
#   text   one line of text, written plain when it reads back the same, else double-quoted
#   date   like text (kept exactly as written: no timestamp parsing), named apart for tool schemas
#   number a number clamped to `bounds`, written rounded to 2 decimals
#   map    a flow mapping of names to one-line text values, `{a: x, b: y}`, in the order written
FieldKind = Literal["id", "enum", "list", "text", "date", "number", "map"]
# How sync's three-way merge treats a field both sides changed (sync._merge_fields):
#   same      compared: both sides setting it to different values is a conflict (the default)
#   set       a set: what either side added is kept, what either side removed is dropped
#   earliest  the smaller of the two values as text (UTC ISO-8601 stamps sort by time)
#   latest    the later of the two by time (parse_iso), so hand-written offsets compare right
#   sum       base plus both sides' changes, clamped to `bounds`
#   identity  not merged: versions with different values are different memories
#   version   the value of the side that changed it; both did: the side whose `updated` is later
#             (a field that describes the write that made a version, not a fact to reconcile)
MergeRule = Literal["same", "set", "earliest", "latest", "sum", "identity", "version"]
Tool = Literal["remember", "update"]


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """What the code needs to know about one frontmatter key. Written with `frontmatter()` on a
    `Memory` field; `FIELDS` holds the filled-in copies (name, default and enum set)."""

    kind: FieldKind
    # Written even when empty (`entities: []`); other keys are omitted when empty, None or 0.
    always_written: bool = False
    # A column of the index's `memories` table (and an attribute of schema.Row).
    indexed: bool = True
    merge: MergeRule = "same"
    # The tools whose callers may set this field (see `settable`).
    tools: frozenset[Tool] = frozenset()
    # One line for people and tool schemas.
    description: str = ""
    # For numbers: the range a value read from a file (or merged) is clamped to.
    bounds: tuple[float, float] | None = None
    # Filled in from the Memory field by FIELDS: its name, default and (for enums) its enum type.
    name: str = ""
    default: object = None
    enum: type[StrEnum] | None = None


_SPEC = "memory_mcp.field"  # the key of a FieldSpec in a dataclass field's metadata
_BOTH_TOOLS: frozenset[Tool] = frozenset({"remember", "update"})


def frontmatter(kind: FieldKind, default: object = MISSING, *, always_written: bool = False,
                indexed: bool = True, merge: MergeRule = "same", tools: frozenset[Tool] = frozenset(),
                description: str = "", bounds: tuple[float, float] | None = None) -> Any:
    """A `Memory` field that is a frontmatter key. Returns `Any`, as `dataclasses.field` does, so the
    annotation on the left stays the field's type. A list's default is always a new empty list, and
    a map's a new empty dict."""
    meta = {_SPEC: FieldSpec(kind, always_written, indexed, merge, tools, description, bounds)}
    if kind == "list":
        return field(default_factory=list, metadata=meta)
    if kind == "map":
        return field(default_factory=dict, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class Memory:
    """One memory as its file holds it. `extra` keeps unknown frontmatter keys in order.

    The frontmatter fields, in the order files write them, are the ones declared with
    `frontmatter()`: that declaration drives parsing, serializing, the index and sync's merge."""

    id: str = frontmatter("id", always_written=True, merge="identity",
                          description="ULID; the identity, never the file name")
    # The markdown after the frontmatter: not a key, so not declared. (mypy takes `frontmatter()` for a
    # default; the id has none.)
    body: str  # type: ignore[misc]
    type: MemoryType = frontmatter("enum", MemoryType.FACT, always_written=True, tools=_BOTH_TOOLS,
                                   description="What kind of memory")
    state: State = frontmatter("enum", State.ACTIVE, always_written=True,
                               description="active, archived or deprecated (moved by forget and resolve)")
    trust: Trust = frontmatter("enum", Trust.AGENT_INFERRED, always_written=True, tools=_BOTH_TOOLS,
                               description="user-stated when the user said it")
    entities: list[str] = frontmatter("list", always_written=True, merge="set", tools=_BOTH_TOOLS,
                                      description="Tools, services, repos it is about")
    source: str = frontmatter("text", "", tools=_BOTH_TOOLS,
                              description="Where it came from, e.g. 'session 2026-08-24'")
    created: str | None = frontmatter("date", None, merge="earliest", description="When it was written (UTC)")
    updated: str | None = frontmatter("date", None, merge="latest", description="When it last changed (UTC)")
    review_after: str | None = frontmatter("date", None, tools=_BOTH_TOOLS, description="YYYY-MM-DD to review it")
    conflicts_with: list[str] = frontmatter("list", merge="set",
                                            description="Ids of memories it may contradict (open pairs)")
    distinct_from: list[str] = frontmatter("list", merge="set",
                                           description="Ids of memories settled as not contradicting it")
    supersedes: list[str] = frontmatter("list", merge="set", tools=frozenset({"remember"}),
                                        description="Ids of memories this one replaces")
    superseded_by: str | None = frontmatter("text", None, description="Id of the memory that replaced it")
    deprecated_reason: str | None = frontmatter("text", None, description="Why it was deprecated")
    feedback: float = frontmatter("number", 0.0, merge="sum", bounds=(-1.0, 1.0),
                                  description="Helpful (+) or misleading (-) votes, from -1 to 1")
    paths: list[str] = frontmatter("list", merge="set", tools=_BOTH_TOOLS,
                                   description="Globs of the project files it is about, relative to the project "
                                               "root (** crosses folders, * does not), e.g. src/billing/**")
    # Who wrote this version and where (truth/stamp.py): set by the server, the CLI and the hooks on
    # remember and update, never by a tool's caller; absent from files people write.
    written_by: dict[str, str] = frontmatter("map", merge="version",
                                             description="Who wrote this version and where: client, session, "
                                                         "host, project, branch, commit (set by the server)")
    extra: dict[str, object] = field(default_factory=dict)
    # True when the file has no frontmatter id and `id` was derived from its path.
    provisional: bool = False

    @property
    def title(self) -> str:
        return derive_title(self.body)

    @property
    def excerpt(self) -> str:
        return derive_excerpt(self.body)


def _declared_fields() -> tuple[FieldSpec, ...]:
    out: list[FieldSpec] = []
    for f in fields(Memory):
        spec = f.metadata.get(_SPEC)
        if spec is None:
            continue
        default = None if f.default is MISSING else f.default
        enum = type(default) if spec.kind == "enum" else None
        if spec.kind == "enum" and not isinstance(default, StrEnum):
            raise TypeError(f"Memory.{f.name}: an enum field needs a member of its StrEnum as its default")
        out.append(replace(spec, name=f.name, default=default, enum=enum))
    return tuple(out)


# Every frontmatter field, in file order: the one list the rest of the code derives its own from.
FIELDS: tuple[FieldSpec, ...] = _declared_fields()


def settable(tool: Tool) -> tuple[FieldSpec, ...]:
    """The frontmatter fields a tool's caller may set (in file order), with their descriptions."""
    return tuple(f for f in FIELDS if tool in f.tools)


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


def text_key(body: str) -> str:
    """`content_key` of the body without its first heading: what a memory says whatever its title,
    so the same content written again without a title (which derives one) is found a duplicate."""
    lines = body.strip().split("\n")
    if lines and _HEADING.match(lines[0].strip()):
        lines = lines[1:]
    return content_key("\n".join(lines))


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
