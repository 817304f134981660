"""Getting memories in and out: the import kinds and their reports, and the portable export.

Readers (sources.py for `paste` and `mcp-memory`, automemory.py for `claude-code`, `read_export`
here for `export`) turn a source into `Incoming` memories and never touch a store;
`Store.import_memories` puts them through the same checks as `memory_remember` (credentials, sizes,
duplicates, the conflict gate) and commits the run once. `export`: memory-mcp's own portable JSON
(see `export_document`); ids and fields are kept.
"""

from __future__ import annotations

import hashlib
import json
import stat
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from memory_mcp.app import automemory, sources
from memory_mcp.app.sources import (
    RECORD_ERRORS,
    Batch,
    Incoming,
    check_json,
    decode_source,
    parse_json,
    reason,
    show,
    stamp,
)
from memory_mcp.index.schema import Row
from memory_mcp.truth import files, words
from memory_mcp.truth.errors import InvalidArgument, ParseError, Unwritable
from memory_mcp.truth.model import Memory, content_key, parse_iso
from memory_mcp.vcs.history import History

KINDS = ("claude-code", "mcp-memory", "paste", "export")
EXPORT_FORMAT = "memory-mcp/export"
EXPORT_VERSION = 1


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
    flagged: list[Skipped] = field(default_factory=list)  # imported, with text that tries to steer the model

    def summary(self, limit: int = 20) -> str:
        """Counts first, then why things were refused and which pairs to settle."""
        pairs = sum(len(c.conflicts_with) for c in self.conflicts)
        paired = f" ({pairs} pair{'' if pairs == 1 else 's'} to settle)" if pairs else ""
        lines = [f"imported {len(self.imported)}, skipped {len(self.skipped)} (already there), "
                 f"refused {len(self.refused)}, conflicts {len(self.conflicts)}{paired} from {self.kind} {self.source}"]
        lines += _first(limit, "refused", [f"refused {r.origin}: {r.reason}" for r in self.refused])
        lines += _first(limit, "skipped", [f"skipped {s.origin}: {s.reason}" for s in self.skipped
                                           if s.reason != DUPLICATE])
        lines += _first(limit, "conflicts", [f"conflict {c.id} ({c.origin}) with {', '.join(c.conflicts_with)}"
                                             for c in self.conflicts])
        lines += _first(limit, "flagged", [f"{f.origin}: {f.reason}" for f in self.flagged])
        if self.commit:
            lines.append(f"committed as {self.commit[:12]}")
            if self.conflicts:
                lines.append(f"settle the pairs one by one with {words.op('resolve')}, or all at once: "
                             f"`memory-mcp conflicts --commit {self.commit[:12]} --resolve keep_both` "
                             "(a dry run; add --yes to apply)")
        return "\n".join(lines)


def _first(limit: int, what: str, lines: list[str]) -> list[str]:
    """The first `limit` lines, and how many more there are."""
    more = [f"... and {len(lines) - limit} more {what}"] if len(lines) > limit else []
    return lines[:limit] + more


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
        return _readable(automemory.read_claude_code(path))
    if text is None:
        if path is None or not path.is_file():
            raise InvalidArgument(f"{path} is not a file; pass the file to import (or - for standard input).")
        text = decode_source(path.read_bytes(), str(path))
    name = str(path) if path else "stdin"
    readers = {"mcp-memory": sources.read_graph, "paste": sources.read_paste, "export": read_export}
    return _readable(readers[kind](text, name))


def _readable(batch: Batch) -> Batch:
    """The batch, or one error when nothing in the source could be read: a file that is not what the
    kind says is one mistake, not a list of as many refusals as it has lines or records."""
    if batch.items or not batch.unreadable:
        return batch
    (origin, reason), more = batch.unreadable[0], len(batch.unreadable) - 1
    rest = f" (and {more} more entr{'y' if more == 1 else 'ies'} like it)" if more else ""
    raise InvalidArgument(f"nothing in {batch.source} could be read as {batch.kind}: {origin}: {reason}{rest}. "
                          "Nothing was imported.")


# ---------------------------------------------------------------------------------------- export
def export_json(doc: dict[str, Any]) -> str:
    """The export document as the text of its file: readable unicode, one level of indent."""
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def export_target(path: Path) -> Path:
    """The file an export to `path` replaces: `path`, or the file a symlink there points at (the file
    the person means: renaming over the link would leave its target stale). Only a new name or a
    regular file is written; a rename onto a folder, a device or a pipe would replace it (as root,
    /dev/full became a JSON file)."""
    target = path.expanduser().resolve()
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return target
    except OSError as e:
        raise Unwritable(f"cannot write the export to {path}: {e.strerror}.") from None
    if stat.S_ISREG(mode):
        return target
    kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a device, a pipe or a socket)"
    raise InvalidArgument(f"{path} is {kind}; an export writes a new file or replaces a regular one. "
                          "Name a file (such as memories.json).")


def write_export(target: Path, text: str) -> None:
    """Write the export's text to `target` (from `export_target`) atomically."""
    try:
        files.atomic_write(target, text)
    except OSError as e:
        raise Unwritable(f"cannot write the export to {target}: {e.strerror}; name a file in a folder "
                         "you can write.") from None


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
        doc = parse_json(text)
    except InvalidArgument as e:
        raise InvalidArgument(f"{source} is {e.message}; pass a memory-mcp export.") from None
    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT or not isinstance(doc.get("memories"), list):
        raise InvalidArgument(f"{source} is not a memory-mcp export (no \"format\": \"{EXPORT_FORMAT}\").")
    version = doc.get("version")
    if type(version) is not int or version != EXPORT_VERSION:
        raise InvalidArgument(f"{source} is export version {show(version)}; this memory-mcp reads "
                              f"version {EXPORT_VERSION}.")
    when = doc.get("exported_at")
    batch = Batch("export", source, exported_at=stamp(when) if isinstance(when, str) else None)
    for n, rec in enumerate(doc["memories"], 1):
        rid = rec.get("id") if isinstance(rec, dict) else None
        origin = f"record {n}" + (f" ({rid})" if isinstance(rid, str) and rid else "")
        try:
            check_json(rec)
            batch.items.append(_record(rec, n))
        except RECORD_ERRORS as e:
            batch.unreadable.append((origin, reason(e)))
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
