"""One memory file inside a call: read it by id, write it and index it in the same step, and the
paths a memory may have (inside the store, never outside)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from memory_mcp.app import provenance
from memory_mcp.app.session import Session
from memory_mcp.index import flagged
from memory_mcp.index.authors import Version, versions
from memory_mcp.index.db import Index
from memory_mcp.index.schema import FileStat
from memory_mcp.truth import edits, files, injection, words
from memory_mcp.truth.errors import Containment, InvalidArgument, NotFound, ParseError, SecretDetected, Stale
from memory_mcp.truth.layout import month_folder
from memory_mcp.truth.model import Memory, check_id, now_iso, slugify
from memory_mcp.truth.secrets import scan
from memory_mcp.truth.standing import blob_sha
from memory_mcp.truth.ulids import new_ulid
from memory_mcp.truth.validate import kinds


@dataclass
class Loaded:
    """A memory file read from disk for a write: its parsed form and where it lives."""

    mem: Memory
    rel: str


def load(session: Session, index: Index, mem_id: str, for_write: bool = True, expected_sha: str = "") -> Loaded:
    """The memory file of `mem_id`, parsed. For a write, a file without an id of its own gets a
    permanent one first, so the id written into files (its own and others') is a real ULID; to be
    shown, a file holding a credential comes with the values masked. With `expected_sha` (the git
    blob id of the file as the caller read it), a file that has changed since is refused (`Stale`)."""
    check_id(mem_id)
    row = index.get(mem_id)
    if row is None:
        raise NotFound(f"no memory with id {mem_id}; use {words.op('recall')} to find the right id.")
    raw = (session.root / row.path).read_bytes()
    if expected_sha and blob_sha(raw) != expected_sha.strip().lower():
        raise Stale(f"{row.path} changed since it was read (by hand or by another session); nothing was "
                    "written. Read it again and redo the change on what it holds now.")
    text = files.decode(raw)
    mem = files.parse(text, row.path)
    if not for_write and any(p == row.path for p, _ in index.secret_flags()):
        mem = files.masked(mem)  # a credential written by hand is never shown (memory_read, export)
    if for_write and mem.provisional:
        mem.id, mem.provisional = new_ulid(), False
        mem.created = mem.created or now_iso()
    return Loaded(mem, row.path)


def write(session: Session, index: Index, items: list[Loaded],
          fresh: frozenset[str] = frozenset()) -> dict[str, list[injection.Flag]]:
    """Write memory files and index them in one transaction, so reconcile sees no hand edit; returns
    how the text of each file that tries to steer the model does (`injection.scan`), by path: such a
    file is written all the same, and flagged.

    Every file is checked before the first is written. `fresh` names the memories made in this call
    from checked arguments alone: their text is not scanned for credentials a second time."""
    texts = [files.serialize(item.mem) for item in items]
    for item, text in zip(items, texts, strict=True):
        found = [] if item.mem.id in fresh else scan(text)
        if found:
            # Every argument was scanned already, so this came with a file written by hand: writing it
            # again would commit the credential to git.
            raise SecretDetected(
                f"{item.rel} holds what looks like a credential ({kinds(found)}), written by hand. Remove it "
                "from the file (say where it is kept instead), then call again.")
    session.history.check_idle()
    datas = [text.encode("utf-8") if item.mem.id in fresh else _edited(session.root / item.rel, item, text)
             for item, text in zip(items, texts, strict=True)]
    # Recorded before the files exist, so no reader sees a version of ours as someone else's.
    before = versions(index.conn, [item.rel for item in items if item.mem.id not in fresh])
    provenance.carry([(_version(before.get(item.rel)), (item.mem.id, blob_sha(data)))
                      for item, data in zip(items, datas, strict=True)])
    stats = [put_file(session.root / item.rel, data) for item, data in zip(items, datas, strict=True)]
    tries = {item.rel: injection.scan(files.decode(data)) for item, data in zip(items, datas, strict=True)}
    with index.transaction():
        for item, stat in zip(items, stats, strict=True):
            # A memory made in this call carries canonical names already; a loaded one may carry aliases.
            entities = item.mem.entities if item.mem.id in fresh else \
                session.dictionary.normalise_all(item.mem.entities)[0]
            index.upsert(item.rel, item.mem, entities, stat)
            index.set_secret_flags(item.rel, [])
            flagged.record(index.conn, item.rel, tries[item.rel])
    return {rel: flags for rel, flags in tries.items() if flags}


def put_file(path: Path, data: bytes) -> FileStat:
    """Write `data` to `path` atomically; what the index's stat gate will find there."""
    files.atomic_write_bytes(path, data)
    st = path.stat()
    return FileStat(st.st_mtime_ns, st.st_size, hashlib.sha256(data).hexdigest(), st.st_ctime_ns, st.st_ino,
                    blob_sha(data))


def _version(v: Version | None) -> tuple[str, str] | None:
    return (v.id, v.blob) if v is not None else None


def _edited(path: Path, item: Loaded, text: str) -> bytes:
    """The bytes a write puts in an existing file: a person's comments, layout, BOM and line ends
    kept (edits.edit), the whole `text` when the file is gone or no longer parses."""
    try:
        original = path.read_bytes()
        return edits.edit(original, files.parse(files.decode(original), item.rel), item.mem)
    except (OSError, ParseError):
        return text.encode("utf-8")


def resolve_path(root: Path, path: str) -> str:
    """A store-relative path with / separators for `path`, refusing anything outside the store."""
    if "\x00" in path:
        raise InvalidArgument("path contains a NUL character.")
    p = Path(path)
    full = (p if p.is_absolute() else root / p).resolve()
    try:
        rel = full.relative_to(root)
    except ValueError:
        raise Containment(f"'{path[:200]}' is outside the store; pass a path like memories/name.md.") from None
    return rel.as_posix()


def new_path(root: Path, title: str, mem_id: str, created: str | None = None) -> str:
    """The file a new memory gets: `<its month folder>/<slug>-<first 8 of its id>.md` (the whole id
    on a clash), the month being that of `created` (default: now; see `layout.month_folder`)."""
    folder, slug = month_folder(root, created), slugify(title)
    rel = f"{folder}/{slug}-{mem_id[:8]}.md"
    if (root / rel).exists():
        rel = f"{folder}/{slug}-{mem_id}.md"
    return rel
