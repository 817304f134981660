"""The use cases that read: recall, read one memory, peek, the session digest and export.

A recall imports only what it runs: recall as of a day (git and an index of then), reading a memory
whole (its file parsed) and export load their modules when called (a CLI recall is a new process)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memory_mcp.app import authorship, provenance
from memory_mcp.app.session import Session
from memory_mcp.index import flagged
from memory_mcp.index.db import Index
from memory_mcp.index.schema import Row
from memory_mcp.recall import overview, search
from memory_mcp.recall.ranking import DIGEST_LIMIT
from memory_mcp.truth import files, globs, lifecycle, words
from memory_mcp.truth.errors import InvalidArgument, NotFound
from memory_mcp.truth.model import check_id, now_iso
from memory_mcp.truth.recall import Hit, Recall, RecallResult

if TYPE_CHECKING:
    from memory_mcp.truth.results import Listed, ReadResult


def recall(session: Session, opts: Recall, record: bool = True) -> RecallResult:
    """Find memories for a query (or list by entities/types), ranked, within an optional token budget.
    Without `record`, the hits' usage is left as it was (the local page's preview of a hook)."""
    if not 1 <= opts.limit <= search.RECALL_MAX:
        raise InvalidArgument(f"limit must be between 1 and {search.RECALL_MAX}.")
    search.row_filter(opts, [])  # refuse an unknown type before taking the lock
    if opts.as_of:
        return _recall_as_of(session, opts)
    if opts.file:
        return _recall_by_file(session, opts, record)
    with session.call() as index:
        return _recall(session, index, opts, record=record)


def _recall(session: Session, index: Index, opts: Recall,
            matched: Callable[[Row], bool] | None = None, record: bool = True) -> RecallResult:
    names, unknown = session.dictionary.normalise_all(list(opts.entities))
    reader = session.reader()
    # A memory this person rejected is left out: ask for as many more as there are rejections.
    more = reader.rejected_count()
    hits, truncated = search.run(index, replace(opts, limit=opts.limit + more) if more else opts,
                                 search.row_filter(opts, names), session.dictionary.mentioned(opts.query),
                                 matched=matched)
    hits = provenance.annotate(index, hits, reader)[: opts.limit]
    if hits and record:
        with index.transaction():
            index.record_recall([h.id for h in hits], now_iso())
    return RecallResult(results=hits, coverage=session.coverage(index), pending_conflicts=index.open_pair_count(),
                        truncated=truncated, unknown_entities=unknown)


def _recall_by_file(session: Session, opts: Recall, record: bool = True) -> RecallResult:
    """Recall by file with the globs matched outside the store lock, so a write never waits on them:
    the globs are read under the lock (after the reconcile), matched, and the recall then runs under
    the lock again, matching afresh only a memory whose globs changed in between."""
    with session.call() as index:
        globbed = {r.id: r.paths for r in index.select(replace(search.row_filter(opts, []), with_paths=True))}
    found = {mem_id for mem_id, paths in globbed.items() if globs.matches_any(paths, opts.file)}

    def matched(row: Row) -> bool:
        return row.id in found if globbed.get(row.id) == row.paths else globs.matches_any(row.paths, opts.file)

    with session.storage_errors(), session.lock.hold():
        result = _recall(session, session.index(), opts, matched, record)
    # Outside the lock: a count not kept yet is a git process in the project.
    from memory_mcp.app import staleness

    with session.storage_errors():
        result.results = staleness.mark_hits(session.root, session.index(), result.results, opts)
    return result


def _recall_as_of(session: Session, opts: Recall) -> RecallResult:
    """Recall from the store as git held it at the end of the day `opts.as_of`; usage is not
    recorded (the question is about then)."""
    from memory_mcp.app import asof

    snap = asof.snapshot(session.history, opts.as_of)
    with session.call() as index:
        then, dictionary = asof.open_index(session.history, session.derived, snap.commit.commit, index,
                                           session.dictionary)
        try:
            names, unknown = dictionary.normalise_all(list(opts.entities))
            hits, truncated = search.run(then, opts, search.row_filter(opts, names), dictionary.mentioned(opts.query),
                                         now=snap.moment)
            return RecallResult(results=asof.annotate(hits, then, index, snap, session.history),
                                coverage=asof.coverage(then, snap), pending_conflicts=index.open_pair_count(),
                                truncated=truncated, unknown_entities=unknown, as_of_commit=snap.commit.commit)
        finally:
            then.close()


def search_only(session: Session, query: str, limit: int = 8) -> list[Hit]:
    """Ranked hits for `query` over the index as it is (no reconcile, no usage recorded)."""
    opts = Recall(query, limit)
    with session.lock.hold():
        return search.run(session.index(), opts, search.row_filter(opts, []),
                          session.dictionary.mentioned(query))[0]


def read(session: Session, id: str | None = None, path: str | None = None) -> ReadResult:
    """The whole memory: frontmatter, body, supersede chain both ways, git history."""
    if not id and not path:
        raise InvalidArgument("pass id (a memory id) or path (memories/name.md).")
    with session.call() as index:
        return read_in(session, index, id, path)


def read_in(session: Session, index: Index, id: str | None = None, path: str | None = None) -> ReadResult:
    """`read` inside a call already under way."""
    from memory_mcp.app.access import load, resolve_path
    from memory_mcp.truth.results import Chain, HistoryEntry, ReadResult

    if id:
        row = index.get(check_id(id))
        if row is None:
            raise NotFound(f"no memory with id {id}; use {words.op('recall')} to find the right id.")
    else:
        rel = resolve_path(session.root, path or "")
        row = index.get_by_path(rel)
        if row is None:
            reason = dict(index.errors()).get(rel)
            if reason:
                raise NotFound(f"{rel} is not indexed: {reason}. Fix the file; the next call picks it up.")
            raise NotFound(f"no memory file at {rel}.")
    mem = load(session, index, row.id, for_write=False).mem
    down = lifecycle.walk(mem.id, lambda i: (r.supersedes if (r := index.get(i)) else []))
    up = lifecycle.walk(mem.id, lambda i: ([s] if (s := superseded_by(index, i)) else []))
    history = [HistoryEntry(c.commit, c.date, c.message) for c in session.history.log(row.path)]
    warnings = []
    if mem.provisional:
        warnings.append(f"this file has no id of its own; {words.op('update')} gives it a permanent one")
    author, standing = _provenance(index, row.path)
    if tries := flagged.of(index.conn, row.path):
        from memory_mcp.truth import injection  # its rules load only for a flagged memory

        warnings.append(injection.note(tries))
    return ReadResult(id=mem.id, path=row.path, title=mem.title, state=mem.state.value,
                      frontmatter=files.frontmatter(mem), body=mem.body,
                      chain=Chain(supersedes=down, superseded_by=up), history=history,
                      recall_count=index.usage([mem.id]).get(mem.id, (0, None))[0], warnings=warnings,
                      author=author, standing=standing)


def _provenance(index: Index, path: str) -> tuple[str, str]:
    """The git author (`Name <email>`, "" before a commit holds it) and the standing of the version
    of the memory at `path` the store holds now."""
    from memory_mcp.index import authors
    from memory_mcp.truth.standing import UNACCEPTED

    v = authors.versions(index.conn, [path]).get(path)
    if v is None:
        return "", UNACCEPTED
    with authorship.Reader() as reader:
        standing = reader.standings([(v.id, v.blob)]).get((v.id, v.blob), UNACCEPTED)
    return (f"{v.name} <{v.email}>" if v.name else ""), standing


def peek(session: Session, id: str) -> Listed | None:
    """Title, path and state of a memory as the files say now (reconciled), or None."""
    from memory_mcp.truth.results import Listed

    check_id(id)
    with session.call() as index:
        row = index.get(id)
        return Listed(row.id, row.path, row.title, row.state) if row else None


def digest(session: Session, limit: int = DIGEST_LIMIT) -> list[Hit]:
    """The memories worth loading at session start: active preferences, then decisions (each by
    rank), then every other active memory newest first; within each, the person's own first, then
    accepted, then not accepted, and none they rejected. Callers cut the list to a token budget."""
    with session.call() as index, authorship.Reader() as reader:
        rows = overview.digest(index.conn, limit, datetime.now(UTC), provenance.ranker(reader))
        return provenance.annotate(index, [search.hit(r, 1.0) for r in rows], reader)


def export(session: Session) -> dict[str, Any]:
    """Every indexed memory as one portable JSON document (see transfer.export_document); files
    that could not be indexed are listed in it with the reason, not silently left out."""
    from memory_mcp.app import transfer
    from memory_mcp.app.access import load

    with session.call() as index:
        out = [(row.path, load(session, index, row.id, for_write=False).mem)
               for row in sorted(index.rows(), key=lambda r: r.path)]
        return transfer.export_document(out, now_iso(), index.errors())


def superseded_by(index: Index, mem_id: str) -> str | None:
    """The memory that supersedes `mem_id`, if any."""
    row = index.get(mem_id)
    return row.superseded_by if row else None
