"""The application facade: the one object the MCP server and the CLI call. It holds no rules of
its own: each method hands its typed options to the module of its use case (`writes`, `reads`,
`upkeep`, `importing`), which runs inside the store's `Session` (lock, reconcile, storage errors).

Methods take the options object of `options.py` (a write's: `writeoptions.py`), or its fields as
typed arguments (`store.remember("text", type="decision")`; mypy refuses a misspelt one), which
`given` makes into the object; tests/app/test_facade.py keeps the two equal.

A use case's module is imported by the method that calls it: a CLI command is a new process, and
loading every use case (the writes, the conflict gate, the import and export, sync, the vector model)
for one recall took about a third of its start; tests/adapters/test_cli_imports.py keeps it so. So
is the options class it builds, as each use case imports its results: a data class costs 0.4 ms.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

from memory_mcp.app.lock import LOCK_TIMEOUT_SECONDS
from memory_mcp.app.session import Session
from memory_mcp.app.storeroot import init_store, open_root
from memory_mcp.index.db import Index
from memory_mcp.recall.ranking import DIGEST_LIMIT
from memory_mcp.truth.dictionary import Dictionary
from memory_mcp.truth.recall import Hit, Recall, RecallResult, ReconcileReport

if TYPE_CHECKING:
    from memory_mcp.app import autosync, embedding
    from memory_mcp.app.transfer import ImportReport
    from memory_mcp.index.watch import Watcher
    from memory_mcp.truth.options import Conflicts, Progress, Resolve, Timeline

    # The results' 27 data classes cost a one-shot `memory-mcp recall` about 6 ms to build, and this
    # module names them only as return types: each use case's module imports those it makes.
    from memory_mcp.truth.results import (
        BulkResolveResult,
        ConflictPage,
        HeadCommit,
        Insights,
        Listed,
        MemoryPage,
        PruneList,
        ReadResult,
        ReindexResult,
        ReorganizeResult,
        ResolveResult,
        StatusResult,
        SyncStatus,
        TimelinePage,
        UndoResult,
        VectorsResult,
        Version,
    )
    from memory_mcp.truth.stamp import Writer
    from memory_mcp.truth.writeoptions import Feedback, Forget, Remember, RememberFields, Update, UpdateFields
    from memory_mcp.truth.writeresults import FeedbackResult, ForgetResult, RememberResult
    from memory_mcp.vcs.history import History
    from memory_mcp.vcs.sync import SyncResult

__all__ = ["Store", "init_store"]


class Store:
    """One memory store: a git work tree of markdown files and its derived index."""

    def __init__(self, root: Path, watch: bool | None = False, lock_timeout: float = LOCK_TIMEOUT_SECONDS) -> None:
        self.root = root
        self.session = Session(root, lock_timeout)
        self._embedder: embedding.VectorWorker | None = None
        self._pusher: autosync.Pusher | None = None
        if watch is not False:  # a one-shot command's False loads no watcher module (about 1 ms of its start)
            from memory_mcp.index.watch import enabled

            watch = enabled(watch)
        if watch:
            from memory_mcp.app import embedding
            from memory_mcp.recall import vectors

            self.start_watching()
            if vectors.configured():
                # Only a long-lived process embeds in the background; a one-shot command leaves it to
                # the server or `reindex --vectors`.
                self._embedder = embedding.VectorWorker(self.session)
                self.session.after_call = self._embedder.poke
                self._embedder.poke()
            self._push_after_writes()

    def _push_after_writes(self) -> None:
        """In a long-lived process, a store with a remote the person trusts is pushed after writes
        (`autosync.Pusher`)."""
        from memory_mcp.app import autosync, consent

        if autosync.enabled() and not self.session.read_only and autosync.has_remote(self.root) \
                and consent.is_trusted(self.root):
            self._pusher = autosync.Pusher(self.root)
            self.session.after_call = autosync.when_moved(self.session.after_call, self._pusher)

    @classmethod
    def open(cls, root: Path | None = None, create: bool = True, watch: bool | None = False,
             lock_timeout: float = LOCK_TIMEOUT_SECONDS) -> Store:
        """Open the store at `root` (default: $MEMORY_MCP_ROOT or ~/.memory-mcp/default).

        A missing folder is created from the template when `create`; a folder that is not a store
        is refused, never overwritten. `watch` keeps a file watcher (see watch.py) so each call
        reconciles only what changed (None: $MEMORY_MCP_WATCH decides, on by default); one-shot
        commands leave it off. `lock_timeout` bounds the wait for another process holding the
        store (a hook waits a second, not a minute)."""
        return cls(open_root(root, create), watch=watch, lock_timeout=lock_timeout)

    @property
    def history(self) -> History:
        return self.session.history

    @property
    def dictionary(self) -> Dictionary:
        """The entity vocabulary as the latest call read it from dictionary.md."""
        return self.session.dictionary

    @property
    def watcher(self) -> Watcher | None:
        return self.session.watcher

    @property
    def index_path(self) -> Path:
        return self.session.index_path

    def start_watching(self) -> Watcher:
        """Keep a file watcher on the store from now on (it starts with the next call)."""
        return self.session.start_watching()

    def close(self) -> None:
        """Stop the embedder and the watcher, if any, and close the index."""
        if self._embedder is not None:
            self._embedder.close()
            self._embedder = None
        if self._pusher is not None:
            self._pusher.close()
            self._pusher = None
        self.session.close()

    def index(self) -> Index:
        """The open index as it is now, without reconciling (for tests and benchmarks)."""
        return self.session.index()

    # ------------------------------------------------------------------ writes
    def remember(self, content: str | Remember, title: str | None = None, by: Writer | None = None,
                 **fields: Unpack[RememberFields]) -> RememberResult:
        """Write a new memory (or return the existing one with the same content), run the conflict gate."""
        from memory_mcp.app import writes
        from memory_mcp.truth.writeoptions import Remember

        return writes.remember(self.session, given(Remember, content, title=title, by=by, fields=fields))

    def update(self, id: str | Update, content: str | None = None, title: str | None = None,
               expected_sha: str = "", by: Writer | None = None,
               **fields: Unpack[UpdateFields]) -> ReadResult:
        """Change a memory's text or fields in place (state moves go through forget/resolve); with
        `expected_sha`, only when the file is still the version the caller read (else `Stale`)."""
        from memory_mcp.app import writes
        from memory_mcp.truth.writeoptions import Update

        opts = given(Update, id, content=content, title=title, expected_sha=expected_sha, by=by, fields=fields)
        return self.read(id=writes.update(self.session, opts))

    def forget(self, id: str | Forget, mode: str = "archive", reason: str = "", confirm: bool = False,
               expected_sha: str = "") -> ForgetResult:
        """archive, deprecate (reason required), restore to active, or purge (confirm required);
        `expected_sha` as update's."""
        from memory_mcp.app import writes
        from memory_mcp.truth.writeoptions import Forget

        return writes.forget(self.session, given(Forget, id, mode=mode, reason=reason, confirm=confirm,
                                                 expected_sha=expected_sha))

    def resolve(self, id: str | Resolve, other_id: str | None = None, decision: str | None = None) -> ResolveResult:
        """Settle a pair: `supersede` (id replaces other_id) or `keep_both` (never raised again)."""
        from memory_mcp.app import settling
        from memory_mcp.truth.options import Resolve

        return settling.resolve(self.session, given(Resolve, id, other_id=other_id, decision=decision))

    def resolve_all(self, commit: str | Conflicts | None = None, id: str | None = None, limit: int = 50,
                    offset: int = 0, decision: str | None = None, apply: bool = False) -> BulkResolveResult:
        """Settle every open pair a filter selects with one decision (keep_both or newer), as one
        commit; a dry run unless `apply`."""
        from memory_mcp.app import settling
        from memory_mcp.truth.options import Conflicts

        opts = given(Conflicts, commit, id=id, limit=limit, offset=offset, decision=decision, apply=apply)
        return settling.resolve_all(self.session, opts)

    def feedback(self, id: str | Feedback, helpful: bool | None = None, note: str = "") -> FeedbackResult:
        """+0.1 when a memory helped, -0.2 when it misled; at -0.5 or below it is withheld from recall."""
        from memory_mcp.app import writes
        from memory_mcp.truth.writeoptions import Feedback

        return writes.feedback(self.session, given(Feedback, id, helpful=helpful, note=note))

    # ------------------------------------------------------------------ reads
    def recall(self, query: str | Recall = "", limit: int = 8, types: Sequence[str] = (),
               entities: Sequence[str] = (), include_archived: bool = False, include_deprecated: bool = False,
               max_tokens: int = 0, diversity: float = 0.0, min_score: float = 0.0, file: str = "",
               as_of: str = "", project: str = "") -> RecallResult:
        """Find memories for a query (or list by entities/types), ranked, within an optional token budget."""
        opts = given(Recall, query, limit=limit, types=types, entities=entities, include_archived=include_archived,
                     include_deprecated=include_deprecated, max_tokens=max_tokens, diversity=diversity,
                     min_score=min_score, file=file, as_of=as_of, project=project)
        from memory_mcp.app import reads

        return reads.recall(self.session, opts)

    def preview(self, opts: Recall) -> RecallResult:
        """`recall` as an agent would get it, recording no usage: what a hook would inject, shown to a
        person (the local page), must not count as the agent having recalled it."""
        from memory_mcp.app import reads

        return reads.recall(self.session, opts, record=False)

    def search(self, query: str, limit: int = 8) -> list[Hit]:
        """Ranked hits for `query` over the index as it is (no reconcile, no usage recorded).

        For evaluation and tools that query in bulk; agents go through `recall`."""
        from memory_mcp.app import reads

        return reads.search_only(self.session, query, limit)

    def conflicts(self, commit: str | Conflicts | None = None, id: str | None = None, limit: int = 50,
                  offset: int = 0, decision: str | None = None, apply: bool = False) -> ConflictPage:
        """The open conflict pairs, all or those on one memory or one commit's memories, a page at a time."""
        from memory_mcp.app import settling
        from memory_mcp.truth.options import Conflicts

        opts = given(Conflicts, commit, id=id, limit=limit, offset=offset, decision=decision, apply=apply)
        return settling.listed(self.session, opts)

    def read(self, id: str | None = None, path: str | None = None) -> ReadResult:
        """The whole memory: frontmatter, body, supersede chain both ways, git history."""
        from memory_mcp.app import reads

        return reads.read(self.session, id, path)

    def peek(self, id: str) -> Listed | None:
        """Title, path and state of a memory as the files say now (reconciled), or None."""
        from memory_mcp.app import reads

        return reads.peek(self.session, id)

    def unaccepted(self, standing: str = "unaccepted") -> list[Hit]:
        """The memories whose version now the person has not accepted (or, `standing="rejected"`,
        rejected), newest first. For `memory-mcp accept`; no MCP tool accepts."""
        from memory_mcp.app import accepting

        return accepting.listed(self.session, standing)

    def decide(self, decision: str, ids: list[str]) -> list[str]:
        """Accept, reject or un-reject the version now held of each memory of `ids` (the person's
        record, never the store); a line for each."""
        from memory_mcp.app import accepting

        return accepting.decide(self.session, decision, ids)

    def accept_held(self) -> int:
        """Accept what the store holds now (trusting it); how many memory versions."""
        from memory_mcp.app import accepting

        return accepting.accept_held(self.session)

    def accept_by_rule(self) -> None:
        """Accept what the person's rule for this team store names (`memory-mcp team accept`)."""
        from memory_mcp.app import accepting

        accepting.accept_by_rule(self.session)

    def digest(self, limit: int = DIGEST_LIMIT) -> list[Hit]:
        """The memories worth loading at session start (preferences, decisions, then newest first)."""
        from memory_mcp.app import reads

        return reads.digest(self.session, limit)

    def export(self, path: Path | None = None) -> dict[str, Any]:
        """Every indexed memory as one portable JSON document; unindexed files listed with reasons.
        With `path`, the document is also written there (atomically, as JSON)."""
        from memory_mcp.app.transfer import export_json, export_target, write_export

        target = export_target(path) if path is not None else None  # refused before the work
        from memory_mcp.app import reads

        doc = reads.export(self.session)
        if target is not None:
            write_export(target, export_json(doc))
        return doc

    @staticmethod
    def export_text(doc: dict[str, Any]) -> str:
        """An export document as the text `export(path)` writes (for standard output)."""
        from memory_mcp.app.transfer import export_json

        return export_json(doc)

    # ------------------------------------------------------------------ the local page (`memory-mcp ui`)
    def timeline(self, query: str | Timeline = "", types: Sequence[str] = (), states: Sequence[str] = (),
                 trusts: Sequence[str] = (), entity: str = "", author: str = "", standing: str = "",
                 file: str = "", limit: int = 50, offset: int = 0) -> TimelinePage:
        """The memories newest change first, filtered, a page at a time; with `query`, recall's best
        matches under the same filters. No usage is recorded."""
        from memory_mcp.app import browse
        from memory_mcp.truth.options import Timeline

        opts = given(Timeline, query, types=types, states=states, trusts=trusts, entity=entity, author=author,
                     standing=standing, file=file, limit=limit, offset=offset)
        return browse.timeline(self.session, opts)

    def page(self, id: str) -> MemoryPage:
        """One memory whole, with the version held (the `expected_sha` of a write from the page),
        its author, standing, usage and open conflict pairs."""
        from memory_mcp.app import browse

        return browse.page(self.session, id)

    def version(self, id: str, commit: str) -> Version:
        """The memory's file as `commit` and the commit before it left it (for a diff)."""
        from memory_mcp.app import browse

        return browse.version(self.session, id, commit)

    def head(self) -> HeadCommit | None:
        """The commit HEAD is on: the page records the commit its write made, to undo it."""
        from memory_mcp.app import browse

        return browse.head(self.session)

    def undo(self, commit: str) -> UndoResult:
        """Put back what `commit` changed, as a new commit; refused (`Stale`) when a file it changed
        has changed since."""
        from memory_mcp.app import undoing

        return undoing.undo(self.session, commit)

    def insights(self, weeks: int = 26) -> Insights:
        """Counts, memories added per week by type, who wrote them, pairs that read alike."""
        from memory_mcp.app import insights

        return insights.insights(self.session, weeks)

    def prune_candidates(self, days: int = 90) -> PruneList:
        """Active memories neither changed nor recalled in `days` days (usage: since the index was built)."""
        from memory_mcp.app import insights

        return insights.prune(self.session, days)

    def sync_status(self) -> SyncStatus | None:
        """Ahead and behind the git remote as last fetched, and the last sync recorded; None without a remote."""
        from memory_mcp.app import insights

        return insights.sync_status(self.session)

    # ------------------------------------------------------------------ the store as a whole
    def status(self) -> StatusResult:
        """Counts, coverage, unindexed files, pending conflicts, review-due, distill candidates, withheld."""
        from memory_mcp.app import upkeep

        return upkeep.status(self.session)

    def reindex(self, verify: bool = False, progress: Progress | None = None) -> ReindexResult:
        """Rebuild the index from the files; with `verify`, re-hash everything and report drift."""
        from memory_mcp.app import upkeep

        return upkeep.reindex(self.session, verify, progress)

    def embed_missing(self, progress: Progress | None = None) -> VectorsResult:
        """Compute the dense vectors memories lack, for the enabled model (`reindex --vectors`)."""
        from memory_mcp.app import embedding

        return embedding.embed_missing(self.session, progress)

    def reorganize(self, apply: bool = False) -> ReorganizeResult:
        """Move a flat store's memories into month folders (see upkeep.reorganize); `apply` does it."""
        from memory_mcp.app import upkeep

        return upkeep.reorganize(self.session, apply)

    def refresh(self) -> ReconcileReport:
        """Reconcile now (what every call does first) and return what it found."""
        from memory_mcp.app import upkeep

        return upkeep.refresh(self.session)

    def follow(self, on_report: Callable[[ReconcileReport], None], stop: threading.Event | None = None,
               quiet_ms: int | None = None) -> None:
        """`memory-mcp watch`: index (and commit) hand edits as they are saved, until `stop` or Ctrl-C.

        The watcher a server keeps, run in the foreground: each batch of changes goes through
        `refresh`, the path every tool call takes. `on_report` hears of every reconcile that
        changed something. `quiet_ms` (default `watch.QUIET_MS`) lets an editor's save settle before
        the reconcile."""
        from memory_mcp.index import watch

        watcher = self.start_watching()
        report = self.refresh()
        while True:
            if report.changed or report.dictionary_changed:
                on_report(report)
            if not watcher.wait(stop, watch.QUIET_MS if quiet_ms is None else quiet_ms):
                return
            report = self.refresh()

    def sync(self, progress: Progress | None = None, allow_deletions: bool = False, why: str = "command") -> SyncResult:
        """Pull from and push to the store's git remote, merging memory by memory; the index converges by
        reconcile. A memory both sides changed beyond a field merge becomes an open conflict pair. A
        remote that deletes many memories is refused unless `allow_deletions`. Recorded in the
        store's sync record (`syncrecord`) with `why`."""
        from memory_mcp.app import autosync

        return autosync.sync(self.session, why, allow_deletions, progress)

    def import_memories(self, kind: str, path: Path | None = None, text: str | bytes | None = None,
                        keep_trust: bool = False, progress: Progress | None = None,
                        by: Writer | None = None) -> ImportReport:
        """Import memories of `kind` (see transfer.KINDS) from `path` or `text`, committed as one commit;
        `by` stamps who imported them on those that come without a `written_by`.

        `text` as bytes (standard input) is decoded strictly: bytes that are not UTF-8 refuse the
        source whole rather than reach a file as replacement characters."""
        from memory_mcp.app import importing
        from memory_mcp.app.sources import decode_source

        if isinstance(text, bytes):
            text = decode_source(text, "standard input")
        return importing.import_memories(self.session, kind, path, text, keep_trust, progress, by)


T = TypeVar("T")


def given(kind: type[T], first: T | Any, **rest: Any) -> T:
    """The options object of a facade call: `first` when it is one (the adapters'), else `kind` built
    from the call's arguments (a test's or a script's); one the operation needs left out is refused."""
    if isinstance(first, kind):
        return first
    required = [f.name for f in dataclasses.fields(kind)[1:]  # type: ignore[arg-type]
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    missing = [name for name in required if rest.get(name) is None]
    if missing:
        raise TypeError(f"{kind.__name__.lower()}() needs {', '.join(missing)}")
    build: Callable[..., T] = kind
    return build(first, **rest)
