"""The application core. The MCP server and the CLI both call this one object; they hold no logic.

Every public operation takes the store's inter-process lock, brings the index up to date with the
files (reconcile), does its work on the files, commits them to git in one commit, and updates the
index in the same call.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import logging
import os
import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from git import GitCommandError
from ulid import ULID

from . import conflicts, files, lifecycle, query, ranking, transfer
from .dictionary import DICTIONARY, Dictionary
from .errors import (
    Busy,
    ConfirmRequired,
    Containment,
    IndexRebuilt,
    InvalidArgument,
    InvalidStore,
    InvalidSupersede,
    NotFound,
    RepoBusy,
    SecretDetected,
    StoreError,
    TooLarge,
    Unwritable,
)
from .history import HeadKeptMoving, History
from .index import FileStat, Index, Row
from .lock import StoreLock
from .model import (
    CONTENT_MAX,
    ENTITIES_MAX,
    ENTITY_MAX,
    SOURCE_MAX,
    TITLE_MAX,
    Memory,
    MemoryType,
    State,
    Trust,
    check_id,
    compose_body,
    content_key,
    derive_title,
    enum_value,
    now_iso,
    slugify,
)
from .reconcile import MEMORIES, Progress, ReconcileReport, reconcile, walkable
from .results import (
    Chain,
    Conflict,
    Coverage,
    FeedbackResult,
    ForgetResult,
    HistoryEntry,
    Hit,
    Listed,
    PendingConflict,
    ReadResult,
    RecallResult,
    ReindexResult,
    RememberResult,
    ResolveResult,
    SecretFlag,
    StatusResult,
    UnindexedFile,
)
from .secrets import Finding, scan
from .sync import SyncResult
from .sync import run as sync_remote
from .transfer import DUPLICATE, Batch, ImportConflict, ImportReport, Incoming, Skipped

if TYPE_CHECKING:
    from .watch import Watcher

log = logging.getLogger("memory_mcp")
TEMPLATE = Path(__file__).resolve().parent / "store_template"
DERIVED = ".derived"
INDEX_FILE = "index.sqlite3"
DISTILL_AGE_DAYS = 30
LIST_LIMIT = 20
RECALL_MAX = 50
FORGET_MODES = ("archive", "deprecate", "restore", "purge")
# What the session digest shows before anything else, in this order.
DIGEST_FIRST = ("preference", "decision")


def default_root() -> Path:
    """$MEMORY_MCP_ROOT, else ~/.memory-mcp/default."""
    env = os.environ.get("MEMORY_MCP_ROOT")
    return Path(env).expanduser() if env else Path.home() / ".memory-mcp" / "default"


def init_store(root: Path) -> Path:
    """Create a store at `root` from the template, git-init it and commit. Refuses to overwrite."""
    root = root.expanduser().resolve()
    root.parent.mkdir(parents=True, exist_ok=True)
    # Two servers started at once on a missing store must not both create it. The store's own lock
    # lives in .git/, which does not exist yet, so this one sits beside the folder.
    with StoreLock(root.parent / f".{root.name}.init-lock").hold():
        if root.exists() and any(root.iterdir()):
            if is_store(root):
                return root
            raise InvalidStore(
                f"{root} exists and is not a memory store (a git work tree with a memories/ folder); "
                "choose an empty or new folder.")
        root.mkdir(parents=True, exist_ok=True)
        shutil.copytree(TEMPLATE, root, dirs_exist_ok=True)
        history = History.init(root)
        history.commit_paths(
            [p.relative_to(root).as_posix() for p in sorted(root.rglob("*"))
             if p.is_file() and ".git" not in p.parts], "init: new memory store", [])
    return root


def is_store(root: Path) -> bool:
    return (root / ".git").exists() and (root / MEMORIES).is_dir()


@dataclass(frozen=True)
class SearchOptions:
    """What a recall asks for besides its text: size, filters, budget, diversity and score floor."""

    limit: int = 8
    types: frozenset[str] = frozenset()
    entities: tuple[str, ...] = ()
    include_archived: bool = False
    include_deprecated: bool = False
    max_tokens: int = 0
    diversity: float = 0.0
    min_score: float = 0.0


@dataclass
class _Loaded:
    """A memory file read from disk for a write: its parsed form and where it lives."""

    mem: Memory
    rel: str


class Store:
    """One memory store: a git work tree of markdown files and its derived index."""

    def __init__(self, root: Path, watch: bool = False) -> None:
        self.root = root
        self.history = History(root)
        self.lock = StoreLock(Path(self.history.repo.git_dir) / "memory-mcp.lock")
        self.dictionary = Dictionary()
        self.watcher: Watcher | None = None
        self._index: Index | None = None
        self._index_ino: int | None = None
        self._last: ReconcileReport | None = None
        self._recovered = False
        self._notice = ""  # something the next answer with a coverage must tell (an index rebuilt)
        self._walk_next = True  # the index is new to this process, or the last walk was incomplete
        if watch:
            self.start_watching()

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, root: Path | None = None, create: bool = True, watch: bool = False) -> Store:
        """Open the store at `root` (default: $MEMORY_MCP_ROOT or ~/.memory-mcp/default).

        A missing folder is created from the template when `create`; a folder that is not a store
        is refused, never overwritten. `watch` keeps a file watcher (see watch.py) so each call
        reconciles only what changed; one-shot commands leave it off."""
        root = (root or default_root()).expanduser().resolve()
        if not is_store(root):
            if create and (not root.exists() or not any(root.iterdir())):
                init_store(root)
            elif (root / ".git").exists() and not (root / MEMORIES).exists() and create:
                raise InvalidStore(f"{root} is a git repository without a memories/ folder; "
                                   "run `memory-mcp init` on a new folder instead.")
            else:
                raise InvalidStore(
                    f"{root} is not a memory store (a git work tree with a memories/ folder); "
                    "run `memory-mcp init PATH` on a new folder, or point MEMORY_MCP_ROOT at a store.")
        return cls(root, watch=watch)

    def start_watching(self) -> Watcher:
        """Keep a file watcher on the store from now on (it starts with the next call)."""
        if self.watcher is None:
            from .watch import Watcher

            self.watcher = Watcher(self.root, self.root / DERIVED)
        return self.watcher

    def close(self) -> None:
        """Stop the watcher, if any, and close the index."""
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None
        self._close_index()

    def _close_index(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    @property
    def index_path(self) -> Path:
        return self.root / DERIVED / INDEX_FILE

    def _ensure_index(self) -> Index:
        """The open index; reopened when its file was deleted or replaced under us."""
        try:
            ino = self.index_path.stat().st_ino
        except FileNotFoundError:
            ino = None
        if self._index is None or ino is None or ino != self._index_ino:
            self._close_index()
            self._walk_next = True  # a new index file holds nothing this process has checked
            try:
                self._index = Index.open(self.index_path)
            except sqlite3.DatabaseError as e:
                if _storage_problem(str(e)):
                    raise  # a full disk or a read-only folder, not a corrupt file: rebuilding cannot help
                # The index is disposable: a corrupt file is deleted and rebuilt from the memory files.
                log.warning("index %s unusable (%s); rebuilding it", self.index_path, e)
                self._notice = (f"{DERIVED}/{INDEX_FILE} was unreadable ({e}); it was deleted and rebuilt "
                                "from the memory files (recall counts were lost)")
                for leftover in self.index_path.parent.glob(INDEX_FILE + "*"):
                    leftover.unlink(missing_ok=True)
                self._index = Index.open(self.index_path)
            self._index_ino = self.index_path.stat().st_ino
        return self._index

    @contextmanager
    def _session(self, force: bool = False) -> Iterator[Index]:
        """Hold the write lock, reconcile, and yield the up-to-date index."""
        with self._storage_errors(), self.lock.hold():
            index = self._ensure_index()
            self._sync(index, force)
            if not self._recovered:
                self._recover(index)
            yield index

    @contextmanager
    def _storage_errors(self) -> Iterator[None]:
        """A full disk or a read-only store becomes Unwritable, a clear error, instead of an internal one;
        an index found damaged in the middle of a call is rebuilt and reported (IndexRebuilt)."""
        try:
            yield
        except OSError as e:
            if e.errno not in _STORAGE_ERRNOS:
                raise
            where = Path(e.filename).name if e.filename else ""
            self._unwritable(f"{e.strerror}{': ' + where if where else ''}")
        except (sqlite3.DatabaseError, GitCommandError) as e:
            text = str(e.stderr if isinstance(e, GitCommandError) else e)
            if isinstance(e, HeadKeptMoving):
                self._recovered = False  # the file is written; its commit is retried by the next call
                raise Busy("other git commits kept moving HEAD while this write was committing it. The memory "
                           "file is written and is committed by the next call.") from None
            if isinstance(e, GitCommandError) and ".lock': File exists" in text:
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
            for leftover in self.index_path.parent.glob(INDEX_FILE + "*"):
                leftover.unlink(missing_ok=True)
            self._sync(self._ensure_index())
            self._recovered = False  # a write cut short by the damage may have left its file uncommitted

    def _unwritable(self, what: str) -> None:
        # A memory file may be written whole with its commit failed: the next call tries the commit again.
        self._recovered = False
        raise Unwritable(
            f"the store at {self.root} cannot be written ({what}). Free disk space or make the store writable, "
            "then call again. No file was left half-written: memory files are replaced whole or not at all, "
            "and one written without its commit is committed by the next call.") from None

    def _sync(self, index: Index, force: bool = False, progress: Progress | None = None) -> ReconcileReport:
        """Reconcile: only the paths the watcher saw change when it can vouch for the rest, else a
        walk of everything with the stat gate. Hand edits found are committed."""
        self.dictionary = Dictionary.load(self.root / DICTIONARY, self.dictionary)
        plan = self.watcher.plan() if self.watcher else None
        walk = plan is None or plan.walk or self._walk_next
        report = reconcile(self.root, index, self.dictionary, force=force, progress=progress,
                           changed=plan.paths if plan else (), walk=walk,
                           tracked=self.history.tracked)
        self._last = report
        self._walk_next = report.aborted is not None
        if report.reindexed or report.removed or report.dictionary_changed:
            self._commit_hand_edits(index, report)
        if plan and self.watcher:
            self.watcher.settled(plan, walked=report.walked and report.aborted is None, folders=report.folders)
        return report

    def _recover(self, index: Index) -> None:
        """Commit memory files a crash left written but uncommitted (the index already has them).

        Runs once per process, and again after a commit failed. Files that do not parse are left alone
        (a person may be mid-edit), and so are files holding a credential (see memory_status)."""
        if self.history.in_progress():
            return  # the person's merge or rebase comes first; tried again on the next call
        self._recovered = True
        # Every writer holds the store lock while it writes, and so do we: a temp file seen now belongs
        # to a writer that was killed mid-write. The memory file it was to replace is intact.
        for leftover in files.leftover_temp_files(self.root / MEMORIES):
            leftover.unlink(missing_ok=True)
        skip = {p for p, _ in index.errors()} | {p for p, _ in index.secret_flags()}
        paths = [p for p in self.history.changed()
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
            # A file holding a credential is not committed: git history would keep it forever.
            flagged = {p for p, _ in index.secret_flags()}
            paths = [p for p in self.history.changed(candidates) if p not in flagged]
            if not paths:
                return
            self.history.check_idle()
            removed = set(report.removed)
            deleted = [p for p in paths if p in removed]
            edited = [p for p in paths if p not in removed and p != DICTIONARY]
            ids = [r.id for r in (index.get_by_path(p) for p in edited) if r and not r.provisional]
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
        except (GitCommandError, RepoBusy) as e:
            # A person's .gitignore, hook or merge under way must not make every tool call fail: the
            # index is right, only the history lags (status shows the memory files as changed), and
            # the next call tries again through _recover.
            log.warning("could not commit hand edits: %s", e)
            self._recovered = False

    def _coverage(self, index: Index) -> Coverage:
        report = self._last or ReconcileReport()
        unindexed = len(index.errors())
        note = ""
        if report.aborted:
            note = f"deletions not swept: {report.aborted}"
        elif unindexed:
            note = f"{unindexed} file(s) could not be indexed; memory_status lists them with reasons"
        if self._notice:
            note, self._notice = "; ".join(filter(None, [self._notice, note])), ""
        return Coverage(indexed=index.count(), unindexed=unindexed, changed=report.changed,
                        complete=report.aborted is None and unindexed == 0, note=note)

    # ------------------------------------------------------------------ file helpers
    def _load(self, index: Index, mem_id: str, for_write: bool = True) -> _Loaded:
        """The memory file of `mem_id`, parsed. For a write, a file without an id of its own gets a
        permanent one first, so the id written into files (its own and others') is a real ULID."""
        check_id(mem_id)
        row = index.get(mem_id)
        if row is None:
            raise NotFound(f"no memory with id {mem_id}; use memory_recall to find the right id.")
        text = files.decode((self.root / row.path).read_bytes())
        mem = files.parse(text, row.path)
        if for_write and mem.provisional:
            mem.id, mem.provisional = str(ULID()), False
            mem.created = mem.created or now_iso()
        return _Loaded(mem, row.path)

    def _write(self, index: Index, loaded: _Loaded) -> None:
        """Write a memory file and index it in the same step, so reconcile sees no hand edit."""
        path = self.root / loaded.rel
        text = files.serialize(loaded.mem)
        found = scan(text)
        if found:
            # Every argument was scanned already, so this came with a file written by hand: writing it
            # again would commit the credential to git.
            raise SecretDetected(
                f"{loaded.rel} holds what looks like a credential ({_kinds(found)}), written by hand. Remove it "
                "from the file (say where it is kept instead), then call again.")
        self.history.check_idle()
        files.atomic_write(path, text)
        st = path.stat()
        entities, _ = self.dictionary.normalise_all(loaded.mem.entities)
        index.upsert(loaded.rel, loaded.mem, entities, FileStat(st.st_mtime_ns, st.st_size, _sha(text)))
        index.set_secret_flags(loaded.rel, [])

    def _resolve_path(self, path: str) -> str:
        """A store-relative path with / separators for `path`, refusing anything outside the store."""
        if "\x00" in path:
            raise InvalidArgument("path contains a NUL character.")
        p = Path(path)
        full = (p if p.is_absolute() else self.root / p).resolve()
        try:
            rel = full.relative_to(self.root)
        except ValueError:
            raise Containment(f"'{path[:200]}' is outside the store; pass a path like memories/name.md.") from None
        return rel.as_posix()

    def _new_path(self, title: str, mem_id: str) -> str:
        slug = slugify(title)
        rel = f"{MEMORIES}/{slug}-{mem_id[:8]}.md"
        if (self.root / rel).exists():
            rel = f"{MEMORIES}/{slug}-{mem_id}.md"
        return rel

    # ------------------------------------------------------------------ validation
    @staticmethod
    def _check_text(content: str | None, title: str | None, source: str | None) -> None:
        if content is not None and len(content) > CONTENT_MAX:
            raise TooLarge(f"content is {len(content):,} characters; the limit is {CONTENT_MAX:,}. "
                           "Split it into several memories or keep a summary and a pointer.")
        if title is not None and len(title) > TITLE_MAX:
            raise TooLarge(f"title is {len(title)} characters; the limit is {TITLE_MAX}.")
        _check_short(source=source)
        _check_inputs(content=content, title=title)

    @staticmethod
    def _check_entities(entities: list[str]) -> list[str]:
        if len(entities) > ENTITIES_MAX:
            raise TooLarge(f"{len(entities)} entities; the limit is {ENTITIES_MAX}.")
        for e in entities:
            if len(e) > ENTITY_MAX:
                raise TooLarge(f"an entity is {len(e)} characters; the limit is {ENTITY_MAX}.")
        _check_inputs(entities=entities)
        return [e for e in entities if e.strip()]

    @staticmethod
    def _check_date(value: str | None) -> str | None:
        if value is None or value == "":
            return None
        try:
            return date.fromisoformat(value).isoformat() if len(value) == 10 else \
                datetime.fromisoformat(value.replace("Z", "+00:00")).date().isoformat()
        except ValueError:
            raise InvalidArgument(f"review_after '{value[:40]}' is not a date; use YYYY-MM-DD.") from None

    # ------------------------------------------------------------------ remember
    def remember(self, content: str, title: str | None = None, type: str = "fact",
                 entities: list[str] | None = None, trust: str = "agent-inferred", source: str = "",
                 supersedes: list[str] | None = None, review_after: str | None = None) -> RememberResult:
        """Write a new memory (or return the existing one with the same content), run the conflict gate."""
        self._check_text(content, title, source)
        mem_type = enum_value(MemoryType, type, "type")
        mem_trust = enum_value(Trust, trust, "trust")
        entity_list = self._check_entities(list(entities or []))
        review = self._check_date(review_after)
        targets = [check_id(t) for t in dict.fromkeys(supersedes or [])]
        body = compose_body(content, title)
        with self._session() as index:
            names, unknown = self.dictionary.normalise_all(entity_list)
            if not targets:
                dup = next((r for r in index.by_content(content_key(body)) if r.state != State.DEPRECATED), None)
                if dup:
                    return RememberResult(id=dup.id, path=dup.path, title=dup.title, state=dup.state,
                                          duplicate=True, unknown_entities=unknown,
                                          warnings=["the same content is already remembered; nothing was written"])
            losers = [self._load(index, t) for t in targets]
            now = now_iso()
            mem = Memory(id=str(ULID()), body=body, type=mem_type, state=State.ACTIVE,  # type: ignore[arg-type]
                         trust=mem_trust, entities=names, source=" ".join(source.split()),  # type: ignore[arg-type]
                         created=now, updated=now, review_after=review)
            for loser in losers:
                lifecycle.check_supersede(mem.id, loser.mem, lambda i: _superseded_by(index, i))
            found = conflicts.neighbours(index, conflicts.Subject(
                mem.id, mem.title, mem.excerpt, names, now, []))
            found = [n for n in found if n.row.id not in targets]
            mem.conflicts_with = [n.row.id for n in found]
            new = _Loaded(mem, self._new_path(mem.title, mem.id))
            for loser in losers:
                lifecycle.apply_supersede(mem, loser.mem, now)
            for item in (new, *losers):
                self._write(index, item)
            self.history.commit_paths([item.rel for item in (new, *losers)], f"remember: {mem.title}",
                                      [mem.id, *(loser.mem.id for loser in losers)])
            warnings = []
            if found:
                warnings.append("possible conflicts: decide each with memory_resolve (supersede or keep_both), "
                                "asking the user when unsure")
            return RememberResult(
                id=mem.id, path=new.rel, title=mem.title, state=mem.state.value, duplicate=False,
                superseded=[loser.mem.id for loser in losers], conflicts=[_conflict(n) for n in found],
                unknown_entities=unknown,
                warnings=warnings)

    # ------------------------------------------------------------------ recall
    def recall(self, query: str = "", limit: int = 8, types: list[str] | None = None,
               entities: list[str] | None = None, include_archived: bool = False,
               include_deprecated: bool = False, max_tokens: int = 0, diversity: float = 0.0,
               min_score: float = 0.0) -> RecallResult:
        """Find memories for a query (or list by entities/types), ranked, within an optional token budget."""
        if not 1 <= limit <= RECALL_MAX:
            raise InvalidArgument(f"limit must be between 1 and {RECALL_MAX}.")
        type_filter = {enum_value(MemoryType, t, "type").value for t in types or []}
        with self._session() as index:
            names, unknown = self.dictionary.normalise_all(list(entities or []))
            hits, truncated = self._search(index, query, SearchOptions(
                limit, frozenset(type_filter), tuple(names), include_archived, include_deprecated, max_tokens,
                diversity, min_score))
            if hits:
                with index.transaction():
                    index.record_recall([h.id for h in hits], now_iso())
            return RecallResult(results=hits, coverage=self._coverage(index),
                                pending_conflicts=len(self._pending(index)), truncated=truncated,
                                unknown_entities=unknown)

    def search(self, query: str, limit: int = 8) -> list[Hit]:
        """Ranked hits for `query` over the index as it is (no reconcile, no usage recorded).

        For evaluation and tools that query in bulk; agents go through `recall`."""
        with self.lock.hold():
            index = self._ensure_index()
            return self._search(index, query, SearchOptions(limit))[0]

    def _search(self, index: Index, text: str, opts: SearchOptions) -> tuple[list[Hit], bool]:
        limit, types = opts.limit, opts.types
        wanted = [e.lower() for e in opts.entities]
        by_entity = index.with_entities(wanted) if wanted else {}
        now = datetime.now(UTC)

        def keep(row: Row) -> bool:
            return not ((types and row.type not in types)
                        or (row.state == State.ARCHIVED and not opts.include_archived)
                        or (row.state == State.DEPRECATED and not opts.include_deprecated)
                        or ranking.withheld(row.feedback))

        pool = max(limit * 8, 64)
        while True:
            if text.strip():
                scores = query.text_scores(index, text, pool)
                exhausted = len(scores) < pool
                if wanted:
                    scores = {r: s for r, s in scores.items() if r in by_entity}
                rows = [r for r in index.rows(scores) if keep(r)]
            else:
                rows = [r for r in (index.rows(by_entity) if wanted else index.rows()) if keep(r)]
                scores, exhausted = {r.rowid: 1.0 for r in rows}, True
            # Filters apply after the text search: when they left too few, search deeper.
            if len(rows) >= limit * 3 or exhausted:
                break
            pool *= 4
        usage = index.usage(r.id for r in rows)
        scored: list[tuple[float, Row]] = []
        for row in rows:
            s = ranking.score(scores[row.rowid], row.trust, row.state, row.updated,
                              usage.get(row.id, (0, None))[0], row.feedback, now)
            if s >= opts.min_score:
                scored.append((s, row))
        # Without a query the list is newest first; with one, by score (newest first among equals).
        scored.sort(key=lambda x: (x[1].updated or x[1].created or "", x[1].id), reverse=True)
        if text.strip():
            scored.sort(key=lambda x: x[0], reverse=True)
        head = scored[: limit * 3]
        if opts.diversity > 0:
            sets = {row.rowid: conflicts.term_set(f"{row.title} {row.excerpt}") for _, row in head}
            head = ranking.mmr(head, lambda x: x[0], lambda a, b: conflicts.jaccard(sets[a[1].rowid], sets[b[1].rowid]),
                               opts.diversity, limit)  # type: ignore[assignment]
        hits: list[Hit] = []
        spent = 0
        truncated = False
        for s, row in head[:limit]:
            hit = _hit(row, s)
            cost = ranking.hit_tokens(row.path, row.title, row.excerpt)
            if opts.max_tokens and hits and spent + cost > opts.max_tokens:
                truncated = True
                break
            spent += cost
            hits.append(hit)
        return hits, truncated

    # ------------------------------------------------------------------ read
    def read(self, id: str | None = None, path: str | None = None) -> ReadResult:
        """The whole memory: frontmatter, body, supersede chain both ways, git history."""
        if not id and not path:
            raise InvalidArgument("pass id (a memory id) or path (memories/name.md).")
        with self._session() as index:
            if id:
                row = index.get(check_id(id))
                if row is None:
                    raise NotFound(f"no memory with id {id}; use memory_recall to find the right id.")
            else:
                rel = self._resolve_path(path or "")
                row = index.get_by_path(rel)
                if row is None:
                    reason = dict(index.errors()).get(rel)
                    if reason:
                        raise NotFound(f"{rel} is not indexed: {reason}. Fix the file; the next call picks it up.")
                    raise NotFound(f"no memory file at {rel}.")
            loaded = self._load(index, row.id, for_write=False)
            mem = loaded.mem
            fm = files.frontmatter(mem)
            down = lifecycle.walk(mem.id, lambda i: (r.supersedes if (r := index.get(i)) else []))
            up = lifecycle.walk(mem.id, lambda i: ([s] if (s := _superseded_by(index, i)) else []))
            history = [HistoryEntry(c.commit, c.date, c.message) for c in self.history.log(row.path)]
            warnings = []
            if mem.provisional:
                warnings.append("this file has no id of its own; memory_update gives it a permanent one")
            return ReadResult(id=mem.id, path=row.path, title=mem.title, state=mem.state.value, frontmatter=fm,
                              body=mem.body, chain=Chain(supersedes=down, superseded_by=up), history=history,
                              recall_count=index.usage([mem.id]).get(mem.id, (0, None))[0], warnings=warnings)

    def peek(self, id: str) -> Listed | None:
        """Title, path and state of a memory as the files say now (reconciled), or None."""
        check_id(id)
        with self._session() as index:
            row = index.get(id)
            return Listed(row.id, row.path, row.title, row.state) if row else None

    # ------------------------------------------------------------------ update
    def update(self, id: str, content: str | None = None, title: str | None = None,
               entities: list[str] | None = None, type: str | None = None, trust: str | None = None,
               source: str | None = None, review_after: str | None = None) -> ReadResult:
        """Change a memory's text or fields in place (state moves go through forget/resolve)."""
        self._check_text(content, title, source)
        with self._session() as index:
            loaded = self._load(index, id)
            mem = loaded.mem
            changed: list[str] = []
            if content is not None:
                # New content with its own heading takes that title; otherwise the old title stays.
                keep = None if content.lstrip().startswith("#") else mem.title
                mem.body = compose_body(content, title or keep)
                changed.append("content")
            elif title is not None and title.strip() and title.strip() != mem.title:
                mem.body = _retitle(mem.body, title.strip())
                changed.append("title")
            if entities is not None:
                mem.entities = self.dictionary.normalise_all(self._check_entities(entities))[0]
                changed.append("entities")
            if type is not None:
                mem.type = enum_value(MemoryType, type, "type")  # type: ignore[assignment]
                changed.append("type")
            if trust is not None:
                mem.trust = enum_value(Trust, trust, "trust")  # type: ignore[assignment]
                changed.append("trust")
            if source is not None:
                mem.source = " ".join(source.split())
                changed.append("source")
            if review_after is not None:
                mem.review_after = self._check_date(review_after)
                changed.append("review_after")
            if mem.id != id:
                changed.append("id")  # a hand-made file without an id got a permanent one
            if not changed:
                raise InvalidArgument("nothing to change: pass content, title, entities, type, trust, source "
                                      "or review_after.")
            mem.updated = now_iso()
            self._write(index, loaded)
            self.history.commit_paths([loaded.rel], f"update: {mem.title}", [mem.id],
                                      "changed: " + ", ".join(changed))
        return self.read(id=mem.id)

    # ------------------------------------------------------------------ forget
    def forget(self, id: str, mode: str = "archive", reason: str = "", confirm: bool = False) -> ForgetResult:
        """archive, deprecate (reason required), restore to active, or purge (confirm required)."""
        if mode not in FORGET_MODES:
            raise InvalidArgument(f"unknown mode '{mode}': use one of {', '.join(FORGET_MODES)}.")
        _check_short(reason=reason)
        with self._session() as index:
            # A purged file needs no permanent id: it is about to go, under the id it had.
            loaded = self._load(index, id, for_write=mode != "purge")
            mem = loaded.mem
            if mode == "purge":
                lifecycle.check_purge(mem)
                if not confirm:
                    raise ConfirmRequired(
                        f"purge deletes {loaded.rel} (git keeps it). Ask the user, then call again with confirm=true.")
                self.history.check_idle()
                (self.root / loaded.rel).unlink()
                index.remove_path(loaded.rel)
                self.history.commit_paths([loaded.rel], f"forget: purge {mem.title}", [mem.id],
                                          f"reason: {reason}" if reason.strip() else "")
                return ForgetResult(id=mem.id, mode=mode, state=None, purged=True,
                                    message=f"deleted {loaded.rel}; `git log --all -- {loaded.rel}` still has it")
            target = {"archive": State.ARCHIVED, "deprecate": State.DEPRECATED, "restore": State.ACTIVE}[mode]
            notes = lifecycle.transition(mem, target, reason, now_iso())
            self._write(index, loaded)
            self.history.commit_paths([loaded.rel], f"forget: {mode} {mem.title}", [mem.id],
                                      f"reason: {mem.deprecated_reason}" if mem.deprecated_reason else "")
            if mem.id != id:
                notes.append(f"the file had no id of its own; it is now {mem.id}")
            return ForgetResult(id=mem.id, mode=mode, state=mem.state.value, purged=False,
                                message=f"{mem.id} is now {mem.state.value}", warnings=notes)

    # ------------------------------------------------------------------ resolve
    def resolve(self, id: str, other_id: str, decision: str) -> ResolveResult:
        """Settle a pair: `supersede` (id replaces other_id) or `keep_both` (never raised again)."""
        if decision not in ("supersede", "keep_both"):
            raise InvalidArgument(f"unknown decision '{decision}': use supersede or keep_both.")
        check_id(id)
        check_id(other_id)
        with self._session() as index:
            if id == other_id:
                if decision == "supersede":
                    raise InvalidSupersede(f"memory {id} cannot supersede itself.")
                raise InvalidArgument("id and other_id are the same memory; a pair needs two.")
            a, b = self._load(index, id), self._load(index, other_id)
            now = now_iso()
            if decision == "supersede":
                lifecycle.check_supersede(a.mem.id, b.mem, lambda i: _superseded_by(index, i))
                lifecycle.apply_supersede(a.mem, b.mem, now)
                message = f"{other_id} is superseded by {id} and {b.mem.state.value}"
            else:
                for x, y in ((a.mem, b.mem), (b.mem, a.mem)):
                    if y.id in x.conflicts_with:
                        x.conflicts_with.remove(y.id)
                    if y.id not in x.distinct_from:
                        x.distinct_from.append(y.id)
                message = f"{id} and {other_id} are kept as distinct memories; the pair will not be raised again"
            for item in (a, b):
                self._write(index, item)
            self.history.commit_paths([a.rel, b.rel], f"resolve: {decision} {a.mem.title} / {b.mem.title}",
                                      [id, other_id])
            return ResolveResult(id=id, other_id=other_id, decision=decision, message=message)

    # ------------------------------------------------------------------ feedback
    def feedback(self, id: str, helpful: bool, note: str = "") -> FeedbackResult:
        """+0.1 when a memory helped, -0.2 when it misled; at -0.5 or below it is withheld from recall."""
        _check_short(note=note)
        with self._session() as index:
            loaded = self._load(index, id)
            mem = loaded.mem
            mem.feedback = round(max(-1.0, min(1.0, mem.feedback + (0.1 if helpful else -0.2))), 2)
            self._write(index, loaded)
            self.history.commit_paths([loaded.rel], f"feedback: {'helpful' if helpful else 'misleading'} "
                                      f"{mem.title}", [mem.id], note)
            return FeedbackResult(id=mem.id, feedback=mem.feedback, withheld=ranking.withheld(mem.feedback))

    # ------------------------------------------------------------------ status
    def _pending(self, index: Index) -> list[PendingConflict]:
        out: dict[str, PendingConflict] = {}
        for row in index.with_open_conflicts():
            for other_id in row.conflicts_with:
                other = index.get(other_id)
                if (other is None or State.DEPRECATED in (row.state, other.state)
                        or row.superseded_by or other.superseded_by or conflicts.settled(row, other)):
                    continue
                pair = conflicts.pair_hash(row.id, other_id)
                out.setdefault(pair, PendingConflict(row.id, other_id, row.title, other.title, pair))
        return list(out.values())

    def status(self) -> StatusResult:
        """Counts, coverage, unindexed files, pending conflicts, review-due, distill candidates, withheld."""
        with self._session() as index:
            rows = index.rows()
            counts: dict[str, object] = {"total": len(rows)}
            for key in ("state", "type", "trust"):
                tally: dict[str, int] = {}
                for r in rows:
                    tally[getattr(r, key)] = tally.get(getattr(r, key), 0) + 1
                counts[f"by_{key}"] = tally
            today = date.today().isoformat()
            cutoff = (datetime.now(UTC) - timedelta(days=DISTILL_AGE_DAYS)).strftime("%Y-%m-%dT%H:%M:%SZ")
            usage = index.usage(r.id for r in rows)
            review = [Listed(r.id, r.path, r.title, f"review_after {r.review_after}") for r in rows
                      if r.state == State.ACTIVE and r.review_after and r.review_after[:10] <= today]
            distill = [Listed(r.id, r.path, r.title,
                              "old episode: distil related episodes into one knowledge memory that supersedes them")
                       for r in sorted(rows, key=lambda r: r.updated or "")
                       if r.state == State.ACTIVE and r.type == MemoryType.EPISODE and (r.updated or "") < cutoff
                       and (usage.get(r.id, (0, None))[1] or "") < cutoff]
            withheld = [Listed(r.id, r.path, r.title, f"feedback {r.feedback}") for r in rows
                        if ranking.withheld(r.feedback)]
            provisional = [Listed(r.id, r.path, r.title, "no id in the file: add `id: <ULID>` to its frontmatter, "
                                  "or call memory_update on it to get one") for r in rows if r.provisional]
            return StatusResult(
                store=str(self.root), counts=counts, coverage=self._coverage(index),
                unindexed=[UnindexedFile(p, e) for p, e in index.errors()], provisional=provisional[:LIST_LIMIT],
                pending_conflicts=self._pending(index)[:LIST_LIMIT], review_due=review[:LIST_LIMIT],
                distill_candidates=distill[:10], withheld=withheld[:LIST_LIMIT], git=self.history.summary(),
                secrets=[SecretFlag(p, k) for p, k in index.secret_flags()])

    # ------------------------------------------------------------------ reindex
    def reindex(self, verify: bool = False, progress: Progress | None = None) -> ReindexResult:
        """Rebuild the index from the files; with `verify`, re-hash everything and report drift.

        `progress`, when given, is called with (files done, files in all) as the walk goes."""
        with self._storage_errors(), self.lock.hold():
            index = self._ensure_index()
            if verify:
                before = {p: s.sha for p, (s, _) in index.file_stats().items()}
                report = self._sync(index, force=True, progress=progress)
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
                    report = self._sync(index, force=True, progress=progress)
                drift, mode = [], "rebuild"
                note = "index rebuilt from the files; recall counts (heat) are kept"
            return ReindexResult(mode=mode, indexed=index.count(), unindexed=len(index.errors()),
                                 seconds=round(report.seconds, 3), drift=drift, note=note)

    def refresh(self) -> ReconcileReport:
        """Reconcile now (what every call does first) and return what it found."""
        with self._session():
            return self._last or ReconcileReport()

    # ------------------------------------------------------------------ sync, import, export
    def sync(self, progress: Progress | None = None) -> SyncResult:
        """Pull from and push to the store's git remote, merging memory by memory; the index converges by
        reconcile. A memory both sides changed beyond a field merge becomes an open conflict pair."""
        def settle(merged: bool) -> None:
            # Progress is shown for the reconcile after a merge, the one that may index many files.
            report = self._sync(self._ensure_index(), progress=progress if merged else None)
            if merged and progress:
                progress(report.scanned, report.scanned)

        # The network parts run outside the store lock; the merge and reconciles run inside it.
        return sync_remote(self.history, self._new_path, settle, self.lock.hold)

    def import_memories(self, kind: str, path: Path | None = None, text: str | None = None,
                        keep_trust: bool = False, progress: Progress | None = None) -> ImportReport:
        """Import memories of `kind` (see transfer.KINDS) from `path` or `text`, committed as one commit.

        Every memory passes the checks of memory_remember (credentials, sizes), duplicates are skipped,
        the conflict gate pairs collisions for memory_resolve. Imported memories get `trust: imported`
        unless `keep_trust` (restoring one's own export)."""
        batch = transfer.read(kind, path, text)
        self.history.check_idle()  # else every memory would be refused one by one for the same reason
        report = ImportReport(kind, batch.source, refused=[Skipped(o, r) for o, r in batch.unreadable])
        with self._session() as index, index.transaction():
            # Read from git history only when an item gets past the duplicate check: a second import of
            # the same source, the common case, then costs nothing (the log costs ~8 ms per deletion).
            purged = functools.cache(lambda: transfer.deletions(self.history))
            written: list[_Loaded] = []
            for done, item in enumerate(batch.items):
                if progress:
                    progress(done, len(batch.items))
                try:
                    loaded = self._import_one(index, item, batch, keep_trust, purged, report)
                except StoreError as e:
                    report.refused.append(Skipped(item.origin, f"[{e.code}] {e.message}"))
                    continue
                if loaded:
                    written.append(loaded)
            if progress:
                progress(len(batch.items), len(batch.items))
            report.imported = [w.mem.id for w in written]
            if written:
                report.commit = self.history.commit_paths(
                    [w.rel for w in written], f"import: {len(written)} memories from {kind} {Path(batch.source).name}",
                    report.imported, f"skipped: {len(report.skipped)}, refused: {len(report.refused)}, "
                    f"conflicts: {len(report.conflicts)}")
        return report

    def _import_one(self, index: Index, item: Incoming, batch: Batch, keep_trust: bool,
                    purged: Callable[[], transfer.Deletions], report: ImportReport) -> _Loaded | None:
        """Check one incoming memory and write it (not committed), or record why it was skipped."""
        mem = item.mem
        by_id = item.keep_id  # an export's record with its id: its id and dates decide about deletions
        if item.sha256 and item.sha256 != transfer.sha256(mem):
            raise InvalidArgument("its content hash does not match: the record was changed after export")
        if not keep_trust:
            mem.trust = Trust.IMPORTED
        self._check_text(mem.body, None, mem.source)
        mem.entities = self.dictionary.normalise_all(self._check_entities(mem.entities))[0]
        # The other free-text fields an export carries reach the file too.
        _check_short(deprecated_reason=mem.deprecated_reason)
        if mem.extra:
            _check_inputs(frontmatter=yaml.safe_dump(mem.extra, allow_unicode=True))
        if item.keep_id:
            row = index.get(mem.id)
            skip = transfer.stale_reason(row, mem, purged().ids.get(mem.id), batch.exported_at)
            if skip:
                report.skipped.append(Skipped(item.origin, skip, mem.id))
                return None
            if row:  # a newer version of a memory the store has: keep both, as a pair to settle
                mem.conflicts_with.append(mem.id)
                mem.id, item.keep_id = str(ULID()), False
        key = content_key(mem.body)
        same = index.by_content(key)
        dup = next((r for r in same if r.state != State.DEPRECATED), None)
        if dup:
            report.skipped.append(Skipped(item.origin, DUPLICATE, dup.id))
            return None
        if not by_id:
            # Importing a source again must not bring back what a person retired since: a memory marked
            # wrong (deprecated) or deleted here.
            if same:
                report.skipped.append(Skipped(item.origin, "deprecated in this store; not revived", same[0].id))
                return None
            deleted_at = purged().contents.get(key)
            if deleted_at is not None:
                report.skipped.append(Skipped(
                    item.origin, f"deleted in this store on {deleted_at:%Y-%m-%d %H:%M:%S}; not revived"))
                return None
        if not mem.id:
            mem.id, mem.provisional = str(ULID()), False
        if mem.state == State.ACTIVE and not mem.superseded_by:
            # Only live memories contradict; an export's archived or superseded ones are history.
            found = conflicts.neighbours(index, conflicts.Subject(
                mem.id, mem.title, mem.excerpt, mem.entities, mem.updated, mem.distinct_from))
            mem.conflicts_with = list(dict.fromkeys([*mem.conflicts_with, *(
                n.row.id for n in found if n.row.id not in mem.supersedes)]))
        fresh = [i for i in mem.conflicts_with if index.get(i)]
        if fresh:
            report.conflicts.append(ImportConflict(mem.id, item.origin, fresh))
        loaded = _Loaded(mem, self._import_path(item, mem))
        self._write(index, loaded)
        return loaded

    def _import_path(self, item: Incoming, mem: Memory) -> str:
        """An export's own path when it is a free memory path, else a new one."""
        # An export is untrusted: a path the walk skips (hidden, `#`, a nested .git) would be written,
        # then vanish from the index on the next walk and, in .git, from git as well.
        if item.keep_id and item.path and walkable(item.path):
            try:
                rel = self._resolve_path(item.path)
            except StoreError:
                rel = ""
            if rel == item.path and not (self.root / rel).exists():
                return rel
        return self._new_path(mem.title, mem.id)

    def export(self) -> dict:
        """Every indexed memory as one portable JSON document (see transfer.export_document); files
        that could not be indexed are listed in it with the reason, not silently left out."""
        with self._session() as index:
            out = [(row.path, self._load(index, row.id, for_write=False).mem)
                   for row in sorted(index.rows(), key=lambda r: r.path)]
            return transfer.export_document(out, now_iso(), index.errors())

    # ------------------------------------------------------------------ digest
    def digest(self, limit: int = 40) -> list[Hit]:
        """The memories worth loading at session start: active preferences, then decisions (each by
        rank), then every other active memory newest first. Callers cut the list to a token budget."""
        with self._session() as index:
            now = datetime.now(UTC)
            rows = [r for r in index.rows() if r.state == State.ACTIVE and not ranking.withheld(r.feedback)]
            usage = index.usage(r.id for r in rows)
            first = sorted((r for r in rows if r.type in DIGEST_FIRST), key=lambda r: (
                DIGEST_FIRST.index(r.type), -ranking.score(1.0, r.trust, r.state, r.updated,
                                                           usage.get(r.id, (0, None))[0], r.feedback, now)))
            rest = sorted((r for r in rows if r.type not in DIGEST_FIRST),
                          key=lambda r: (r.updated or r.created or "", r.id), reverse=True)
            return [_hit(r, 1.0) for r in (first + rest)[:limit]]


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def _check_inputs(**fields: str | list[str] | None) -> None:
    """Refuse text bound for a file or a commit message that holds a credential or control characters
    (a NUL would make the file look binary and break `git commit`)."""
    for what, value in fields.items():
        for text in value if isinstance(value, list) else [value]:
            if text and _CONTROL.search(text):
                raise InvalidArgument(f"{what} contains a control character (such as NUL); remove it and call again.")
            found = scan(text) if text else []
            if found:
                raise SecretDetected(
                    f"{what} contains what looks like a credential ({_kinds(found)}). Memories are committed to git: "
                    "remove the value and say where it is kept instead (e.g. 'in the team vault'), then call again.")


def _kinds(found: list[Finding]) -> str:
    return "; ".join(f"{f.kind} on line {f.line}" for f in found)


_STORAGE_ERRNOS = {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT}
_STORAGE_WORDS = ("no space left", "disk is full", "read-only file system", "readonly database",
                  "permission denied", "unable to open database file", "disk quota")


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


def _check_short(**fields: str | None) -> None:
    """A one-line field (source, reason, note): within the length limit and free of credentials."""
    for what, value in fields.items():
        if value is not None and len(value) > SOURCE_MAX:
            raise TooLarge(f"{what} is {len(value)} characters; the limit is {SOURCE_MAX}.")
    _check_inputs(**fields)


def _superseded_by(index: Index, mem_id: str) -> str | None:
    row = index.get(mem_id)
    return row.superseded_by if row else None


def _hit(row: Row, score: float) -> Hit:
    return Hit(id=row.id, path=row.path, title=row.title, excerpt=row.excerpt, type=row.type, state=row.state,
               trust=row.trust, entities=row.entities, updated=row.updated, score=round(score, 4),
               superseded_by=row.superseded_by)


def _conflict(n: conflicts.Neighbour) -> Conflict:
    return Conflict(id=n.row.id, title=n.row.title, excerpt=n.row.excerpt, shared_entities=n.shared_entities,
                    age_days=n.age_days, latest_wins_eligible=n.latest_wins_eligible, similarity=n.similarity)


def _retitle(body: str, title: str) -> str:
    """Replace the body's first heading (or put one in front) so the memory reads as `title`."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if line.strip():
            if re.match(r"^#{1,6}\s", line.strip()):
                lines[i] = f"# {title}"
                return "\n".join(lines)
            break
    return f"# {title}\n\n{body.lstrip()}" if derive_title(body) != title else body


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
