"""Scopes: a project's own store and the user's global store, served together by one server.

Reads see both (the project's memories first); a write goes to the store its `scope` names (the
project's by default). Ids are ULIDs, unique across stores, so a call by id finds its store by
asking each in turn. Each store stays a whole `Store`: this module only routes and merges, so the
rules about files, git and the index live in store.py alone.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import budget, ranking
from .errors import BeforeHistory, InvalidArgument
from .layout import default_root
from .options import Recall
from .results import Coverage, Hit, Listed, RecallResult, ReindexResult, StatusResult

if TYPE_CHECKING:  # the store (git, SQLite, YAML, stemmers) loads on the first call, not at server start
    from .options import Progress
    from .store import Store

PROJECT = "project"
USER = "user"
USER_ROOT_ENV = "MEMORY_MCP_USER_ROOT"
HOME_ENV = "MEMORY_MCP_HOME"
PROJECT_FOLDER = ".memory"  # a project's own store, inside its repository, when it has one
# Commands that may be given a store path that does not exist yet: they are how one is made.
CREATES_NAMED = frozenset({"init", "install"})
# Commands that never open a named store (the demo makes its own temporary one).
NO_NAMED_STORE = frozenset({"demo"})


def memory_home() -> Path:
    """The folder the automatically chosen stores live in: $MEMORY_MCP_HOME, else ~/.memory-mcp."""
    env = os.environ.get(HOME_ENV)
    return (Path(env).expanduser() if env else Path.home() / ".memory-mcp").resolve()


def git_root(folder: Path) -> Path | None:
    """The work tree root of the git repository holding `folder`, without running git (hooks must
    start fast). A linked worktree (`.git` is a file) maps to its main work tree, so every worktree
    of one repository shares one project store, as Claude Code's auto memory does."""
    folder = folder.expanduser().resolve()
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return candidate
        if dot_git.is_file():
            return _main_worktree(candidate, dot_git)
    return None


def _main_worktree(candidate: Path, dot_git: Path) -> Path:
    try:
        line = dot_git.read_text(encoding="utf-8").strip()
        git_dir = (candidate / line.removeprefix("gitdir:").strip()).resolve()
        common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except (OSError, ValueError):
        return candidate  # a submodule or an unusual layout: the folder itself is the project
    return common.parent if common.name == ".git" else candidate


def project_root(folder: Path) -> Path:
    """The project a folder belongs to: its git root, else the folder itself (a folder that is not
    a repository is still a project of its own)."""
    return git_root(folder) or folder.expanduser().resolve()


def current_project() -> Path:
    """The project a `file` argument is relative to: Claude Code's $CLAUDE_PROJECT_DIR, else the
    project of the folder the process runs in."""
    return project_root(Path(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()))


def project_store(folder: Path) -> Path:
    """The store of the project holding `folder`: its `.memory/` when the project has one, else
    `<memory home>/projects/<name>-<hash8>`, the name so a person can tell which project it is, the
    hash of the root's path so two projects with one name do not share a store."""
    root = project_root(folder)
    if (root / PROJECT_FOLDER).is_dir():
        return root / PROJECT_FOLDER
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-.") or "root"
    digest = hashlib.sha256(str(root).encode("utf-8")).hexdigest()[:8]
    return memory_home() / "projects" / f"{name[:40]}-{digest}"


def project_scopes(folder: Path) -> ScopeConfig:
    """Both stores for a session in `folder`, chosen with no flags: the project's and the user's."""
    return ScopeConfig(project_store(folder), user_root())


def check_named_store(store: Path | None, command: str, user_option: str | bool | None = False) -> None:
    """Refuse a store path a person named that does not exist (--store, else $MEMORY_MCP_ROOT; the
    user store's --user-store PATH, else $MEMORY_MCP_USER_ROOT), for every command but those that
    create stores: a typo must not quietly start an empty store. `user_option` is the command's
    --user-store value (None: not given); False for a command that serves no user store."""
    if command in NO_NAMED_STORE and store is not None:
        raise InvalidArgument(f"`{command}` runs on a new temporary store only, so it never writes into a real "
                              "one; run it without --store.")
    if command in CREATES_NAMED | NO_NAMED_STORE:
        return
    for named, by in _named_stores(store, user_option):
        if not named.expanduser().exists():
            shown = named.expanduser().resolve()
            raise InvalidArgument(f"no memory store at {shown} (named by {by}); create it with "
                                  f"`memory-mcp init {shown}`, or name an existing store.")


def _named_stores(store: Path | None, user_option: str | bool | None) -> list[tuple[Path, str]]:
    """The store paths a person named, each with what named it."""
    named: list[tuple[Path, str]] = []
    env = os.environ.get("MEMORY_MCP_ROOT")
    if store is not None or env:
        named.append((store, "--store") if store is not None else (Path(str(env)), "MEMORY_MCP_ROOT"))
    user_env = os.environ.get(USER_ROOT_ENV)
    user: tuple[Path, str] | None = None
    if isinstance(user_option, str):
        user = (Path(user_option), "--user-store")
    elif user_env and user_option is not False:
        user = (Path(user_env), USER_ROOT_ENV)
    # The default user store is created on its own even when spelled out: `install` writes its path
    # into the client's registration, and the server must start on a fresh machine.
    if user is not None and user[0].expanduser().resolve() != _default_user_root():
        named.append(user)
    return named


def _default_user_root() -> Path:
    return (Path.home() / ".memory-mcp" / "default").resolve()


def user_root(path: Path | None = None) -> Path:
    """The user's global store: `path`, else $MEMORY_MCP_USER_ROOT, else ~/.memory-mcp/default
    (the same folder a single-store server uses when nothing else is configured)."""
    if path is not None:
        return path.expanduser().resolve()
    env = os.environ.get(USER_ROOT_ENV)
    # Resolved like the project store is, or the same-folder check misses a HOME behind a symlink.
    return Path(env).expanduser().resolve() if env else _default_user_root()


def configured_user_root(option: str | bool | None) -> Path | None:
    """The user store a command was given: `--user-store PATH`, a bare `--user-store` (True: the
    default user store) or, without the option, $MEMORY_MCP_USER_ROOT. None: one store, no scopes."""
    if option is None:
        return user_root() if os.environ.get(USER_ROOT_ENV) else None
    return user_root(None if option is True else Path(str(option)))


@dataclass(frozen=True)
class ScopeConfig:
    """Where the stores are. `user` None means one store and no scopes."""

    project: Path | None = None
    user: Path | None = None

    def check(self) -> None:
        """Refuse a project store that is the user store: one folder cannot be both scopes."""
        if self.user is not None and (self.project or default_root()).expanduser().resolve() == self.user:
            raise InvalidArgument(
                f"the project store and the user store are the same folder ({self.user}); "
                "give --store a folder of the project's own (e.g. PROJECT/.memory).")


def merged_digest(lists: dict[str, list[Hit]]) -> list[Hit]:
    """One digest from each store's (scope name -> its digest, the project's first): preferences and
    decisions first (the project's before the user's within a type), then everything else newest
    first, each hit named by its scope; one store's digest as it is."""
    if len(lists) == 1:
        return next(iter(lists.values()))
    every = [replace(h, scope=name) for name, hits in lists.items() for h in hits]
    first = sorted((h for h in every if h.type in ranking.DIGEST_FIRST), key=lambda h: ranking.DIGEST_FIRST.index(h.type))
    rest = sorted((h for h in every if h.type not in ranking.DIGEST_FIRST), key=lambda h: h.updated or "", reverse=True)
    return first + rest


class Scopes:
    """The stores one server serves, in read order (the project's first)."""

    def __init__(self, stores: dict[str, Store]) -> None:
        self.stores = stores
        self.default = next(iter(stores))

    @classmethod
    def open(cls, config: ScopeConfig, watch: bool | None = False) -> Scopes:
        """Open (or create) the stores of `config`; `watch` keeps a file watcher on each (None:
        $MEMORY_MCP_WATCH decides)."""
        from .store import Store

        config.check()
        project = Store.open(config.project, watch=watch)
        if config.user is None:
            return cls({PROJECT: project})
        return cls({PROJECT: project, USER: Store.open(config.user, watch=watch)})

    @property
    def scoped(self) -> bool:
        return len(self.stores) > 1

    def close(self) -> None:
        for store in self.stores.values():
            store.close()

    def pause(self) -> None:
        """Take every store's write lock and keep it: a call in progress ends first, and no other
        starts. For a process about to exit, which releases the locks by ending."""
        for store in self.stores.values():
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

    def scope_of(self, store: Store) -> str:
        return next(name for name, s in self.stores.items() if s is store)

    # ------------------------------------------------------------------ reads across scopes
    def recall(self, scope: str | None, opts: Recall) -> RecallResult:
        """Recall from the named store, or from all of them (the project's hits first, then the
        user's, within one `limit` and one `max_tokens` budget). Hits name their scope."""
        if scope is not None or not self.scoped:
            store = self.store(scope)
            result = store.recall(opts)
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
                part = self._tagged(store.recall(replace(opts, limit=left, max_tokens=tokens_left if opts.max_tokens
                                                         else 0)), name)
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
        for name, store in self.stores.items():
            if store is self.stores[self.default]:
                continue
            other = store.status()
            first.store += f" (project); {other.store} ({name})"
            first.counts = _added(first.counts, other.counts)
            first.coverage = _merged_coverage([first.coverage, other.coverage])
            first.unindexed += [replace(u, path=str(store.root / u.path)) for u in other.unindexed]
            for key in ("provisional", "review_due", "distill_candidates", "withheld"):
                mine: list[Listed] = getattr(first, key)
                mine += [replace(x, path=str(store.root / x.path)) for x in getattr(other, key)]
            first.pending_conflicts += other.pending_conflicts
            first.dictionary_skipped += [f"{store.root / 'dictionary.md'} {x}" for x in other.dictionary_skipped]
        return first

    def reindex(self, verify: bool = False, progress: Progress | None = None) -> ReindexResult:
        """Reindex every store; progress counts files across all of them."""
        if not self.scoped:
            return self.stores[self.default].reindex(verify, progress)
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
