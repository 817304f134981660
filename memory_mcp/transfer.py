"""Getting memories in and out: readers for other tools' memory formats and the portable export.

Readers turn a source into `Incoming` memories and never touch a store; `Store.import_memories` puts
them through the same checks as `memory_remember` (credentials, sizes, duplicates, the conflict gate)
and commits the run once.

Kinds:
- `claude-code`: a Claude Code auto-memory folder (`~/.claude/projects/<project>/memory/`): topic
  files with `name`/`description`/`type` frontmatter, and `MEMORY.md`, whose lines that point at a
  topic file are its index (skipped) and whose other lines are notes (one memory each).
- `mcp-memory`: the official MCP memory server's JSONL knowledge graph. One memory per entity: its
  observations only make sense next to its name, recall returns an entity with its facts in one hit,
  and the entity name becomes the memory's entity, so an entity-filtered recall finds it. Relations
  are lines of the source entity's text, not entities: the conflict gate pairs memories that share an
  entity, and a graph's neighbours are related, not contradictory. A relation whose source entity is
  not in the file is a memory alone.
- `paste`: plain text, one memory per non-empty line (list bullets are dropped).
- `export`: memory-mcp's own portable JSON (see `export_document`); ids and fields are kept.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from . import files
from .errors import InvalidArgument, ParseError
from .history import History
from .model import (
    ENTITIES_MAX,
    ENTITY_MAX,
    Memory,
    MemoryType,
    Trust,
    compose_body,
    content_key,
    now_iso,
    parse_iso,
)
from .paths import read_regular
from .schema import Row

KINDS = ("claude-code", "mcp-memory", "paste", "export")
EXPORT_FORMAT = "memory-mcp/export"
EXPORT_VERSION = 1
# Claude Code's four auto-memory types, as ours: who the user is is a fact about them; feedback is how
# they want the work done (a preference); project notes are facts about the work; references stay references.
CLAUDE_TYPES = {"user": MemoryType.FACT, "feedback": MemoryType.PREFERENCE, "project": MemoryType.FACT,
                "reference": MemoryType.REFERENCE}
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")


@dataclass
class Incoming:
    """One memory read from a source. `keep_id` when the source is a memory-mcp export."""

    origin: str  # where it came from, for the report: a file name, "line 12"
    mem: Memory
    keep_id: bool = False
    path: str | None = None  # an export's path for it, reused when free
    sha256: str | None = None  # an export's content hash, checked on the way in


@dataclass
class Batch:
    """What a reader found: memories to import and entries it could not read (origin, reason)."""

    kind: str
    source: str
    items: list[Incoming] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    exported_at: str | None = None


@dataclass(frozen=True)
class Skipped:
    origin: str
    reason: str
    id: str | None = None


@dataclass(frozen=True)
class ImportConflict:
    """An imported memory the conflict gate paired with existing ones (open pairs, for memory_resolve)."""

    id: str
    origin: str
    conflicts_with: list[str]


@dataclass
class ImportReport:
    """The outcome of one import run."""

    kind: str
    source: str
    imported: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    refused: list[Skipped] = field(default_factory=list)
    conflicts: list[ImportConflict] = field(default_factory=list)
    commit: str | None = None

    def summary(self, limit: int = 20) -> str:
        """Counts first, then why things were refused and which pairs to settle."""
        lines = [f"imported {len(self.imported)}, skipped {len(self.skipped)} (already there), "
                 f"refused {len(self.refused)}, conflicts {len(self.conflicts)} from {self.kind} {self.source}"]
        lines += [f"refused {r.origin}: {r.reason}" for r in self.refused[:limit]]
        lines += [f"skipped {s.origin}: {s.reason}" for s in self.skipped[:limit] if s.reason != DUPLICATE]
        lines += [f"conflict {c.id} ({c.origin}) with {', '.join(c.conflicts_with)}: settle with memory_resolve"
                  for c in self.conflicts[:limit]]
        if self.commit:
            lines.append(f"committed as {self.commit[:12]}")
        return "\n".join(lines)


DUPLICATE = "the same content is already in the store"


def sha256(mem: Memory) -> str:
    """The content hash of a memory as memory-mcp writes its file."""
    return hashlib.sha256(files.serialize(mem).encode("utf-8")).hexdigest()


def read(kind: str, path: Path | None, text: str | None = None) -> Batch:
    """Read a source of `kind` from `path` (or `text`, for paste, export and mcp-memory)."""
    if kind not in KINDS:
        raise InvalidArgument(f"unknown import kind '{kind}': use one of {', '.join(KINDS)}.")
    if kind == "claude-code":
        if path is None or not path.is_dir():
            raise InvalidArgument(f"{path or 'standard input'} is not a folder; pass a Claude Code memory "
                                  "folder, such as ~/.claude/projects/<project>/memory.")
        return _readable(read_claude_code(path))
    if text is None:
        if path is None or not path.is_file():
            raise InvalidArgument(f"{path} is not a file; pass the file to import (or - for standard input).")
        text = decode_source(path.read_bytes(), str(path))
    name = str(path) if path else "stdin"
    return _readable({"mcp-memory": read_graph, "paste": read_paste, "export": read_export}[kind](text, name))


def _readable(batch: Batch) -> Batch:
    """The batch, or one error when nothing in the source could be read: a file that is not what the
    kind says is one mistake, not a list of as many refusals as it has lines or records."""
    if batch.items or not batch.unreadable:
        return batch
    (origin, reason), more = batch.unreadable[0], len(batch.unreadable) - 1
    rest = f" (and {more} more entr{'y' if more == 1 else 'ies'} like it)" if more else ""
    raise InvalidArgument(f"nothing in {batch.source} could be read as {batch.kind}: {origin}: {reason}{rest}. "
                          "Nothing was imported.")


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


def _json(text: str) -> object:
    """`json.loads` for untrusted text: InvalidArgument instead of RecursionError, long numbers kept
    as `_LongNumber` (see `_check_json`)."""
    try:
        return json.loads(text, parse_int=_int)
    except json.JSONDecodeError as e:
        raise InvalidArgument(f"not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise InvalidArgument(f"JSON nested more than {JSON_DEPTH_MAX} levels deep") from None


def _check_json(value: object) -> None:
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


def _show(value: object) -> str:
    """A value from a source, short enough for a message."""
    text = str(value) if isinstance(value, _LongNumber) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# A record that a reader could not turn into a memory: what parsing untrusted data raises besides
# our own errors (YAML's, a value of the wrong type, a number out of range, nesting too deep).
_RECORD_ERRORS = (ParseError, InvalidArgument, yaml.YAMLError, ValueError, TypeError, OverflowError,
                  RecursionError)


def _reason(e: Exception) -> str:
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


# ---------------------------------------------------------------------------------------- paste
def read_paste(text: str, source: str) -> Batch:
    """One memory per non-empty line; list bullets and numbering are dropped."""
    batch = Batch("paste", source)
    for n, line in enumerate(text.replace("\r\n", "\n").split("\n"), 1):
        content = _BULLET.sub("", line).strip()
        if content:
            batch.items.append(Incoming(f"line {n}", _new(content, None, source=f"paste: {_tail(source)} line {n}")))
    return batch


def _new(content: str, title: str | None, type: MemoryType = MemoryType.FACT, entities: list[str] | None = None,
         source: str = "", created: str | None = None, updated: str | None = None) -> Memory:
    now = now_iso()
    return Memory(id="", body=compose_body(content, title), type=type, trust=Trust.IMPORTED,
                  entities=list(entities or []), source=source[:500], created=created or updated or now,
                  updated=updated or created or now)


def _tail(source: str) -> str:
    return Path(source).name if source != "stdin" else source


# ---------------------------------------------------------------------------------------- claude code
def read_claude_code(folder: Path) -> Batch:
    """A Claude Code auto-memory folder (or the project folder holding `memory/`)."""
    if not (folder / "MEMORY.md").exists() and (folder / "memory").is_dir():
        folder = folder / "memory"
    batch = Batch("claude-code", str(folder))
    topics = sorted(p for p in folder.rglob("*.md") if not any(part.startswith(".") for part in
                                                                p.relative_to(folder).parts))
    for p in topics:
        rel = p.relative_to(folder).as_posix()
        if p.is_dir() and not p.is_symlink():
            continue  # a folder named like a topic file: rglob walks into it
        if p.is_symlink():
            # As the store's own walk does: a link may lead anywhere (~/.ssh, another project), and
            # whatever it reads would be committed to git.
            batch.unreadable.append((rel, "symbolic link: not followed (links may lead out of the folder)"))
            continue
        try:
            text = files.decode(read_regular(p, files.MAX_FILE_BYTES + 1))
            if rel == "MEMORY.md":
                batch.items += _memory_index_notes(text, folder)
            else:
                batch.items.append(_claude_topic(text, rel, p))
        except OSError as e:
            batch.unreadable.append((rel, f"cannot read: {e.strerror}"))
        except _RECORD_ERRORS as e:
            batch.unreadable.append((rel, _reason(e)))
    return batch


def _claude_topic(text: str, rel: str, path: Path) -> Incoming:
    fm_text, body = files.split(text)
    meta: dict[str, Any] = {}
    if fm_text is not None:
        try:
            loaded = files._yaml_load(fm_text)
        except yaml.YAMLError as e:
            raise ParseError(f"broken YAML frontmatter: {getattr(e, 'problem', None) or e}") from None
        meta = loaded if isinstance(loaded, dict) else {}
    name = str(meta.get("name") or "").strip()
    description = " ".join(str(meta.get("description") or "").split())
    kind = str(meta.get("type") or "").strip().lower()
    mem_type = CLAUDE_TYPES.get(kind) or (MemoryType(kind) if kind in MemoryType.__members__.values() else
                                          MemoryType.FACT)
    body = body.strip()
    # The description is Claude Code's one-line summary of the file: it makes the excerpt recall shows.
    if description and description not in body:
        if body.startswith("#"):
            heading, _, rest = body.partition("\n")
            body = f"{heading}\n\n{description}\n\n{rest.strip()}".rstrip()
        else:
            body = f"{description}\n\n{body}".rstrip()
    title = None if body.startswith("#") else (_humanise(name) or None)
    modified = _stamp(meta.get("modified") or meta.get("updated")) or _mtime(path)
    return Incoming(rel, _new(body, title, mem_type, source=f"claude-code memory: {rel}",
                              created=_stamp(meta.get("created")) or modified, updated=modified))


def _memory_index_notes(text: str, folder: Path) -> list[Incoming]:
    """MEMORY.md lines that are not index entries pointing at a topic file, nor headings: one memory each."""
    out: list[Incoming] = []
    in_code = False
    for n, line in enumerate(text.split("\n"), 1):
        if line.strip().startswith("```"):
            in_code = not in_code
            continue
        stripped = line.strip()
        if in_code or not stripped or stripped.startswith("#") or stripped.startswith("<!--"):
            continue
        if any((folder / target.split("#")[0]).is_file() for target in _LINK.findall(stripped)):
            continue
        content = _BULLET.sub("", stripped).strip()
        if content:
            out.append(Incoming(f"MEMORY.md line {n}", _new(content, None, source=f"claude-code MEMORY.md line {n}")))
    return out


def _humanise(name: str) -> str:
    return " ".join(name.replace("_", " ").replace("-", " ").split())


def _stamp(value: object) -> str | None:
    dt = parse_iso(str(value)) if value else None
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if dt else None


def _mtime(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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
            item: Any = _json(line)
            _check_json(item)
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
            batch.items.append(Incoming(f"line {n}", _new(f"{src} {rel} {dst}", None, entities=_names([src]),
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
    return _new("\n\n".join(parts) or ent.name, ent.name, mem_type, entities=_names([ent.name]),
                source=f"mcp-memory graph: {_tail(source)} line {ent.line}")


def _names(names: list[str]) -> list[str]:
    """Names that fit as entities (the rest stay in the text)."""
    return [n for n in dict.fromkeys(" ".join(x.split()) for x in names) if n and len(n) <= ENTITY_MAX][:ENTITIES_MAX]


# ---------------------------------------------------------------------------------------- export
def export_json(doc: dict[str, Any]) -> str:
    """The export document as the text of its file: readable unicode, one level of indent."""
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def export_document(memories: list[tuple[str, Memory]], exported_at: str,
                    unindexed: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """The portable JSON document: every frontmatter field, the body and a content hash per memory,
    and the files left out because they could not be read as memories (path, reason)."""
    records = []
    for path, mem in memories:
        fm = files.frontmatter(mem)
        if mem.provisional:
            fm.pop("id", None)
        records.append({"id": None if mem.provisional else mem.id, "path": path, "sha256": sha256(mem),
                        "frontmatter": fm, "body": mem.body})
    return {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "exported_at": exported_at,
            "count": len(records), "memories": records,
            "not_exported": [{"path": p, "reason": r} for p, r in unindexed or []]}


def read_export(text: str, source: str) -> Batch:
    """A memory-mcp export. Each record is re-parsed as a memory file, so it is validated like one."""
    try:
        doc = _json(text)
    except InvalidArgument as e:
        raise InvalidArgument(f"{source} is {e.message}; pass a memory-mcp export.") from None
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT or not isinstance(doc.get("memories"), list):
        raise InvalidArgument(f"{source} is not a memory-mcp export (no \"format\": \"{EXPORT_FORMAT}\").")
    version = doc.get("version")
    if type(version) is not int or version != EXPORT_VERSION:
        raise InvalidArgument(f"{source} is export version {_show(version)}; this memory-mcp reads "
                              f"version {EXPORT_VERSION}.")
    stamp = doc.get("exported_at")
    batch = Batch("export", source, exported_at=_stamp(stamp) if isinstance(stamp, str) else None)
    for n, rec in enumerate(doc["memories"], 1):
        rid = rec.get("id") if isinstance(rec, dict) else None
        origin = f"record {n}" + (f" ({rid})" if isinstance(rid, str) and rid else "")
        try:
            _check_json(rec)
            batch.items.append(_record(rec, n))
        except _RECORD_ERRORS as e:
            batch.unreadable.append((origin, _reason(e)))
    return batch


def _record(rec: object, n: int) -> Incoming:
    if not isinstance(rec, dict) or not isinstance(rec.get("frontmatter"), dict) or not isinstance(rec.get("body"), str):
        raise InvalidArgument("a record needs a frontmatter mapping and a body")
    path = rec.get("path") if isinstance(rec.get("path"), str) else None
    head = yaml.safe_dump(rec["frontmatter"], sort_keys=False, allow_unicode=True, width=10**6)
    mem = files.parse(f"---\n{head}---\n{rec['body']}", path or f"memories/record-{n}.md")
    keep = not mem.provisional
    if not keep:
        mem.id = ""
    origin = f"record {n}" + (f" ({mem.id})" if keep else "")
    return Incoming(origin, mem, keep_id=keep, path=path, sha256=rec.get("sha256") if keep else None)


@dataclass
class Deletions:
    """What this store's git history deleted (purges and deletions by hand): memory id -> when, and
    content key (see model.content_key) -> when. The deleted file's own text names both."""

    ids: dict[str, datetime] = field(default_factory=dict)
    contents: dict[str, datetime] = field(default_factory=dict)


def deletions(history: History) -> Deletions:
    """Every memory file deletion in the store's git history, by id and by content."""
    out = Deletions()
    for deletion in history.deleted_files("memories"):
        when = parse_iso(deletion.date)
        if not when:
            continue
        for rel in deletion.paths:
            data = history.blob(f"{deletion.commit}^", rel)
            if data is None:
                continue
            try:
                mem = files.parse(files.decode(data), rel)
            except ParseError:
                continue
            if not mem.provisional and (mem.id not in out.ids or out.ids[mem.id] < when):
                out.ids[mem.id] = when
            key = content_key(mem.body)
            if key not in out.contents or out.contents[key] < when:
                out.contents[key] = when
    return out


def stale_reason(row: Row | None, mem: Memory, deleted_at: datetime | None, exported_at: str | None) -> str | None:
    """Why an exported memory must not be imported (None: import it).

    A store that has the id keeps its version unless the export's is newer (then both are kept, as a
    conflict). A deletion here wins over every version last changed before it: an older export does
    not bring back what was deleted since."""
    if row is not None:
        if _newer(mem.updated, row.updated):
            return None
        return "the store already has this memory (the same or a newer version)"
    if deleted_at is not None:
        changed = parse_iso(mem.updated or exported_at)
        if changed is None or changed <= deleted_at:
            return f"deleted in this store on {deleted_at:%Y-%m-%d %H:%M:%S}, after this version; not revived"
    return None


def _newer(a: str | None, b: str | None) -> bool:
    x, y = parse_iso(a), parse_iso(b)
    return x is not None and (y is None or x > y)
