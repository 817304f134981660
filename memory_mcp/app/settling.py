"""Settling conflict pairs: one at a time (memory_resolve), or every open pair a filter selects
(`memory-mcp conflicts`), as one commit, so the pairs a whole import raised are decided, and can be
reviewed or reverted, together."""

from __future__ import annotations

from collections.abc import Callable

from memory_mcp.app.access import Loaded, load, write
from memory_mcp.app.reads import superseded_by
from memory_mcp.app.session import Session
from memory_mcp.app.upkeep import pending
from memory_mcp.index.db import Index
from memory_mcp.truth import lifecycle, words
from memory_mcp.truth.errors import InvalidArgument, InvalidSupersede
from memory_mcp.truth.model import BulkDecision, Decision, Memory, check_id, now_iso
from memory_mcp.truth.options import Conflicts, Resolve
from memory_mcp.truth.results import BulkResolveResult, ConflictPage, PendingConflict, ResolveResult


def resolve(session: Session, opts: Resolve) -> ResolveResult:
    """Settle a pair: `supersede` (id replaces other_id) or `keep_both` (never raised again)."""
    if opts.decision not in tuple(Decision):
        raise InvalidArgument(f"unknown decision '{opts.decision}': use supersede or keep_both.")
    id, other_id = check_id(opts.id), check_id(opts.other_id)
    with session.call(write=True) as index:
        if id == other_id:
            if opts.decision == Decision.SUPERSEDE:
                raise InvalidSupersede(f"memory {id} cannot supersede itself.")
            raise InvalidArgument("id and other_id are the same memory; a pair needs two.")
        a, b = load(session, index, id), load(session, index, other_id)
        if opts.decision == Decision.KEEP_BOTH and not _paired(a.mem, b.mem):
            if other_id in a.mem.distinct_from:
                return ResolveResult(id=id, other_id=other_id, decision=opts.decision,
                                     message=f"{id} and {other_id} are already kept as distinct memories; "
                                             "nothing changed")
            raise InvalidArgument(f"{id} and {other_id} are not a conflict pair (neither names the other in "
                                  f"conflicts_with), so there is nothing to keep apart; {words.op('status')} "
                                  "lists the open pairs.")
        _settle(a.mem, b.mem, Decision(opts.decision), lambda i: superseded_by(index, i))
        write(session, index, [a, b])
        session.history.commit_paths([a.rel, b.rel], f"resolve: {opts.decision} {a.mem.title} / {b.mem.title}",
                                     [id, other_id])
        if opts.decision == Decision.SUPERSEDE:
            message = f"{other_id} is superseded by {id} and {b.mem.state.value}"
        else:
            message = f"{id} and {other_id} are kept as distinct memories; the pair will not be raised again"
        return ResolveResult(id=id, other_id=other_id, decision=opts.decision, message=message)


def _settle(winner: Memory, other: Memory, decision: Decision, chain: Callable[[str], str | None]) -> None:
    """Apply `decision` to the pair in memory: `winner` supersedes `other`, or both are kept and
    marked distinct. `chain` says which memory supersedes an id (for the cycle check)."""
    if decision == Decision.SUPERSEDE:
        lifecycle.check_supersede(winner.id, other, chain)
        lifecycle.apply_supersede(winner, other, now_iso())
        return
    _unlink(winner, other)
    for x, y in ((winner, other), (other, winner)):
        if y.id not in x.distinct_from:
            x.distinct_from.append(y.id)


def _paired(a: Memory, b: Memory) -> bool:
    """Whether two memories are an open conflict pair (either one names the other)."""
    return b.id in a.conflicts_with or a.id in b.conflicts_with


def _unlink(a: Memory, b: Memory) -> None:
    """Drop the pair's `conflicts_with` links, both ways."""
    for x, y in ((a, b), (b, a)):
        if y.id in x.conflicts_with:
            x.conflicts_with.remove(y.id)


def listed(session: Session, opts: Conflicts) -> ConflictPage:
    """The open pairs `opts` selects: how many, and the page from `opts.offset`."""
    if opts.limit < 1 or opts.offset < 0:
        raise InvalidArgument("limit must be at least 1 and offset at least 0.")
    with session.call() as index:
        chosen = _select(session, index, opts)
    return ConflictPage(total=len(chosen), offset=opts.offset, pairs=chosen[opts.offset:opts.offset + opts.limit])


def resolve_all(session: Session, opts: Conflicts) -> BulkResolveResult:
    """Settle every pair `opts` selects with `opts.decision`, as one commit; a dry run unless `apply`.

    With `newer`, the memory created later supersedes the other. Pairs go in the order of their newer
    memory, so when the older one was already replaced by an earlier pair of the run, the newer
    memory supersedes the newest of that chain instead: one memory said the same thing after both,
    and the chain stays one line (and `notes` says so)."""
    if opts.decision not in tuple(BulkDecision):
        raise InvalidArgument(f"unknown bulk decision '{opts.decision}': use keep_both or newer.")
    with session.call(write=opts.apply) as index:
        chosen = _select(session, index, opts)
        loaded: dict[str, Loaded] = {}

        def get(mem_id: str) -> Memory:
            if mem_id not in loaded:
                loaded[mem_id] = load(session, index, mem_id)
            return loaded[mem_id].mem

        def chain(mem_id: str) -> str | None:
            # This run's supersedes are in the loaded memories, not yet in the index.
            return loaded[mem_id].mem.superseded_by if mem_id in loaded else superseded_by(index, mem_id)

        # The same plan for a dry run and for the real one, so the dry run shows what would happen.
        notes: list[str] = []
        if opts.decision == BulkDecision.NEWER:
            ordered = sorted(((_newer_first(get(p.id), get(p.other_id)), p) for p in chosen),
                             key=lambda x: (x[0][0].created or "", x[0][0].id))
            for (newer, older), pair in ordered:
                head = older
                while head.superseded_by:
                    head = get(head.superseded_by)
                if head is newer:
                    _unlink(newer, older)
                    notes.append(f"{pair.id} / {pair.other_id}: already settled by the chain {newer.id} heads")
                    continue
                if head is not older:
                    notes.append(f"{newer.id} supersedes {head.id}, which had replaced {older.id} in this run")
                    _unlink(newer, older)
                _settle(newer, head, Decision.SUPERSEDE, chain)
        else:
            for pair in chosen:
                _settle(get(pair.id), get(pair.other_id), Decision.KEEP_BOTH, chain)
        if not opts.apply or not chosen:
            return BulkResolveResult(opts.decision, applied=False, settled=chosen, notes=notes)
        items = list(loaded.values())
        write(session, index, items)
        commit = session.history.commit_paths(
            [i.rel for i in items], f"resolve: {opts.decision} for {len(chosen)} conflict pair"
            f"{'' if len(chosen) == 1 else 's'}", [i.mem.id for i in items],
            "\n".join(f"pair: {p.id} / {p.other_id}" for p in chosen[:50]))
        return BulkResolveResult(opts.decision, applied=True, settled=chosen, notes=notes, commit=commit)


def _newer_first(a: Memory, b: Memory) -> tuple[Memory, Memory]:
    return (a, b) if (a.created or "", a.id) >= (b.created or "", b.id) else (b, a)


def _select(session: Session, index: Index, opts: Conflicts) -> list[PendingConflict]:
    chosen = pending(index)
    if opts.id:
        mem_id = check_id(opts.id)
        chosen = [p for p in chosen if mem_id in (p.id, p.other_id)]
    if opts.commit:
        wrote = session.history.memory_ids(opts.commit)
        if wrote is None:
            raise InvalidArgument(f"no commit '{opts.commit}' in the store's history; the import report and "
                                  "`git log` in the store give commit ids.")
        ids = set(wrote)
        chosen = [p for p in chosen if p.id in ids or p.other_id in ids]
    return chosen
