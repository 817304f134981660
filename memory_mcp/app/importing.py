"""The import use case: memories read from another tool or an export, each checked like a
remember, duplicates and retired memories skipped, collisions paired, one commit for the run."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import yaml

from memory_mcp.app import transfer, writes
from memory_mcp.app.access import Loaded, new_path, resolve_path, write
from memory_mcp.app.session import Session
from memory_mcp.app.sources import Batch, Incoming
from memory_mcp.app.transfer import DUPLICATE, ImportConflict, ImportReport, Skipped
from memory_mcp.index.db import Index
from memory_mcp.index.walk import walkable
from memory_mcp.recall import conflicts
from memory_mcp.truth import injection
from memory_mcp.truth.errors import InvalidArgument, StoreError
from memory_mcp.truth.model import Memory, State, Trust, content_key
from memory_mcp.truth.options import Progress
from memory_mcp.truth.stamp import Writer
from memory_mcp.truth.ulids import new_ulid
from memory_mcp.truth.validate import check_entities, check_inputs, check_short, check_text


def import_memories(session: Session, kind: str, path: Path | None = None, text: str | None = None,
                    keep_trust: bool = False, progress: Progress | None = None,
                    by: Writer | None = None) -> ImportReport:
    """Import memories of `kind` (see transfer.KINDS) from `path` or `text`, committed as one commit.

    Every memory passes the checks of memory_remember (credentials, sizes), duplicates are skipped,
    the conflict gate pairs collisions for memory_resolve. Imported memories get `trust: imported`
    unless `keep_trust` (restoring one's own export). `by` stamps `written_by` on the new memories
    that come without one (an export's records are restored as they were)."""
    batch = transfer.read(kind, path, text)
    session.check_writable()
    session.history.check_idle()  # else every memory would be refused one by one for the same reason
    report = ImportReport(kind, batch.source, refused=[Skipped(o, r) for o, r in batch.unreadable])
    with session.call(write=True) as index, index.transaction():
        # Read from git history only when an item gets past the duplicate check: a second import of
        # the same source, the common case, then costs nothing (the log costs ~8 ms per deletion).
        purged = functools.cache(lambda: transfer.deletions(session.history))
        written: list[Loaded] = []
        stamped = writes.written_by(by)
        for done, item in enumerate(batch.items):
            if progress:
                progress(done, len(batch.items))
            try:
                loaded = _import_one(session, index, item, batch, keep_trust, purged, report, stamped)
            except StoreError as e:
                report.refused.append(Skipped(item.origin, f"[{e.code}] {e.message}"))
                continue
            if loaded:
                written.append(loaded)
        if progress:
            progress(len(batch.items), len(batch.items))
        report.imported = [w.mem.id for w in written]
        if written:
            report.commit = session.history.commit_paths(
                [w.rel for w in written], f"import: {len(written)} memor{'y' if len(written) == 1 else 'ies'} from {kind} {Path(batch.source).name}",
                report.imported, f"skipped: {len(report.skipped)}, refused: {len(report.refused)}, "
                f"conflicts: {len(report.conflicts)}")
    return report


def _import_one(session: Session, index: Index, item: Incoming, batch: Batch, keep_trust: bool,
                purged: Callable[[], transfer.Deletions], report: ImportReport,
                stamped: dict[str, str] | None) -> Loaded | None:
    """Check one incoming memory and write it (not committed), or record why it was skipped. A new
    memory gets the `stamped` writer; an export's record is restored as it was, byte for byte."""
    mem = item.mem
    _check(session, item, keep_trust)
    skip = _skip_reason(index, item, batch, purged)
    if skip:
        report.skipped.append(skip)
        return None
    if stamped and batch.kind != "export" and not mem.written_by:
        mem.written_by = dict(stamped)
    if not mem.id:
        mem.id, mem.provisional = new_ulid(), False
    if mem.state == State.ACTIVE and not mem.superseded_by:
        # Only live memories contradict; an export's archived or superseded ones are history.
        found = conflicts.neighbours(index, conflicts.Subject(
            mem.id, mem.title, mem.excerpt, mem.entities, mem.updated, mem.distinct_from))
        mem.conflicts_with = list(dict.fromkeys([*mem.conflicts_with, *(
            n.row.id for n in found if n.row.id not in mem.supersedes)]))
    fresh = [i for i in mem.conflicts_with if index.get(i)]
    if fresh:
        report.conflicts.append(ImportConflict(mem.id, item.origin, fresh))
    loaded = Loaded(mem, _import_path(session, item, mem))
    for flags in write(session, index, [loaded]).values():
        report.flagged.append(Skipped(item.origin, injection.note(flags)))
    return loaded


def _check(session: Session, item: Incoming, keep_trust: bool) -> None:
    """The checks of memory_remember on an incoming memory, whose entities are normalised here."""
    mem = item.mem
    if item.sha256 and item.sha256 != transfer.sha256(mem):
        raise InvalidArgument("its content hash does not match: the record was changed after export")
    if not keep_trust:
        mem.trust = Trust.IMPORTED
    check_text(mem.body, None, mem.source, item.line)
    mem.entities = session.dictionary.normalise_all(check_entities(mem.entities))[0]
    # The other free-text fields an export carries reach the file too.
    check_short(deprecated_reason=mem.deprecated_reason)
    if mem.extra:
        check_inputs(frontmatter=yaml.safe_dump(mem.extra, allow_unicode=True))


def _skip_reason(index: Index, item: Incoming, batch: Batch,
                 purged: Callable[[], transfer.Deletions]) -> Skipped | None:
    """Why an incoming memory is not written (the store has it, or retired it), or None."""
    mem = item.mem
    by_id = item.keep_id  # an export's record with its id: its id and dates decide about deletions
    if item.keep_id:
        row = index.get(mem.id)
        stale = transfer.stale_reason(row, mem, purged().ids.get(mem.id), batch.exported_at)
        if stale:
            return Skipped(item.origin, stale, mem.id)
        if row:  # a newer version of a memory the store has: keep both, as a pair to settle
            mem.conflicts_with.append(mem.id)
            mem.id, item.keep_id = new_ulid(), False
    key = content_key(mem.body)
    same = index.by_content(key)
    dup = next((r for r in same if r.state != State.DEPRECATED), None)
    if dup:
        return Skipped(item.origin, DUPLICATE, dup.id)
    if not by_id:
        # Importing a source again must not bring back what a person retired since: a memory marked
        # wrong (deprecated) or deleted here.
        if same:
            return Skipped(item.origin, "deprecated in this store; not revived", same[0].id)
        deleted_at = purged().contents.get(key)
        if deleted_at is not None:
            return Skipped(item.origin, f"deleted in this store on {deleted_at:%Y-%m-%d %H:%M:%S}; not revived")
    return None


def _import_path(session: Session, item: Incoming, mem: Memory) -> str:
    """An export's own path when it is a free memory path, else a new one."""
    # An export is untrusted: a path the walk skips (hidden, `#`, a nested .git) would be written,
    # then vanish from the index on the next walk and, in .git, from git as well.
    if item.keep_id and item.path and walkable(item.path):
        try:
            rel = resolve_path(session.root, item.path)
        except StoreError:
            rel = ""
        if rel == item.path and not (session.root / rel).exists():
            return rel
    return new_path(session.root, mem.title, mem.id, mem.created)
