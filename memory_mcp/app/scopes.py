"""Scopes: a project's own store, its team store (when the person joined one) and the user's global
store, served together by one server.

Reads see all of them (the project's memories first, then the team's, then the user's); a write goes
to the store its `scope` names (the project's by default: nothing reaches the team store unless a
call names it or `share` moves a memory there). Ids are ULIDs, unique across stores, so a call by id finds its store by
asking each in turn. Each store stays a whole `Store`: this module only routes and merges, so the
rules about files, git and the index live in store.py alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_mcp.recall import ranking
from memory_mcp.truth import budget, standing
from memory_mcp.truth.errors import BeforeHistory, InvalidArgument
from memory_mcp.truth.recall import Coverage, Hit, Recall, RecallResult
from memory_mcp.truth.roots import PROJECT, TEAM, USER, ScopeConfig

if TYPE_CHECKING:  # the store (git, SQLite, YAML, stemmers) loads on the first call, not at server start
    from memory_mcp.app.loads import Load
    from memory_mcp.app.store import Store
    from memory_mcp.truth.options import Progress, Share
    from memory_mcp.truth.results import Listed, ReindexResult, ShareResult, StatusResult


def merged_digest(lists: dict[str, list[Hit]]) -> list[Hit]:
    """One digest from each store's (scope name -> its digest, the project's first): preferences and
    decisions first (within a type the person's own, then accepted, then not accepted, the
    project's before the user's within each), then everything else newest first in the same order of
    standing, each hit named by its scope; one store's digest as it is."""
    if len(lists) == 1:
        return next(iter(lists.values()))
    every = [replace(h, scope=name) for name, hits in lists.items() for h in hits]
    first = sorted((h for h in every if h.type in ranking.DIGEST_FIRST),
                   key=lambda h: (ranking.DIGEST_FIRST.index(h.type), standing.rank(h.standing)))
    rest = sorted((h for h in every if h.type not in ranking.DIGEST_FIRST), key=lambda h: h.updated or "", reverse=True)
    return first + sorted(rest, key=lambda h: standing.rank(h.standing))


def open_trusted(root: Path | None, watch: bool | None = False) -> Store:
    """The store at `root` (default: the default root), opened or created; a store the person has
    not trusted on this machine (`consent`) is not opened: a stand-in that says so takes its place."""
    from memory_mcp.app import consent
    from memory_mcp.app.store import Store
    from memory_mcp.truth.layout import default_root, is_store

    path = root or default_root()
    if consent.needs_consent(path) and is_store(path.expanduser()) and not consent.is_trusted(path.expanduser()):
        from memory_mcp.app.storeroot import check_identity
        from memory_mcp.app.untrusted import UntrustedStore

        check_identity(path)  # a link or the project itself is refused before anything is read from it
        real = path.expanduser().resolve()
        return UntrustedStore(real, consent.untrusted_line(real, consent.held(real)))
    return Store.open(root, watch=watch)


class Scopes:
    """The stores one server serves, in read order (the project's first)."""

    def __init__(self, stores: dict[str, Store]) -> None:
        self.stores = stores
        self.default = next(iter(stores))

    @classmethod
    def open(cls, config: ScopeConfig, watch: bool | None = False) -> Scopes:
        """Open (or create) the stores of `config`; `watch` keeps a file watcher on each (None:
        $MEMORY_MCP_WATCH decides)."""
        config.check()
        project = open_trusted(config.project, watch)
        if config.user is None:
            return cls({PROJECT: project})
        team = {TEAM: open_trusted(config.team, watch)} if config.team is not None else {}
        return cls({PROJECT: project, **team, USER: open_trusted(config.user, watch)})

    @property
    def scoped(self) -> bool:
        return len(self.stores) > 1

    def close(self) -> None:
        for store in self.stores.values():
            store.close()

    def pause(self) -> None:
        """Take every store's write lock and keep it: a call in progress ends first, and no other
        starts. For a process about to exit, which releases the locks by ending."""
        from memory_mcp.app.untrusted import UntrustedStore

        for store in self.stores.values():
            if not isinstance(store, UntrustedStore):  # never opened: no lock to take
                store.session.lock.hold().__enter__()

    def store(self, scope: str | None = None) -> Store:
        """The store `scope` names; without a scope, the project's (the one the server was started on)."""
        if scope is None:
            return self.stores[self.default]
        if not self.scoped:
            raise InvalidArgument("this server serves one store, so there is no scope to choose; omit "
                                  "scope, or start the server with --user-store to have project and user scopes.")
        if scope not in self.stores:
            raise InvalidArgument(f"scope must be one of {', '.join(self.stores)}.")
        return self.stores[scope]

    def loads(self, folder: Path | None) -> list[Load]:
        """Where the memories load: each store served with its count, and the team store of the
        project holding `folder` when it is not served (not joined, refused, or none)."""
        from memory_mcp.app.loads import where_they_load

        return where_they_load(self.stores, folder)

    def owner(self, id: str) -> Store:
        """The store holding memory `id`; the default store when none does (its NotFound then says so)."""
        if self.scoped:
            for store in self.stores.values():
                if store.peek(id) is not None:
                    return store
        return self.stores[self.default]

    def owner_of_path(self, path: str) -> Store:
        """The store a memory path belongs to: an absolute path by its folder, a relative one by
        which store has that file (the project's first)."""
        if self.scoped:
            given = Path(path)
            for store in self.stores.values():
                if given.is_absolute() and given.resolve().is_relative_to(store.root):
                    return store
                if not given.is_absolute() and (store.root / given).is_file():
                    return store
        return self.stores[self.default]

    def share(self, opts: Share) -> ShareResult:
        """Move a memory from the person's own store into the team store (`teamstores.share`)."""
        from memory_mcp.app import teamstores
        from memory_mcp.truth.model import check_id

        check_id(opts.id)
        team = self.stores.get(TEAM)
        source = self.owner(opts.id)
        teamstores.check_shareable(opts, team is not None, source is team, source.peek(opts.id) is not None)
        assert team is not None  # checked above
        return teamstores.share(source.session, team.session, opts)

    def scope_of(self, store: Store) -> str:
        return next(name for name, s in self.stores.items() if s is store)

    # ------------------------------------------------------------------ reads across scopes
    def recall(self, scope: str | None, opts: Recall, record: bool = True) -> RecallResult:
        """Recall from the named store, or from all of them (the project's hits first, then the
        user's, within one `limit` and one `max_tokens` budget). Hits name their scope. Without
        `record`, no usage is recorded (`Store.preview`)."""
        if scope is not None or not self.scoped:
            store = self.store(scope)
            result = store.recall(opts) if record else store.preview(opts)
            return self._tagged(result, self.scope_of(store)) if self.scoped else result
        parts: list[RecallResult] = []
        hits: list[Hit] = []
        cut = False
        for name, store in self.stores.items():
            left = opts.limit - len(hits)
            tokens_left = opts.max_tokens - sum(budget.hit_tokens(h.path, h.title, h.excerpt) for h in hits)
            cut = cut or bool(opts.max_tokens and tokens_left <= 0 and left > 0)
            if left <= 0 or cut:
                break
            try:
                asked = replace(opts, limit=left, max_tokens=tokens_left if opts.max_tokens else 0)
                part = self._tagged(store.recall(asked) if record else store.preview(asked), name)
            except BeforeHistory:
                # One store may be younger than the day asked about; only when none is older is it an error.
                if name == list(self.stores)[-1] and not parts:
                    raise
                continue
            parts.append(part)
            hits += part.results
        return RecallResult(
            results=hits, coverage=_merged_coverage([p.coverage for p in parts]),
            pending_conflicts=sum(p.pending_conflicts for p in parts),
            truncated=cut or any(p.truncated for p in parts),
            # An entity that one store's dictionary.md knows is not unknown.
            unknown_entities=sorted(set.intersection(*(set(p.unknown_entities) for p in parts))))

    @staticmethod
    def _tagged(result: RecallResult, scope: str) -> RecallResult:
        result.results = [replace(h, scope=scope) for h in result.results]
        return result

    def digest(self) -> list[Hit]:
        """The session digest over every store (`merged_digest`)."""
        return merged_digest({name: store.digest() for name, store in self.stores.items()})

    def status(self) -> StatusResult:
        """The project store's status; with scopes, the user store's counts and lists are added, so a
        conflict the gate raised there (which recall counts) is listed too. The user store's paths are
        absolute: memory_read finds its store by them."""
        first = self.stores[self.default].status()
        if not self.scoped:
            return first
        first.store += f" ({self.default})"
        for name, store in self.stores.items():
            if store is self.stores[self.default]:
                continue
            other = store.status()
            first.store += f"; {other.store} ({name})"
            first.counts = _added(first.counts, other.counts)
            first.coverage = _merged_coverage([first.coverage, other.coverage])
            first.unindexed += [replace(u, path=str(store.root / u.path)) for u in other.unindexed]
            for key in ("provisional", "review_due", "distill_candidates", "withheld"):
                mine: list[Listed] = getattr(first, key)
                mine += [replace(x, path=str(store.root / x.path)) for x in getattr(other, key)]
            first.pending_conflicts += other.pending_conflicts
            first.notices += [f"{name} store: {n}" for n in other.notices]
            first.dictionary_skipped += [f"{store.root / 'dictionary.md'} {x}" for x in other.dictionary_skipped]
        return first

    def reindex(self, verify: bool = False, progress: Progress | None = None) -> ReindexResult:
        """Reindex every store; progress counts files across all of them."""
        if not self.scoped:
            return self.stores[self.default].reindex(verify, progress)
        from memory_mcp.truth.results import ReindexResult  # not at import: hooks load this module

        results: list[tuple[str, ReindexResult]] = []
        walked = [0]  # files of the stores already reindexed, as their walks counted them
        for name, store in self.stores.items():
            results.append((name, store.reindex(verify, _offset(progress, walked))))
        first = results[0][1]
        return ReindexResult(
            mode=first.mode, indexed=sum(r.indexed for _, r in results),
            unindexed=sum(r.unindexed for _, r in results), seconds=round(sum(r.seconds for _, r in results), 3),
            drift=[f"{name}: {d}" for name, r in results for d in r.drift],
            note="; ".join(f"{name}: {r.note}" for name, r in results))


def _offset(progress: Progress | None, walked: list[int]) -> Progress | None:
    """One store's (done, total), shifted past the files of the stores reindexed before it; its last
    total is added to `walked` for the next store."""
    if progress is None:
        return None
    before = walked[0]
    report: Callable[[int, int], None] = progress

    def shifted(done: int, total: int) -> None:
        walked[0] = before + total
        report(before + done, before + total)

    return shifted


def _added(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Status counts of two stores added up: numbers, and tallies keyed by state, type or trust."""
    out = dict(a)
    for key, value in b.items():
        if isinstance(value, dict):
            tally = dict(out.get(key) or {})
            for k, n in value.items():
                tally[k] = tally.get(k, 0) + n
            out[key] = tally
        elif isinstance(value, int):
            out[key] = out.get(key, 0) + value
    return out


def _merged_coverage(parts: list[Coverage]) -> Coverage:
    return Coverage(indexed=sum(c.indexed for c in parts), unindexed=sum(c.unindexed for c in parts),
                    changed=sum(c.changed for c in parts), complete=all(c.complete for c in parts),
                    note="; ".join(c.note for c in parts if c.note))
