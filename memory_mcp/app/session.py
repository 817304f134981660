"""One store's working state around each call: the inter-process lock, the open index, reconcile
before the operation, recovery of commits a crash left behind, and storage errors made clear.

Every use case runs inside `Session.call()`: hold the lock, bring the index up to date with the
files (committing hand edits), then do its work.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from memory_mcp.app import authorship, provenance
from memory_mcp.app.lock import LOCK_TIMEOUT_SECONDS, StoreLock
from memory_mcp.index import origin
from memory_mcp.index.db import Index
from memory_mcp.index.reconcile import reconcile
from memory_mcp.truth import files, words
from memory_mcp.truth.dictionary import DICTIONARY, Dictionary
from memory_mcp.truth.errors import Busy, IndexRebuilt, RepoBusy, Unwritable
from memory_mcp.truth.layout import (
    CLAIM_FILE,
    DERIVED,
    INDEX_FILE,
    MEMORIES,
    cache_folder,
    unwritable_part,
)
from memory_mcp.truth.logs import log
from memory_mcp.truth.recall import Coverage, ReconcileReport
from memory_mcp.vcs.history import GitFailed, HeadKeptMoving, History
from memory_mcp.vcs.readops import Started

if TYPE_CHECKING:
    from memory_mcp.index.watch import Watcher
    from memory_mcp.truth.options import Progress



class Session:
    """The lock, the index and the reconcile state of one store in this process.

    A store this user cannot write (a mounted team store, a clone owned by another user) is still
    read: its lock and index then live in the user's cache folder, hand edits are indexed but not
    committed, and writes are refused (`read_only` says why)."""

    def __init__(self, root: Path, lock_timeout: float = LOCK_TIMEOUT_SECONDS) -> None:
        self.root = root
        self.history = History(root)
        self.read_only = unwritable_part(root, self.history.git_dir)
        self.derived = cache_folder(root) if self.read_only else root / DERIVED
        if self.read_only:
            self.derived.mkdir(parents=True, exist_ok=True)
        self.lock = StoreLock((self.derived if self.read_only else self.history.git_dir) / "memory-mcp.lock",
                              lock_timeout)
        self.dictionary = Dictionary()
        self.watcher: Watcher | None = None
        self.last: ReconcileReport | None = None  # what the latest reconcile saw
        self._index: Index | None = None
        self._index_ino: int | None = None
        self._recovered = False
        self._notice = ""  # something the next answer with a coverage must tell (an index rebuilt)
        self._walk_next = True  # the index is new to this process, or the last walk was incomplete
        self._seen = False  # this version took the store's baseline (`provenance.refresh`)
        self._reader: authorship.Reader | None = None
        self.after_call: Callable[[], None] | None = None  # told when a call has finished (the embedder)

    @property
    def index_path(self) -> Path:
        return self.derived / INDEX_FILE

    # ------------------------------------------------------------------ the watcher and the index
    def start_watching(self) -> Watcher:
        """Keep a file watcher on the store from now on (it starts with the next call)."""
        if self.watcher is None:
            # Imported here: a one-shot command never loads watchfiles.
            from memory_mcp.index.watch import Watcher

            self.watcher = Watcher(self.root, self.root / DERIVED)
        return self.watcher

    def close(self) -> None:
        """Stop the watcher, if any, and close the index and the standings reader."""
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None
        self._close_index()
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def reader(self) -> authorship.Reader:
        """The person's record of standings, opened once for the session rather than on every recall
        (about 0.13 ms a call); opened again while there is no record yet, so one that another process
        makes (a first `accept`) is read. Call it under the store lock, which serialises the calls."""
        if self._reader is None or self._reader.conn is None:
            self._reader = authorship.Reader(kept=True)
        return self._reader

    def _close_index(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    def index(self) -> Index:
        """The open index; reopened when its file was deleted or replaced under us."""
        try:
            ino = self.index_path.stat().st_ino
        except FileNotFoundError:
            ino = None
        if self._index is None or ino is None or ino != self._index_ino:
            self._close_index()
            self._walk_next = True  # a new index file holds nothing this process has checked
            fresh = ino is None
            try:
                self._index = Index.open(self.index_path)
            except sqlite3.DatabaseError as e:
                if _storage_problem(str(e)):
                    raise  # a full disk or a read-only folder, not a corrupt file: rebuilding cannot help
                # The index is disposable: a corrupt file is deleted and rebuilt from the memory files.
                log.warning("index %s unusable (%s); rebuilding it", self.index_path, e)
                self._notice = (f"{DERIVED}/{INDEX_FILE} was unreadable ({e}); it was deleted and rebuilt "
                                "from the memory files (recall counts were lost)")
                self._delete_index_files()
                self._index = Index.open(self.index_path)
                fresh = True
            self._check_origin(self._index, new=fresh)
            self._index_ino = self.index_path.stat().st_ino
        return self._index

    def _check_origin(self, index: Index, new: bool) -> None:
        """Serve an index only when it was built on this machine for this store (`index.origin`):
        one that came with the store (a committed `.derived/`, an archive) or that an earlier version
        built is emptied, so the reconcile that follows rebuilds it from the files, and the next
        answer says so."""
        claim_file = (self.derived if self.read_only else self.history.git_dir) / CLAIM_FILE
        if origin.is_ours(index, self.root, claim_file):
            return
        because = ""
        if not new:
            because = (f"{DERIVED}/{INDEX_FILE} was not built on this machine for this store (it came with the "
                       "store, or an earlier version built it); it was rebuilt from the memory files before serving")
            log.warning("index %s: %s", self.index_path, because)
            index.reset()
            self._notice = because
        origin.claim(index, self.root, claim_file, because)

    def _delete_index_files(self) -> None:
        for leftover in self.index_path.parent.glob(INDEX_FILE + "*"):
            leftover.unlink(missing_ok=True)

    # ------------------------------------------------------------------ around each call
    @contextmanager
    def call(self, force: bool = False, write: bool = False) -> Iterator[Index]:
        """Hold the write lock, reconcile, and yield the up-to-date index. A `write` on a store this
        user cannot write is refused before anything is read."""
        if write:
            self.check_writable()
        with self.storage_errors(), self.lock.hold():
            self.history.undo_interrupted_sync()  # a sync killed mid-merge leaves the store as before it
            # What a crash left uncommitted is asked of git while reconcile walks the files; its answer
            # stands when reconcile changed no file and committed nothing.
            early = self.history.changed_started() if not self._recovered and not self.read_only else None
            try:
                index = self.index()
                report = self.reconcile(index, force)
                if not self._recovered and not self.read_only:
                    self._recover(index, None if _touched(report) else early)
            finally:
                if early is not None:
                    early.drop()
            yield index
            provenance.own_commits(index, self.history)
            if self.after_call is not None:
                self.after_call()
            if self.history.deferred:  # a person's git held the index: the commit follows on a later call
                self.history.deferred = False
                self._recovered = False

    def check_writable(self) -> None:
        """Unwritable, saying so, when this user cannot write the store (see `read_only`)."""
        if self.read_only:
            raise Unwritable(
                f"the store at {self.root} is read-only for you ({self.read_only} cannot be written): it can be "
                f"read (its index is kept in {self.derived}), not changed. Ask whoever owns it to make the change, "
                "or work on a copy of your own (`git clone` it).")

    @contextmanager
    def storage_errors(self) -> Iterator[None]:
        """A full disk or a read-only store becomes Unwritable, a clear error, instead of an internal one;
        an index found damaged in the middle of a call is rebuilt and reported (IndexRebuilt)."""
        try:
            yield
        except OSError as e:
            if e.errno not in _STORAGE_ERRNOS:
                raise
            where = Path(e.filename).name if e.filename else ""
            self._unwritable(f"{e.strerror}{': ' + where if where else ''}")
        except (sqlite3.DatabaseError, GitFailed) as e:
            text = str(e.stderr if isinstance(e, GitFailed) else e)
            if isinstance(e, HeadKeptMoving):
                self._recovered = False  # the file is written; its commit is retried by the next call
                raise Busy("other git commits kept moving HEAD while this write was committing it. The memory "
                           "file is written and is committed by the next call.") from None
            if isinstance(e, GitFailed) and ".lock': File exists" in text:
                self._recovered = False  # the file is written; its commit is retried by the next call
                raise Busy("a git lock is held by another git process working in the store (a `git "
                           "commit` waiting for its editor, say): finish it, then call again. Any memory file "
                           "already written is committed by the next call.") from None
            if _storage_problem(text):
                self._unwritable(" ".join(text.replace("stderr:", "").split())[:200])
            if not isinstance(e, sqlite3.DatabaseError) or not _damaged(e):
                raise
            self._rebuild_damaged_index(text)
            raise IndexRebuilt(
                f"the search index {DERIVED}/{INDEX_FILE} was damaged ({text}); it has been rebuilt from the "
                "memory files, which are intact. Call again.") from None

    def _rebuild_damaged_index(self, reason: str) -> None:
        log.warning("index %s damaged (%s); rebuilding it", self.index_path, reason)
        with self.lock.hold():
            self._close_index()
            self._delete_index_files()
            self.reconcile(self.index())
            self._recovered = False  # a write cut short by the damage may have left its file uncommitted

    def _unwritable(self, what: str) -> NoReturn:
        # A memory file may be written whole with its commit failed: the next call tries the commit again.
        self._recovered = False
        raise Unwritable(
            f"the store at {self.root} cannot be written ({what}). Free disk space or make the store writable, "
            "then call again. No file was left half-written: memory files are replaced whole or not at all, "
            "and one written without its commit is committed by the next call.") from None

    # ------------------------------------------------------------------ reconcile and recovery
    def reconcile(self, index: Index, force: bool = False, progress: Progress | None = None) -> ReconcileReport:
        """Only the paths the watcher saw change when it can vouch for the rest, else a walk of
        everything with the stat gate. Hand edits found are committed."""
        self.dictionary = Dictionary.load(self.root / DICTIONARY, self.dictionary)
        plan = self.watcher.plan() if self.watcher else None
        walk = plan is None or plan.walk or self._walk_next
        report = reconcile(self.root, index, self.dictionary, force=force, progress=progress,
                           changed=plan.paths if plan else (), walk=walk,
                           tracked=self.history.tracked)
        self.last = report
        self._walk_next = report.aborted is not None
        if _touched(report) and not self.read_only:
            self._commit_hand_edits(index, report)  # a store we cannot write keeps them uncommitted
        self._seen = provenance.refresh(self.root, index, self.history, self._seen)
        if plan and self.watcher:
            self.watcher.settled(plan, walked=report.walked and report.aborted is None, folders=report.folders)
        return report

    def _recover(self, index: Index, early: Started | None = None) -> None:
        """Commit memory files a crash left written but uncommitted (the index already has them).

        Runs once per process, and again after a commit failed. Files that do not parse are left alone
        (a person may be mid-edit), and so are files holding a credential (see memory_status)."""
        if self.history.in_progress():
            return  # the person's merge or rebase comes first; tried again on the next call
        self._recovered = True
        # Every writer holds the store lock while it writes, and so do we: a temp file seen now belongs
        # to a writer that was killed mid-write. The memory file it was to replace is intact. A tracked
        # file with such a name is a person's (or a remote's), not ours: it stays.
        leftovers = {p.relative_to(self.root).as_posix(): p for p in files.leftover_temp_files(self.root / MEMORIES)}
        for rel in leftovers.keys() - (self.history.tracked(list(leftovers)) if leftovers else set()):
            leftovers[rel].unlink(missing_ok=True)
        skip = {p for p, _ in index.errors()} | {p for p, _ in index.secret_flags()}
        paths = [p for p in (early.result() if early else self.history.changed())
                 if p not in skip and (p == DICTIONARY or index.get_by_path(p) or not (self.root / p).exists())]
        if paths:
            ids = [r.id for r in (index.get_by_path(p) for p in paths) if r and not r.provisional]
            self.history.commit_paths(paths, "reconcile: commit memory files left uncommitted", ids,
                                      "\n".join(f"changed: {p}" for p in paths[:50]))

    def _commit_hand_edits(self, index: Index, report: ReconcileReport) -> None:
        candidates = [*report.reindexed, *report.removed]
        if report.dictionary_changed:
            candidates.append(DICTIONARY)
        try:
            # A forced re-parse (dictionary edit, reindex) touches every file: name only what git
            # actually has a change for, so trailers and lines tell the truth about the commit.
            # A file holding a credential is not committed: git history would keep it forever. Nor is
            # one the index refused (a dictionary.md that is a link would be committed as a link).
            flagged = {p for p, _ in index.secret_flags()} | {p for p, _ in index.errors()}
            paths = [p for p in self.history.changed(candidates) if p not in flagged]
            if not paths:
                return
            self.history.check_idle()
            removed = set(report.removed)
            deleted = [p for p in paths if p in removed]
            edited = [p for p in paths if p not in removed and p != DICTIONARY]
            ids = index.memory_ids(edited)
            # Not in any commit yet, so made on this machine (docs/security.md, "Hand edits").
            provenance.hand_edited(index, self.history, edited)
            ids += [report.removed_ids[p] for p in deleted if p in report.removed_ids]
            parts = [f"{n} file{'s' if n != 1 else ''} {what}" for n, what in
                     ((len(edited), "edited by hand"), (len(deleted), "deleted by hand")) if n]
            if DICTIONARY in paths:
                parts.append("dictionary edited")
            subject = "reconcile: " + ", ".join(parts)
            promoted = [i for i in report.promoted if i in ids]
            if promoted:
                subject += f"; {len(promoted)} archived memory made active"
            lines = [f"changed: {p}" for p in edited] + [f"deleted: {p}" for p in deleted]
            self.history.commit_paths(paths, subject, ids, "\n".join(lines[:50]))
        except (GitFailed, RepoBusy) as e:
            # A person's .gitignore, hook or merge under way must not make every tool call fail: the
            # index is right, only the history lags (status shows the memory files as changed), and
            # the next call tries again through _recover.
            log.warning("could not commit hand edits: %s", e)
            self._recovered = False

    def coverage(self, index: Index) -> Coverage:
        """How much of the store the answer covers, and what the caller must be told about it."""
        report = self.last or ReconcileReport()
        unindexed = len(index.errors())
        note = ""
        if report.aborted:
            note = f"deletions not swept: {report.aborted}"
        elif unindexed:
            note = f"{unindexed} file(s) could not be indexed; {words.op('status')} lists them with reasons"
        if self._notice:
            note, self._notice = "; ".join(filter(None, [self._notice, note])), ""
        return Coverage(indexed=index.count(), unindexed=unindexed, changed=report.changed,
                        complete=report.aborted is None and unindexed == 0, note=note)


def _touched(report: ReconcileReport) -> bool:
    """Whether a reconcile found hand edits, which it commits (and may rewrite an archived file)."""
    return bool(report.reindexed or report.removed or report.dictionary_changed)


_STORAGE_ERRNOS = {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT}
_STORAGE_WORDS = ("no space left", "disk is full", "read-only file system", "readonly database",
                  "permission denied", "insufficient permission", "unable to open database file", "disk quota")


def _damaged(e: sqlite3.DatabaseError) -> bool:
    """Whether SQLite says the index file itself is corrupt (as opposed to busy, full or misused)."""
    code = (getattr(e, "sqlite_errorcode", 0) or 0) & 0xFF
    # Python wrote every text column as UTF-8, so one that no longer decodes was damaged on disk.
    return code in (11, 26) or any(w in str(e) for w in ("malformed", "not a database", "vtable constructor",
                                                          "Could not decode to UTF-8"))


def _storage_problem(text: str) -> bool:
    """Whether an error from SQLite or git says the disk is full or the store cannot be written."""
    low = text.lower()
    return any(w in low for w in _STORAGE_WORDS)
