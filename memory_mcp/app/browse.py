"""What the local page (`memory-mcp ui`) reads: the timeline of memories (newest change first,
filtered, a page at a time, or a search through the recall pipeline), one memory's page, a version
of its file for a diff, and the commit HEAD is on. Nothing here records usage: a person looking is
not an agent recalling."""

from __future__ import annotations

from memory_mcp.app import authorship
from memory_mcp.app.reads import read_in
from memory_mcp.app.session import Session
from memory_mcp.app.upkeep import pending
from memory_mcp.index import authors, flagged
from memory_mcp.index import timeline as listing
from memory_mcp.index.db import Index
from memory_mcp.index.schema import Row, RowFilter
from memory_mcp.recall import overview, search
from memory_mcp.truth import globs
from memory_mcp.truth.errors import InvalidArgument, NotFound
from memory_mcp.truth.model import MemoryType, State, Trust, check_id, enum_value
from memory_mcp.truth.options import Timeline
from memory_mcp.truth.recall import Recall
from memory_mcp.truth.results import (
    FlaggedMemory,
    HeadCommit,
    MemoryPage,
    TimelineEntry,
    TimelinePage,
    Version,
)
from memory_mcp.truth.standing import STANDINGS, UNACCEPTED

PAGE_MAX = 200
# How many of a query's best text matches a search from the page ranks, on every page alike: the
# order depends on it (recall's pool), so a page asking for more hits than the one before still
# lists the same ones first, and paging neither repeats nor skips a memory. A query matching more
# lists this many (20 pages of 50); recall's cost grows with it (bench_ui.py).
SEARCH_DEPTH = 1000


def timeline(session: Session, opts: Timeline) -> TimelinePage:
    """The memories `opts` selects: newest change first a page at a time, or with a query its best
    matches under the same filters, a page at a time too (at most `SEARCH_DEPTH`)."""
    where = _where(opts)
    with session.call() as index, authorship.Reader() as reader:
        if where.entity:
            where = listing.Where(where.types, where.states, where.trusts,
                                   session.dictionary.normalise_all([where.entity])[0][0], where.author)
        names = listing.author_names(index.conn)
        if opts.query.strip():
            return _searched(session, index, reader, opts, where, names)
        if not opts.standing and not opts.file:
            # Unfiltered, the counts the index keeps as rows come and go (a status reads them too).
            counts = overview.tallies(index.conn)["type"] if where == listing.Where() else \
                listing.counts(index.conn, where)
            rows = listing.page(index.conn, where, opts.limit, opts.offset)
            total = sum(counts.values())
            return TimelinePage(total=total, offset=opts.offset, entries=_entries(index, reader, rows), counts=counts,
                                authors=names, more=opts.offset + len(rows) < total)
        found = listing.candidates(index.conn, where)
        marks = reader.standings((c.id, c.blob) for c in found) if opts.standing else {}
        kept = [c for c in found if (not opts.standing or marks.get((c.id, c.blob), UNACCEPTED) == opts.standing)
                and (not opts.file or globs.matches_any(c.paths, opts.file))]
        counts = {}
        for c in kept:
            counts[c.type] = counts.get(c.type, 0) + 1
        chosen = [c.rowid for c in kept[opts.offset:opts.offset + opts.limit]]
        by_rowid = {r.rowid: r for r in index.rows(chosen)}
        return TimelinePage(total=len(kept), offset=opts.offset, counts=dict(sorted(counts.items())), authors=names,
                            entries=_entries(index, reader, [by_rowid[i] for i in chosen if i in by_rowid]),
                            more=opts.offset + len(chosen) < len(kept))


def _where(opts: Timeline) -> listing.Where:
    """The SQL filters of `opts`, each value checked against its vocabulary."""
    if not 1 <= opts.limit <= PAGE_MAX or opts.offset < 0:
        raise InvalidArgument(f"limit must be between 1 and {PAGE_MAX} and offset at least 0.")
    if opts.standing and opts.standing not in STANDINGS:
        raise InvalidArgument(f"standing must be one of {', '.join(STANDINGS)}.")
    return listing.Where(types=tuple(enum_value(MemoryType, t, "type").value for t in opts.types),
                          states=tuple(enum_value(State, s, "state").value for s in opts.states),
                          trusts=tuple(enum_value(Trust, t, "trust").value for t in opts.trusts),
                          entity=opts.entity.strip(), author=opts.author)


def _searched(session: Session, index: Index, reader: authorship.Reader, opts: Timeline, where: listing.Where,
              names: list[str]) -> TimelinePage:
    """A search through recall's own pipeline (`search.run`), every state unless filtered, nothing
    withheld left out (the person sees what the agent does not), filtered further by what SQL's
    recall filter has no column for; a page at a time, each page asking recall for the best matches
    down to one past its end (whether there is a next page) out of the same `SEARCH_DEPTH` best."""
    states = frozenset(where.states or tuple(State))
    row_filter = RowFilter(states, frozenset(where.types), (where.entity,) if where.entity else ())
    mentioned = session.dictionary.mentioned(opts.query)
    wanted = opts.offset + opts.limit + 1
    depth = min(wanted, SEARCH_DEPTH)
    while True:
        hits, _ = search.run(index, Recall(opts.query, depth), row_filter, mentioned, pool=SEARCH_DEPTH)
        rows = {r.id: r for r in index.rows(_rowids(index, [h.id for h in hits]))}
        entries = _entries(index, reader, [rows[h.id] for h in hits if h.id in rows], {h.id: h.score for h in hits})
        entries = [e for e in entries if (not where.trusts or e.trust in where.trusts)
                   and (not where.author or e.author == where.author)
                   and (not opts.standing or e.standing == opts.standing)
                   and (not opts.file or globs.matches_any(rows[e.id].paths, opts.file))]
        # Filters recall cannot apply left too few: look deeper (recall's matches ran out, or the cap).
        if len(entries) >= wanted or len(hits) < depth or depth == SEARCH_DEPTH:
            break
        depth = min(depth * 2, SEARCH_DEPTH)
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.type] = counts.get(e.type, 0) + 1
    return TimelinePage(total=len(entries), offset=opts.offset, entries=entries[opts.offset:opts.offset + opts.limit],
                        counts=dict(sorted(counts.items())), searched=True, authors=names,
                        more=len(entries) > opts.offset + opts.limit)


def _rowids(index: Index, ids: list[str]) -> list[int]:
    return [row.rowid for i in ids if (row := index.get(i)) is not None]


def _entries(index: Index, reader: authorship.Reader, rows: list[Row],
             scores: dict[str, float] | None = None) -> list[TimelineEntry]:
    """The rows as the page lists them, with the author of the version held, the subject of the
    commit that wrote it, its standing and what in its text was flagged."""
    found = authors.versions(index.conn, [r.path for r in rows])
    tries = flagged.kinds(index.conn, [r.path for r in rows])
    marks = reader.standings((v.id, v.blob) for v in found.values())
    out = []
    for r in rows:
        v = found.get(r.path)
        out.append(TimelineEntry(id=r.id, path=r.path, title=r.title, excerpt=r.excerpt, type=r.type, state=r.state,
                                 trust=r.trust, entities=r.entities, updated=r.updated, author=v.name if v else "",
                                 standing=marks.get((v.id, v.blob), UNACCEPTED) if v else UNACCEPTED,
                                 score=(scores or {}).get(r.id, 0.0), subject=v.subject if v else "",
                                 flagged=tries.get(r.path, [])))
    return out


def page(session: Session, id: str) -> MemoryPage:
    """One memory whole (`read`), the version held, its author, standing and usage, its open pairs
    and what in its text was flagged."""
    with session.call() as index, authorship.Reader() as reader:
        memory = read_in(session, index, id=id)
        row = index.get(memory.id)
        if row is None:  # pragma: no cover - read_in found it under the same lock
            raise NotFound(f"no memory with id {id}.")
        v = authors.versions(index.conn, [row.path]).get(row.path)
        standing = reader.standings([(v.id, v.blob)]).get((v.id, v.blob), UNACCEPTED) if v else UNACCEPTED
        count, last = index.usage([row.id]).get(row.id, (0, None))
        pairs = [p for p in pending(index) if row.id in (p.id, p.other_id)]
        tries = [FlaggedMemory(row.id, row.path, f.kind, f.line, f.reason) for f in flagged.of(index.conn, row.path)]
        return MemoryPage(memory=memory, blob=v.blob if v else "", author=v.name if v else "",
                          author_email=v.email if v else "", authored=v.date if v else "", standing=standing,
                          recall_count=count, last_recalled=last, feedback=row.feedback, conflicts=pairs,
                          flagged=tries)


def version(session: Session, id: str, commit: str) -> Version:
    """The memory's file as `commit` left it and as the commit before left it (its path now; a
    rename before then shows as a file that was not there)."""
    check_id(id)
    if not commit or not all(c in "0123456789abcdef" for c in commit.lower()) or len(commit) > 64:
        raise InvalidArgument("commit must be a commit id (hexadecimal) from the memory's history.")
    with session.call() as index:
        row = index.get(id)
        if row is None:
            raise NotFound(f"no memory with id {id}.")
    history = session.history
    after = history.blob(commit, row.path)
    if after is None and history.memory_ids(commit) is None:
        raise NotFound(f"no commit {commit} in the store's history.")
    before = history.blob(f"{commit}^", row.path)
    return Version(commit=commit, path=row.path, before=_text(before), after=_text(after))


def _text(data: bytes | None) -> str:
    return data.decode("utf-8", errors="replace") if data is not None else ""


def head(session: Session) -> HeadCommit | None:
    """The commit HEAD is on, its subject and the memories it wrote (None before the first commit)."""
    commit = session.history.head_commit()
    if commit is None:
        return None
    return HeadCommit(commit=commit.commit, subject=commit.message, memory_ids=session.history.memory_ids(commit.commit) or [])
