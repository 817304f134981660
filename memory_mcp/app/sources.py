"""What the import readers share, and the readers of plain text and of the MCP memory graph.

A reader turns a source into `Incoming` memories (a `Batch`) and never touches a store; the import
use case (importing.py) checks and writes them. Untrusted JSON goes through `parse_json` and
`check_json`; a record a reader cannot turn into a memory is listed with `reason(e)`.

- `paste`: plain text, one memory per non-empty line (list bullets are dropped).
- `mcp-memory`: the official MCP memory server's JSONL knowledge graph. One memory per entity: its
  observations only make sense next to its name, recall returns an entity with its facts in one hit,
  and the entity name becomes the memory's entity, so an entity-filtered recall finds it. Relations
  are lines of the source entity's text, not entities: the conflict gate pairs memories that share an
  entity, and a graph's neighbours are related, not contradictory. A relation whose source entity is
  not in the file is a memory alone.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import Any

import yaml

from memory_mcp.truth.errors import InvalidArgument, ParseError
from memory_mcp.truth.model import (
    ENTITIES_MAX,
    ENTITY_MAX,
    Memory,
    MemoryType,
    Trust,
    compose_body,
    now_iso,
    parse_iso,
)

BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")


@dataclass
class Incoming:
    """One memory read from a source. `keep_id` when the source is a memory-mcp export."""

    origin: str  # where it came from, for the report: a file name, "line 12"
    mem: Memory
    keep_id: bool = False
    path: str | None = None  # an export's path for it, reused when free
    sha256: str | None = None  # an export's content hash, checked on the way in
    line: int | None = None  # the source's line that holds all its text (paste): refusals name it


@dataclass
class Batch:
    """What a reader found: memories to import and entries it could not read (origin, reason)."""

    kind: str
    source: str
    items: list[Incoming] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    exported_at: str | None = None


# Limits on what a JSON source may hold. Python's parser turns deep nesting into RecursionError and a
# number of more than 4,300 digits into ValueError; a memory has no use for either.
JSON_DEPTH_MAX = 64
JSON_DIGITS_MAX = 40


@dataclass(frozen=True)
class _LongNumber:
    """Stands in for an integer too long to convert, so that only the record holding it is refused."""

    digits: int

    def __str__(self) -> str:
        return f"a {self.digits:,}-digit number"


def _int(text: str) -> int | _LongNumber:
    return int(text) if len(text.lstrip("-")) <= JSON_DIGITS_MAX else _LongNumber(len(text.lstrip("-")))


def parse_json(text: str) -> object:
    """`json.loads` for untrusted text: InvalidArgument instead of RecursionError, long numbers kept
    as `_LongNumber` (see `check_json`)."""
    try:
        return json.loads(text, parse_int=_int)
    except json.JSONDecodeError as e:
        raise InvalidArgument(f"not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise InvalidArgument(f"JSON nested more than {JSON_DEPTH_MAX} levels deep") from None


def check_json(value: object) -> None:
    """InvalidArgument if `value` (parsed by `_json`) nests too deep or holds a number too long or not
    finite. Iterative: the value may be as deep as the parser's own limit."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > JSON_DEPTH_MAX:
            raise InvalidArgument(f"JSON nested more than {JSON_DEPTH_MAX} levels deep")
        if isinstance(item, _LongNumber):
            raise InvalidArgument(f"{item} (numbers are limited to {JSON_DIGITS_MAX} digits)")
        if isinstance(item, float) and not math.isfinite(item):
            raise InvalidArgument(f"a number that is not finite ({item})")
        if isinstance(item, dict):
            stack += [(v, depth + 1) for v in item.values()]
        elif isinstance(item, list):
            stack += [(v, depth + 1) for v in item]


def show(value: object) -> str:
    """A value from a source, short enough for a message."""
    text = str(value) if isinstance(value, _LongNumber) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# A record that a reader could not turn into a memory: what parsing untrusted data raises besides
# our own errors (YAML's, a value of the wrong type, a number out of range, nesting too deep).
RECORD_ERRORS = (ParseError, InvalidArgument, yaml.YAMLError, ValueError, TypeError, OverflowError,
                  RecursionError)


def reason(e: Exception) -> str:
    """Why a record could not be read, in a line (no traceback, no value that may hold a secret)."""
    if isinstance(e, ParseError | InvalidArgument):
        return e.message
    if isinstance(e, RecursionError):
        return "nested too deeply"
    if isinstance(e, yaml.YAMLError):
        return f"broken YAML: {getattr(e, 'problem', None) or str(e).splitlines()[0]}"
    return f"unreadable value: {str(e).splitlines()[0][:200] if str(e) else type(e).__name__}"


def decode_source(raw: bytes, name: str) -> str:
    """A source file's bytes as text. Not UTF-8 is refused: replacing what does not decode would import
    "café" as "caf\ufffd" for good."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InvalidArgument(f"{name} is not UTF-8 text (byte {e.start}); re-save it as UTF-8 (e.g. "
                              f"`iconv -f latin1 -t utf-8`) and import again. Nothing was imported.") from None


def stamp(value: object) -> str | None:
    """A timestamp from a source as the file format writes it (UTC, to the second), or None."""
    dt = parse_iso(str(value)) if value else None
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if dt else None


# ---------------------------------------------------------------------------------------- paste
def read_paste(text: str, source: str) -> Batch:
    """One memory per non-empty line; list bullets and numbering are dropped."""
    batch = Batch("paste", source)
    for n, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        content = BULLET.sub("", line).strip()
        if content:
            batch.items.append(Incoming(f"line {n}", new_memory(content, None, source=f"paste: {_tail(source)} line {n}"),
                                        line=n))
    return batch


def new_memory(content: str, title: str | None, type: MemoryType = MemoryType.FACT, entities: list[str] | None = None,
         source: str = "", created: str | None = None, updated: str | None = None) -> Memory:
    now = now_iso()
    return Memory(id="", body=compose_body(content, title), type=type, trust=Trust.IMPORTED,
                  entities=list(entities or []), source=source[:500], created=created or updated or now,
                  updated=updated or created or now)


def _tail(source: str) -> str:
    return Path(source).name if source != "stdin" else source


# ---------------------------------------------------------------------------------------- mcp memory graph
@dataclass
class _Entity:
    name: str
    kind: str = ""
    observations: list[str] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    line: int = 0


def read_graph(text: str, source: str) -> Batch:
    """The official MCP memory server's JSONL knowledge graph: one memory per entity."""
    batch = Batch("mcp-memory", source)
    entities: dict[str, _Entity] = {}
    relations: list[tuple[int, str, str, str]] = []
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            item: Any = parse_json(line)
            check_json(item)
        except InvalidArgument as e:
            batch.unreadable.append((f"line {n}", e.message))
            continue
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "entity" and isinstance(item.get("name"), str) and item["name"].strip():
            ent = entities.setdefault(item["name"], _Entity(item["name"], line=n))
            ent.kind = ent.kind or str(item.get("entityType") or "")
            obs = item.get("observations") or []
            ent.observations += [str(o) for o in (obs if isinstance(obs, list) else [obs]) if str(o).strip()]
        elif kind == "relation" and all(isinstance(item.get(k), str) for k in ("from", "to", "relationType")):
            relations.append((n, item["from"], item["relationType"], item["to"]))
        else:
            batch.unreadable.append((f"line {n}", "neither an entity nor a relation with from, to and relationType"))
    for n, src, rel, dst in relations:
        if src in entities:
            entities[src].relations.append(f"{src} {rel} {dst}")
        else:
            batch.items.append(Incoming(f"line {n}", new_memory(f"{src} {rel} {dst}", None, entities=_names([src]),
                                                          source=f"mcp-memory graph: {_tail(source)} line {n}")))
    for ent in entities.values():
        batch.items.append(Incoming(f"line {ent.line} ({ent.name})", _entity_memory(ent, source)))
    batch.items.sort(key=lambda i: int(i.origin.split()[1]))
    return batch


def _entity_memory(ent: _Entity, source: str) -> Memory:
    parts = ["\n".join(f"- {o}" for o in dict.fromkeys(ent.observations))] if ent.observations else []
    if ent.kind:
        parts.append(f"Entity type: {ent.kind}.")
    if ent.relations:
        parts.append("Relations:\n" + "\n".join(f"- {r}" for r in dict.fromkeys(ent.relations)))
    kind = ent.kind.strip().lower()
    mem_type = MemoryType(kind) if kind in MemoryType.__members__.values() else MemoryType.FACT
    return new_memory("\n\n".join(parts) or ent.name, ent.name, mem_type, entities=_names([ent.name]),
                source=f"mcp-memory graph: {_tail(source)} line {ent.line}")


def _names(names: list[str]) -> list[str]:
    """Names that fit as entities (the rest stay in the text)."""
    return [n for n in dict.fromkeys(" ".join(x.split()) for x in names) if n and len(n) <= ENTITY_MAX][:ENTITIES_MAX]
