"""Files -> index, on every tool call: stat gate, then sha256, then reindex of what changed.

Two ways to find candidates, one per-file path after that: a walk of all of memories/ (the stat
gate decides what to read), or, when a watcher vouches for the rest of the tree, only the paths it
saw change. This module only reads files and writes the index, with one exception the design asks
for: an archived memory whose body a person edited becomes active again (its file is rewritten).
What changed is reported so the store can commit the hand edits to git.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Collection
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from memory_mcp.index import flagged
from memory_mcp.index.db import Index
from memory_mcp.index.schema import FileStat
from memory_mcp.truth.dictionary import DICTIONARY, Dictionary
from memory_mcp.truth.model import State, body_sha, now_iso
from memory_mcp.truth.paths import shown
from memory_mcp.truth.recall import ReconcileReport
from memory_mcp.truth.standing import blob_sha

if TYPE_CHECKING:
    from memory_mcp.index.bulkread import Prepared
    from memory_mcp.index.walk import Seen, Unindexed
    from memory_mcp.truth.options import Progress

DUPLICATE_ID = "duplicate id"
# File timestamps come from the kernel's coarse clock and some file systems keep whole seconds, so a
# file modified up to this long before the previous scan began is still treated as racily clean.
RACY_MARGIN_NS = 2_000_000_000
WALKED_FOLDERS = "walked_folders"  # index meta: the folders the last full walk listed, one a line
Tracked = Callable[[list[str]], set[str]]
"""Which of these paths git tracks: the committed file of two with one id is the memory, the other the copy."""


def reconcile(root: Path, index: Index, dictionary: Dictionary, *, force: bool = False,
              progress: Progress | None = None, changed: Collection[str] = (),
              walk: bool = True, tracked: Tracked | None = None) -> ReconcileReport:
    """Bring the index up to date with the files. `force` re-hashes and re-parses every file.

    `tracked` settles which of two files with one id holds the memory; without it, the first seen.

    `changed` names store-relative paths a watcher saw change since the last reconcile (a folder
    stands for everything below it): they are hashed even when their stat looks unchanged. With
    `walk=False` only those paths, and files refused for a duplicate id, are looked at; a changed
    dictionary or `force` walks the whole tree all the same."""
    # Here, not at the top: the hooks' read (`unchanged_since_walk`) lists no folder and walks no file.
    from memory_mcp.index.walk import Gate, gather, walk_tree

    started = time.time_ns()
    report = ReconcileReport()
    stored_version = index.get_meta("dictionary_version")
    dictionary_changed = stored_version != dictionary.version
    if dictionary_changed:
        report.dictionary_changed = stored_version is not None
        force = True
    walk = walk or force
    if not walk and not changed:
        return report  # the watcher saw nothing: no file to look at, nothing to write
    last_start = int(index.get_meta("last_scan_start_ns") or 0)
    gate: Gate | None = None
    folders: list[str] = []
    if walk:
        known = index.file_stats()
        gate = None if force or changed else Gate(known, last_start - RACY_MARGIN_NS)
        seen, refused, aborted = walk_tree(root, gate=gate, folders=folders)
    else:
        # The other copy of a file refused for a duplicate id may be what changed: look again.
        duplicates = [p for p, e in index.errors() if e.startswith(DUPLICATE_ID)]
        seen, refused, aborted, report.folders = gather(root, [*changed, *duplicates])
        known = index.file_stats_under([shown(p) for p in (*changed, *duplicates)])
    clean = gate.clean if gate else []
    report.scanned, report.aborted, report.walked = len(seen) + len(clean), aborted, walk
    with index.transaction():
        _check_files(root, index, dictionary, report, seen, known, set(changed), force, last_start, progress,
                     tracked)
        for item in refused:
            _record_error(index, report, item.path, FileStat(0, 0, ""), item.reason, known.get(item.path))
        if aborted is None:
            if _missing(known, clean, seen, refused):
                _sweep(root, index, report, known,
                       {*clean, *(s.rel for s in seen), *(r.path for r in refused), DICTIONARY})
            if walk:
                # Only a walk looked at every file, so only a walk moves the racily-clean horizon.
                index.set_meta("last_scan_start_ns", str(started))
                index.set_meta(WALKED_FOLDERS, "\n".join(folders))  # what `unchanged_since_walk` stats
        if dictionary_changed:
            _dictionary_problem(index, report, dictionary.problem)
        index.set_meta("dictionary_version", dictionary.version)
        index.set_meta("last_reconcile", now_iso())
    report.seconds = (time.time_ns() - started) / 1e9
    return report


def unchanged_since_walk(root: Path, index: Index, dictionary: Dictionary) -> bool:
    """Whether no memory file was added, removed or renamed since the index's last full walk began,
    and dictionary.md is the one indexed: every folder that walk listed (memories/ and those below
    it) last changed before it started, by the racy margin. One stat per folder instead of a listing
    and a stat per file, for a read that holds no lock and must answer within a hook's budget.

    A file edited in place changes no folder, so this does not see the edit; the next tool call's
    reconcile does (docs/design-notes.md, "Plugin and hooks")."""
    if index.get_meta("dictionary_version") != dictionary.version:
        return False
    horizon = int(index.get_meta("last_scan_start_ns") or 0) - RACY_MARGIN_NS
    folders = index.get_meta(WALKED_FOLDERS)
    if not folders:
        return False  # an index walked before folders were recorded: one store read records them
    for folder in folders.split("\n"):
        # A new or removed folder changes its parent, which the last walk listed: one stat each suffices.
        try:
            if os.stat(os.path.join(root, folder), follow_symlinks=False).st_mtime_ns >= horizon:
                return False
        except OSError:
            return False  # missing or unreadable: the store's own read says what is wrong
    return True


def _duplicate(prev: tuple[FileStat, str | None] | None) -> bool:
    """Files refused for a duplicate id are re-checked every time: the other copy may be gone."""
    return bool(prev and prev[1] and prev[1].startswith(DUPLICATE_ID))


def _stat_clean(prev: tuple[FileStat, str | None] | None, item: Seen, last_start: int) -> bool:
    """The stat gate: mtime, size, ctime and inode as the index has them. A file modified at or after
    the previous scan began may have been changed again within the timestamp granularity, so it is
    not clean ("racily clean", as git does)."""
    return bool(prev and prev[0].mtime_ns == item.mtime_ns and prev[0].size == item.size
                and prev[0].ctime_ns == item.ctime_ns and prev[0].ino == item.ino
                and item.mtime_ns + RACY_MARGIN_NS < last_start)


def _check_files(root: Path, index: Index, dictionary: Dictionary, report: ReconcileReport, seen: list[Seen],
                 known: dict[str, tuple[FileStat, str | None]], changed: set[str], force: bool, last_start: int,
                 progress: Progress | None, tracked: Tracked | None = None) -> None:
    """Stat gate, then hash and parse the candidate files (in worker processes when there are many:
    `bulkread`); index what changed."""
    todo: list[tuple[Seen, tuple[FileStat, str | None] | None, bool]] = []
    for item in seen:
        prev = known.get(item.rel)
        # A path the watcher saw change is hashed whatever its stat says (`touch -d` can restore it).
        recheck = force or _duplicate(prev)
        if recheck or item.rel in changed or not _stat_clean(prev, item, last_start):
            todo.append((item, prev, recheck))
    if todo:
        # Imported here: YAML and the credential rules are needed only for a file that changed, and
        # the hooks' check that nothing did (`current`) must not pay for them on every prompt.
        from memory_mcp.index import bulkread

        skipped = len(seen) - len(todo)
        wanted = [bulkread.Wanted(item.rel, item.abs, item.mtime_ns, item.size, item.ctime_ns, item.ino,
                                  None if recheck or not prev else prev[0].sha) for item, prev, recheck in todo]
        for done, ((item, prev, _), prep) in enumerate(zip(todo, bulkread.prepare_all(wanted), strict=True)):
            if progress and done % 100 == 0:
                progress(skipped + done, len(seen))
            if prep.read_error:
                _record_error(index, report, item.rel, prep.stat, prep.read_error, prev)
            elif prep.unchanged:
                index.set_file(item.rel, prep.stat, prev[1] if prev else None)
            elif prep.parse_error:
                _record_error(index, report, item.rel, prep.stat, prep.parse_error, prev)
            else:
                _index_file(root, index, dictionary, report, prep, prev, tracked)
    if progress:
        progress(len(seen), len(seen))  # the walk is done: a bar (or a client) sees it complete


def _missing(known: dict[str, tuple[FileStat, str | None]], clean: list[str], seen: list[Seen],
             refused: list[Unindexed]) -> bool:
    """Whether some file the index knows was not found now (each path is found once at most): only
    then is there anything to sweep."""
    found = len(clean) + sum(s.rel in known for s in seen) + sum(r.path in known for r in refused)
    return found + (DICTIONARY in known) < len(known)


def _sweep(root: Path, index: Index, report: ReconcileReport, known: dict[str, tuple[FileStat, str | None]],
           present: set[str]) -> None:
    """Forget the known files that are gone."""
    for path in known:
        if path not in present and not (root / path).exists():
            row = index.get_by_path(path)
            if row and not row.provisional:
                report.removed_ids[path] = row.id
            index.remove_path(path)
            report.removed.append(path)


def _dictionary_problem(index: Index, report: ReconcileReport, problem: str | None) -> None:
    """A dictionary.md the store would not read is listed with the unindexed files, until it is fixed."""
    prev = index.file_stats_under([DICTIONARY]).get(DICTIONARY)
    if problem:
        _record_error(index, report, DICTIONARY, FileStat(0, 0, ""), problem, prev)
    elif prev:
        index.remove_path(DICTIONARY)


def _record_error(index: Index, report: ReconcileReport, rel: str, fstat: FileStat, reason: str,
                  prev: tuple[FileStat, str | None] | None) -> None:
    index.remove_memory_of(rel)
    index.set_file(rel, fstat, reason)
    if not prev or prev[1] != reason:
        report.new_errors.append(rel)


def _index_file(root: Path, index: Index, dictionary: Dictionary, report: ReconcileReport, prep: Prepared,
                prev: tuple[FileStat, str | None] | None, tracked: Tracked | None = None) -> None:
    """Index one parsed file, unless another file holds its id; an archived memory a person edited
    becomes active again."""
    from memory_mcp.truth import edits, files

    rel, fstat, mem, shown = prep.rel, prep.stat, prep.memory, prep.shown
    assert mem is not None and shown is not None  # a parsed file has both
    # One lookup for both questions (another file with this id? this path's old row?): a bulk index
    # of new files asked three, reading whole rows, for rows that mostly do not exist.
    holders = index.holders(rel, mem.id)
    other = next((h for h in holders if h.id == mem.id and h.path != rel), None)
    if other and (root / other.path).exists():
        # Which file came first must not depend on walk order (a rebuild walks `copy-of-x.md` before
        # `x.md`): the one git tracks keeps the memory, so a person's copy is never written to.
        if not (tracked and tracked([rel, other.path]) == {rel}):
            _record_error(index, report, rel, fstat, f"{DUPLICATE_ID} {mem.id}: {other.path} has it too", prev)
            return
        _record_error(index, report, other.path, FileStat(0, 0, ""), f"{DUPLICATE_ID} {mem.id}: {rel} has it too",
                      None)
        if other.path in report.reindexed:  # indexed earlier in this walk: not a hand edit to commit
            report.reindexed.remove(other.path)
        holders = [h for h in holders if h.path != other.path]  # the other file's row is gone
    # A credential a person typed into a file is flagged for memory_status and indexed masked, so
    # recall, the digest and the hooks never show it.
    derived = prep.derived
    old = next((h for h in holders if h.path == rel), None)
    if (old and old.id == mem.id and old.state == State.ARCHIVED and mem.state == State.ARCHIVED
            and old.body_sha != body_sha(shown.body)):
        # Fresh intent wins: a person who edits an archived memory's text wants it back.
        before = replace(mem)
        mem.state = State.ACTIVE
        mem.superseded_by = None
        mem.updated = now_iso()
        data = edits.edit(prep.raw, before, mem)
        files.atomic_write_bytes(root / rel, data)
        st = (root / rel).stat()
        fstat = FileStat(st.st_mtime_ns, st.st_size, hashlib.sha256(data).hexdigest(), st.st_ctime_ns, st.st_ino,
                         blob_sha(data))
        shown, derived = (files.masked(mem) if prep.secret_kinds else mem), None
        report.promoted.append(mem.id)
    entities, _ = dictionary.normalise_all(shown.entities)
    index.upsert(rel, shown, entities, fstat, derived, holders)
    index.set_secret_flags(rel, list(prep.secret_kinds))
    flagged.record(index.conn, rel, prep.flags)  # a hand edit's, an import's or a sync's text that tries
    report.reindexed.append(rel)
