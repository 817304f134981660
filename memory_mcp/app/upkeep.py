"""The use cases that look after the store as a whole: status, the open conflict pairs, reindex,
and the reorganisation of a flat store into month folders."""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta

from memory_mcp.app import syncrecord
from memory_mcp.app.session import Session
from memory_mcp.index import flagged, origin
from memory_mcp.index.db import Index
from memory_mcp.index.schema import RowFilter
from memory_mcp.recall import conflicts, overview, vectors
from memory_mcp.truth import words
from memory_mcp.truth.layout import DERIVED, MEMORIES, month_folder
from memory_mcp.truth.options import Progress
from memory_mcp.truth.recall import ReconcileReport, UnindexedFile
from memory_mcp.truth.results import (
    FlaggedMemory,
    Listed,
    Move,
    PendingConflict,
    ReindexResult,
    ReorganizeResult,
    SecretFlag,
    StatusResult,
    VectorCoverage,
)
from memory_mcp.truth.roots import working_folder
from memory_mcp.truth.ulids import ulid_time

DISTILL_AGE_DAYS = 30
LIST_LIMIT = 20
DISTILL_LIMIT = 10
FLAGGED_LIMIT = 100  # findings listed: a store a hostile writer filled is told, not printed whole


def pending(index: Index, limit: int = -1) -> list[PendingConflict]:
    """The open conflict pairs (the first `limit`; -1: all): raised by the gate or a sync, not yet
    settled, both sides live."""
    return [PendingConflict(a, b, title, other_title, conflicts.pair_hash(a, b))
            for a, b, title, other_title in index.open_pairs(limit)]


def status(session: Session) -> StatusResult:
    """Counts, coverage, unindexed files, pending conflicts, review-due, distill candidates, withheld."""
    with session.call() as index:
        conn = index.conn
        counts: dict[str, object] = {"total": index.count()}
        counts.update({f"by_{key}": tally for key, tally in overview.tallies(conn).items()})
        today = date.today().isoformat()
        cutoff = (datetime.now(UTC) - timedelta(days=DISTILL_AGE_DAYS)).strftime("%Y-%m-%dT%H:%M:%SZ")
        review = [Listed(r.id, r.path, r.title, f"review_after {r.review_after}")
                  for r in overview.review_due(conn, today, LIST_LIMIT)]
        distill = [Listed(r.id, r.path, r.title,
                          "old episode: distil related episodes into one knowledge memory that supersedes them")
                   for r in overview.distill_candidates(conn, cutoff, DISTILL_LIMIT)]
        withheld = [Listed(r.id, r.path, r.title, f"feedback {r.feedback}")
                    for r in overview.withheld(conn, LIST_LIMIT)]
        provisional = [Listed(r.id, r.path, r.title, "no id in the file: add `id: <ULID>` to its frontmatter, "
                              f"or call {words.op('update')} on it to get one") for r in overview.provisional(conn, LIST_LIMIT)]
        return StatusResult(
            store=str(session.root), counts=counts, coverage=session.coverage(index),
            unindexed=[UnindexedFile(p, e) for p, e in index.errors()], provisional=provisional,
            pending_conflicts=pending(index, LIST_LIMIT), review_due=review,
            distill_candidates=distill, withheld=withheld,
            git={**session.history.summary(), **syncrecord.last_sync(session.root)},
            secrets=_secret_flags(session, index),
            dictionary_skipped=session.dictionary.skipped[:LIST_LIMIT], vectors=vector_coverage(index),
            pending_conflicts_total=index.open_pair_count(), notices=origin_notices(session, index),
            files_changed=_files_changed(session, index),
            flagged=[FlaggedMemory(f.id, f.path, f.kind, f.line, f.reason)
                     for f in flagged.listed(conn, FLAGGED_LIMIT)])


def _files_changed(session: Session, index: Index) -> list[Listed]:
    """The active file memories whose files changed in the working folder's project since they were written."""
    from memory_mcp.app import staleness

    rows = index.select(RowFilter(frozenset({"active"}), with_paths=True))
    return staleness.changed_files(session.root, rows, working_folder(), LIST_LIMIT)


def origin_notices(session: Session, index: Index) -> list[str]:
    """What status says about where the index came from: rebuilt because the one found was not
    built here (`index.origin`), and a `.derived/` that git tracks, which is never used."""
    notes = []
    because = index.get_meta(origin.REBUILT_KEY)
    if because:
        notes.append(f"index rebuilt: {because}")
    tracked = session.history.tracked([DERIVED])
    if tracked:
        notes.append(f"{DERIVED}/ is tracked in git ({', '.join(sorted(tracked)[:3])}): a committed index is never "
                     f"used, each machine builds its own; remove it with `git rm -r --cached {DERIVED}` and commit")
    return notes


def vector_coverage(index: Index) -> VectorCoverage:
    """Which model the dense signal uses and how many memories have its vector."""
    model = vectors.configured()
    if model is None:
        return VectorCoverage("", 0, 0, vectors.why_off())
    key = vectors.model_key(model)
    have, without = vectors.counts(index.conn, key)
    note = f"{without} waiting to be embedded (in the background, or `memory-mcp reindex --vectors`)" if without else ""
    return VectorCoverage(key, have, without, note)


def _secret_flags(session: Session, index: Index) -> list[SecretFlag]:
    """The files holding a credential, each marked committed when git has it as it is."""
    flags = index.secret_flags()
    uncommitted = set(session.history.changed([p for p, _ in flags])) if flags else set()
    return [SecretFlag(p, k, committed=p not in uncommitted) for p, k in flags]


def reindex(session: Session, verify: bool = False, progress: Progress | None = None) -> ReindexResult:
    """Rebuild the index from the files; with `verify`, re-hash everything and report drift.

    `progress`, when given, is called with (files done, files in all) as the walk goes."""
    with session.storage_errors(), session.lock.hold():
        index = session.index()
        if verify:
            before = {p: s.sha for p, (s, _) in index.file_stats().items()}
            report = session.reconcile(index, force=True, progress=progress)
            after = {p: s.sha for p, (s, _) in index.file_stats().items()}
            drift = sorted(p for p in after if before.get(p) != after[p])
            drift += [f"{p} (removed)" for p in sorted(before) if p not in after]
            mode, note = "verify", "drift lists files whose content the index had not caught up with"
        else:
            # One transaction: a re-read cut short (Ctrl-C, a cancelled request) rolls back to the old
            # index instead of leaving an empty one that watchers here and in other processes, having
            # seen no file change, would keep answering from.
            with index.transaction():
                index.clear()
                report = session.reconcile(index, force=True, progress=progress)
            drift, mode = [], "rebuild"
            note = "index rebuilt from the files; recall counts (heat) are kept"
        return ReindexResult(mode=mode, indexed=index.count(), unindexed=len(index.errors()),
                             seconds=round(report.seconds, 3), drift=drift, note=note)


def refresh(session: Session) -> ReconcileReport:
    """Reconcile now (what every call does first) and return what it found."""
    with session.call():
        return session.last or ReconcileReport()


def reorganize(session: Session, apply: bool = False) -> ReorganizeResult:
    """The memories directly in memories/ (a store from before month folders), each moved into the
    folder of its creation month under the same file name; with `apply` the moves are made and
    committed as one commit of pure renames, which `git log --follow` follows.

    Ids, links and recall counts are keyed by id, so they stay as they are. Files in a person's own
    subfolders stay where they are, and so do those the move would change: a file without an id of
    its own (its id is a hash of its path) and a file the index could not read."""
    with session.call(write=apply) as index:
        moves, skipped = _plan(session, index)
        if not apply or not moves:
            return ReorganizeResult(moves, skipped, applied=False)
        session.history.check_idle()
        for move in moves:
            target = session.root / move.to
            target.parent.mkdir(parents=True, exist_ok=True)
            os.rename(session.root / move.path, target)
        commit = session.history.commit_paths(
            [p for m in moves for p in (m.path, m.to)], f"reorganize: {len(moves)} memories into month folders", [],
            "Renames only: every file keeps its name and content under memories/YYYY/MM/.")
        session.reconcile(index)  # the index follows the files to their new paths
        return ReorganizeResult(moves, skipped, applied=True, commit=commit)


def _plan(session: Session, index: Index) -> tuple[list[Move], list[Listed]]:
    """The moves a reorganisation makes, oldest memory first, and the top-level files it leaves."""
    moves: list[Move] = []
    skipped: list[Listed] = []
    planned: dict[str, int] = {}
    flagged = {p for p, _ in index.secret_flags()}
    flat = sorted((r for r in index.rows() if r.path.count("/") == 1), key=lambda r: (r.created or "", r.path))
    for row in flat:
        name = row.path.split("/", 1)[1]
        if row.provisional:
            skipped.append(Listed(row.id, row.path, row.title, "no id of its own (its id comes from its path): "
                                  f"give it one with {words.op('update')} first"))
            continue
        if row.path in flagged:
            skipped.append(Listed(row.id, row.path, row.title, "holds what looks like a credential, which git must "
                                  f"not get: see {words.op('status')}"))
            continue
        created = row.created or ulid_time(row.id).isoformat()
        folder = month_folder(session.root, created, planned)
        if (session.root / folder / name).exists():
            skipped.append(Listed(row.id, row.path, row.title, f"{folder}/{name} exists already"))
            continue
        planned[folder] = planned.get(folder, 0) + 1
        moves.append(Move(row.path, f"{folder}/{name}"))
    skipped += [Listed("", p, "", f"not indexed: {e}") for p, e in index.errors()
                if p.startswith(f"{MEMORIES}/") and p.count("/") == 1]
    return moves, skipped
