"""A project's team store: made or attached in one command (`team init`), joined by a teammate
(`team join`), and given memories one at a time (`share`). Where things are and the person's record
of what they joined and accept: `truth/teams.py`.

The team store is a store of its own with the team's remote, cloned under the memory home; the code
repository only commits the pointer file naming that remote. A memory reaches it only when the person
moves one there (`share`, one commit in each store) or a call names `scope: "team"`.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from memory_mcp.app import consent
from memory_mcp.app.access import Loaded, load, new_path, write
from memory_mcp.app.session import Session
from memory_mcp.app.storeroot import init_store
from memory_mcp.truth import projects, roots, teams
from memory_mcp.truth.errors import InvalidArgument, InvalidStore, NotFound, SyncFailed
from memory_mcp.truth.layout import is_store
from memory_mcp.truth.options import Share
from memory_mcp.truth.results import ShareResult
from memory_mcp.vcs import remote as clone
from memory_mcp.vcs.history import History
from memory_mcp.vcs.repo import GitFailed


@dataclass
class TeamDone:
    """What `team init` or `team join` did."""

    store: Path
    remote: str
    how: str  # made (new, pushed), attached (cloned from the remote), joined, or already here
    pointer: Path
    wrote_pointer: bool = False
    held: dict[str, int] = field(default_factory=dict)  # the memories it holds, by git author


def init(folder: Path, url: str) -> TeamDone:
    """Make the team store of the project holding `folder` at the remote `url` (an empty repository
    on the team's git host: a new store is pushed to it), or attach the store `url` already holds;
    write the pointer file into the project and count the person as joined."""
    located = roots.locate(folder)
    url = teams.check_url(url.strip(), located.project, "--remote")
    pointer = located.project / teams.POINTER
    named = teams.read_pointer(located.project)  # a broken pointer file is the person's to mend, not overwritten
    if named is not None and named != url:
        raise InvalidArgument(f"{pointer} already names the team store {named}; `memory-mcp team join` joins it, or "
                              "edit the file yourself to change it.")
    store = teams.store_path(url, located.project, roots.memory_home())
    if is_store(store):
        how = _check_remote(store, url)
    elif _has_branches(url):
        _clone(url, store)
        how = "attached"
    else:
        init_store(store)
        History(store).set_origin(url)
        how = "made"
    if how == "made" or not _has_branches(url):  # a push an earlier `team init` could not make is made now
        _push(store)
    if named is None:
        tmp = pointer.with_name(f".{teams.POINTER}.{os.getpid()}.tmp")
        tmp.write_text(teams.pointer_text(url), encoding="utf-8")
        os.replace(tmp, pointer)
    teams.record_join(roots.project_key(located), url, store)
    return TeamDone(store, url, how, pointer, named is None, consent.held(store))


def join(folder: Path) -> TeamDone:
    """Clone the team store the pointer file of the project holding `folder` names (when this machine
    has no clone of it yet) and record that the person joined it for this project. The caller asked."""
    located = roots.locate(folder)
    team = roots.team(located)
    if team is None:
        raise InvalidArgument(f"{located.project} has no {teams.POINTER}; `memory-mcp team init --remote URL` makes "
                              "the project's team store and that file.")
    if team.error or team.store is None:
        from memory_mcp.truth.errors import InvalidPointer

        raise InvalidPointer(team.error or f"{team.pointer} names no remote")
    how = _check_remote(team.store, team.remote) if is_store(team.store) else _clone(team.remote, team.store)
    teams.record_join(roots.project_key(located), team.remote, team.store)
    return TeamDone(team.store, team.remote, how, team.pointer, held=consent.held(team.store))


def pending(folder: Path) -> teams.Team | None:
    """The team store the project holding `folder` points at (for the question `team join` asks)."""
    return roots.team(roots.locate(folder, record=False))


def _has_branches(url: str) -> bool:
    try:
        return clone.has_branches(url)
    except GitFailed as e:
        raise SyncFailed(f"cannot reach {url}: {' '.join(e.stderr.split())[:300]}. Check the URL and your access "
                         "(an empty repository on the git host is enough), then run it again.") from None


def _clone(url: str, store: Path) -> str:
    """Clone the team store at `url` to `store` (nothing is left there when that fails)."""
    if store.exists() and any(store.iterdir()):
        raise InvalidStore(f"{store} exists and is not a memory store; move it away, then run it again.")
    store.parent.mkdir(parents=True, exist_ok=True)
    try:
        clone.clone(url, store)
    except GitFailed as e:
        shutil.rmtree(store, ignore_errors=True)
        raise SyncFailed(f"cannot clone {url}: {' '.join(e.stderr.split())[:300]}. Nothing was kept.") from None
    if not is_store(store):
        shutil.rmtree(store, ignore_errors=True)
        raise InvalidStore(f"{url} holds no memory store (no memories/ folder); give the URL of the team store, or of "
                           "an empty repository for a new one. Nothing was kept.")
    return "joined"


def _push(store: Path) -> None:
    """Publish the store at `store` to its remote (a sync: nothing there yet to merge)."""
    from memory_mcp.app.store import Store

    opened = Store.open(store, create=False)
    try:
        opened.sync()
    finally:
        opened.close()


def _check_remote(store: Path, url: str) -> str:
    """Refuse a clone already here whose remote is another repository than `url`."""
    have = consent.remote_url(store)
    if projects.remote_key(have, store) != projects.remote_key(url, store):
        raise InvalidStore(f"{store} is a clone of {have or 'no remote'}, not of {url}; move it away, then run it again.")
    return "already here"


# ------------------------------------------------------------------ share
def share(source: Session, target: Session, opts: Share) -> ShareResult:
    """Move memory `opts.id` from the store of `source` into the team store of `target`, as it is
    (same id): one commit adds it to the team store, then one takes it out of `source`. A credential
    written into it by hand is refused before anything is written."""
    with source.call(write=True) as index:
        loaded = load(source, index, opts.id)
        mem = loaded.mem
        with target.call(write=True) as team_index:
            if team_index.get(mem.id) is not None:
                raise InvalidArgument(f"the team store already holds {mem.id}.")
            rel = loaded.rel if not (target.root / loaded.rel).exists() else new_path(target.root, mem.title, mem.id)
            write(target, team_index, [Loaded(mem, rel)])
            team_commit = target.history.commit_paths([rel], f"share: {mem.title}", [mem.id]) or ""
        source.history.check_idle()
        (source.root / loaded.rel).unlink()
        index.remove_path(loaded.rel)
        own_commit = source.history.commit_paths([loaded.rel], f"share: moved to the team store: {mem.title}",
                                                 [mem.id]) or ""
    return ShareResult(id=mem.id, title=mem.title, path=rel, team_commit=team_commit, own_commit=own_commit,
                       message=f"moved {mem.id} ({mem.title}) to the team store as {rel}; its next sync publishes it")


def check_shareable(opts: Share, joined: bool, in_team: bool, found: bool) -> None:
    """Refuse a share to anything but the team store, with none joined, of a memory no store holds,
    or of one already there."""
    if opts.to != "team":
        raise InvalidArgument(f"a memory is shared to the team store (to: team), not to {opts.to[:40]!r}.")
    if not joined:
        raise InvalidArgument("this project has no team store joined on this machine: `memory-mcp team init --remote "
                              "URL` makes one, `memory-mcp team join` joins the one its .memory.toml names.")
    if in_team:
        raise InvalidArgument(f"{opts.id} is in the team store already.")
    if not found:
        raise NotFound(f"no memory with id {opts.id} in your stores; use memory_recall to find the right id.")
