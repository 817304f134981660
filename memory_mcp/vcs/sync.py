"""Sync a store with its git remote: fetch, merge memory by memory, push.

A merge, not a rebase: a rebase replays each local commit and can stop on every one of them, while a
merge meets each file once and is undone with one `git merge --abort`. Files one memory each make most
merges clean. Where both sides changed one memory, the fields are merged three ways; what cannot be
merged without choosing (both sides rewrote the text, or set one field to different values) is kept
twice: the remote's version stays at its path (other clones already have it), the local version
becomes a new memory whose `conflicts_with` names the other, so `memory_status` lists the pair and
`memory_resolve` settles it like any conflict the gate raised. A memory each side superseded with a
memory of its own stays superseded by the remote's, and the two successors become the open pair. A
memory deleted on one side and edited on the other keeps the edit. Both sides' lines of `dictionary.md` are kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace

from memory_mcp.truth import files, words
from memory_mcp.truth.dictionary import DICTIONARY
from memory_mcp.truth.errors import SyncFailed, SyncOffline, SyncRefused
from memory_mcp.truth.model import Memory, now_iso
from memory_mcp.truth.ulids import new_ulid
from memory_mcp.vcs import incoming, rescue
from memory_mcp.vcs.history import GitFailed, History
from memory_mcp.vcs.merge import Unmergeable, merge_fields, parse_version, union

PUSH_ATTEMPTS = 3
# Ordered from the most specific cause to the least; git's own words are matched in lower case.
_CAUSES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("authentication failed", "could not read username", "could not read password", "permission denied",
      "returned error: 401", "returned error: 403", "terminal prompts disabled", "access denied"),
     "the remote refused our credentials; check that `git fetch` works in the store (SSH key or "
     "credential helper) and run memory-mcp sync again"),
    (("could not resolve host", "connection refused", "network is unreachable", "timed out",
      "failed to connect", "connection reset", "could not connect", "no route to host",
      "connection closed"),
     "the remote could not be reached (network down, or a wrong URL); nothing was changed, try again later"),
    (("does not appear to be a git repository", "repository not found", "not found"),
     "there is no git repository at the remote's URL; check it with `git remote -v`"),
)

_UNREACHABLE = 1  # the place in _CAUSES of "could not be reached"


@dataclass(frozen=True)
class ConflictPair:
    """A memory both sides changed beyond a field merge: kept as `id` (remote) and `copy_id` (local)."""

    id: str
    copy_id: str
    path: str
    copy_path: str


@dataclass
class SyncResult:
    """What one sync did, for people and for tests."""

    remote: str
    branch: str
    pulled: int = 0
    pushed: int = 0
    merged: list[str] = field(default_factory=list)  # memories both sides changed, merged field by field
    conflicts: list[ConflictPair] = field(default_factory=list)
    kept_edits: list[str] = field(default_factory=list)  # deleted on one side, edited on the other: kept
    # (this machine's, the remote's) memories that each superseded one memory: now an open pair
    rival_superseders: list[tuple[str, str]] = field(default_factory=list)
    dictionary_merged: bool = False
    deleted: list[str] = field(default_factory=list)  # memory files here the remote deleted, merged
    rescue: str = ""  # the rescue refs' prefix kept before those deletions (rescue.py)

    def summary(self) -> str:
        """One readable paragraph."""
        where = f"{self.remote}/{self.branch}"
        lines = [f"pulled {self.pulled} commit(s) from {where}, pushed {self.pushed}"]
        if self.merged:
            lines.append(f"{len(self.merged)} memory file(s) changed on both sides were merged field by field")
        if self.kept_edits:
            lines.append(f"{len(self.kept_edits)} memory file(s) deleted on one side and edited on the other "
                         "were kept with the edit: " + ", ".join(self.kept_edits))
        if self.dictionary_merged:
            lines.append("dictionary.md changed on both sides: both sides' lines were kept")
        if self.deleted:
            lines.append(f"the remote deleted {len(self.deleted)} memory file(s) that were here; this machine's "
                         f"state before the sync is kept at {self.rescue}/local (`git checkout "
                         f"{self.rescue}/local -- PATH` in the store brings one back)")
        for mine, theirs in self.rival_superseders:
            lines.append(f"conflict: {mine} (this machine) and {theirs} (the remote) each superseded the same memory; "
                         f"the pair is open: settle it with {words.op('resolve')} (supersede or keep_both)")
        for c in self.conflicts:
            lines.append(f"conflict: {c.id} was changed on both sides; the remote version stays at {c.path}, "
                         f"this machine's version is now {c.copy_id} ({c.copy_path}). Settle the pair with "
                         f"{words.op('resolve')} (supersede or keep_both); {words.op('status')} lists it")
        return "\n".join(lines)


def run(history: History, new_path: Callable[[str, str], str], settle: Callable[[bool], object],
        lock: Callable[[], AbstractContextManager[object]], allow_deletions: bool = False) -> SyncResult:
    """Fetch, merge and push the store's branch.

    Only the merge holds the store's write lock (`lock()`), so agents are not kept waiting on the
    network. `settle(merged)` runs under the lock before the merge (False: hand edits are committed
    first) and after one (True: the index catches up with what arrived). `new_path(title, id)` names
    the files of conflict copies. A remote that deletes more memories than `rescue.too_many` allows
    is refused unless `allow_deletions`. Raises SyncFailed with a sentence saying what to do; the
    store is never left mid-merge and never loses a local commit (rescue refs keep both sides where
    it gives up on a merge)."""
    with lock():
        history.undo_interrupted_sync()  # a sync killed mid-merge: its merge is undone, never a person's
    _check_ready(history)
    remote, branch = target(history)
    result = SyncResult(remote, branch)
    for _ in range(PUSH_ATTEMPTS):
        theirs = _fetch(history, remote, branch)
        with lock():
            _check_ready(history)
            settle(False)
            if theirs is not None:
                result.pulled += history.count_commits(f"HEAD..{theirs}")
                if _merge(history, theirs, result, new_path, allow_deletions):
                    settle(True)
            ahead = history.count_commits(f"{theirs}..HEAD" if theirs else "HEAD")
        if not ahead:
            return result
        if _push(history, remote, branch):
            result.pushed = ahead
            return result
    raise SyncFailed(f"{remote}/{branch} kept moving while we pushed ({PUSH_ATTEMPTS} tries); "
                     "run memory-mcp sync again.")


def _check_ready(history: History) -> None:
    what = history.in_progress()
    if what:
        raise SyncFailed(f"the store's git repository is busy: {what}; then run memory-mcp sync again.")
    if not history.remote_names():
        raise SyncFailed("this store has no git remote; add one with `git remote add origin URL`, "
                         "then run memory-mcp sync again.")
    if history.branch() is None:
        raise SyncFailed("HEAD is detached; check out a branch in the store first.")


def target(history: History) -> tuple[str, str]:
    """The upstream of the current branch, else `origin` (or the only remote) and the same branch name."""
    upstream = history.upstream()
    if upstream is not None:
        return upstream
    names = history.remote_names()
    return ("origin" if "origin" in names else names[0]), str(history.branch())


def _fetch(history: History, remote: str, branch: str) -> str | None:
    """The remote branch's commit after fetching it, or None when the remote has no such branch yet."""
    tracking = f"refs/remotes/{remote}/{branch}"
    try:
        history.fetch_branch(remote, branch, tracking)
    except GitFailed as e:
        if "couldn't find remote ref" in _said(e).lower():
            return None
        raise _failure("fetch from", remote, e) from None
    return history.resolve_commit(tracking)


def _push(history: History, remote: str, branch: str) -> bool:
    """Push HEAD to the remote branch (tracking it from now on). False when the remote moved meanwhile."""
    try:
        history.push_head(remote, branch)
    except GitFailed as e:
        said = _said(e).lower()
        if "rejected" in said or "fetch first" in said or "non-fast-forward" in said:
            return False
        raise _failure("push to", remote, e) from None
    return True


def _said(e: GitFailed) -> str:
    return " ".join(e.stderr.split())


def _failure(verb: str, remote: str, e: GitFailed) -> SyncFailed:
    """The error for a failed fetch or push, its cause told from git's words (SyncOffline when the
    remote could not be reached)."""
    said = _said(e)
    low = said.lower()
    found = next((i for i, (needles, _) in enumerate(_CAUSES) if any(n in low for n in needles)), None)
    cause = _CAUSES[found][1] if found is not None else "git could not do it; the store was left as it was"
    kind = SyncOffline if found == _UNREACHABLE else SyncFailed
    return kind(f"could not {verb} {remote}: {cause}. git said: {said[:300]}")


# ---------------------------------------------------------------------------------------------- merge
def _merge(history: History, theirs: str, result: SyncResult, new_path: Callable[[str, str], str],
           allow_deletions: bool) -> bool:
    """Merge `theirs` into HEAD, deciding every conflicted memory file; commit, or undo it all.

    Returns whether HEAD moved."""
    if history.is_ancestor(theirs, "HEAD"):
        return False
    incoming.check(history, theirs)
    _check_no_overlap(history, theirs)
    _check_deletions(history, theirs, result, allow_deletions)
    if history.is_ancestor("HEAD", theirs):
        try:
            history.merge_fast_forward(theirs)
        except GitFailed as e:
            raise SyncFailed(f"git could not fast-forward the store: {_said(e)[:300]}") from None
        return True
    history.clear_stale_locks()  # a leftover index.lock would stop the merge, or worse, its undoing
    history.mark_sync_merge(theirs)
    try:
        try:
            # --autostash: a person's own uncommitted work in the store does not block the merge.
            # Unrelated histories: two stores started apart (each from the template) and then given one
            # remote share only template files; their memories have distinct names, so they merge.
            history.merge_no_commit(theirs)
        except GitFailed as e:
            if not history.merging():
                raise SyncFailed(f"git could not start the merge: {_said(e)[:300]}") from None
        ids = _settle_conflicts(history, result, new_path)
        _commit_merge(history, result, ids)
        history.unmark_sync_merge()
        return True
    except BaseException as e:
        _undo(history, e)
        if isinstance(e, Unmergeable):
            kept = rescue.keep(history, history.resolve_commit("HEAD"), theirs, "could not merge")
            raise SyncFailed(f"{e}; the merge was undone and nothing changed (both sides are kept at {kept}/local "
                             f"and {kept}/remote). Merge by hand with `git pull --no-rebase` in the store, then "
                             "run memory-mcp sync again.") from None
        if isinstance(e, GitFailed):
            raise SyncFailed(f"the merge failed and was undone: {_said(e)[:300]}") from None
        raise


def _undo(history: History, cause: BaseException) -> None:
    """Undo the merge sync started; when git cannot (a lock held), the marker stays for the next call."""
    try:
        if history.merging():
            history.abort_merge()
        history.unmark_sync_merge()
    except GitFailed as e:
        raise SyncFailed(f"the merge failed ({str(cause)[:200] or type(cause).__name__}) and could not be undone "
                         f"yet: {_said(e)[:200]}. The next memory-mcp call undoes it once git is free.") from None


def _check_deletions(history: History, theirs: str, result: SyncResult, allow_deletions: bool) -> None:
    """Keep rescue refs before a merge that deletes memory files here, and refuse one that deletes
    too many (`rescue.too_many`) unless the person allowed it."""
    deleted = history.deleted_memories(theirs)
    if not deleted:
        return
    result.rescue = rescue.keep(history, history.resolve_commit("HEAD"), theirs, "the remote deletes memories")
    held = len(history.memory_files("HEAD"))
    if not allow_deletions and rescue.too_many(len(deleted), held):
        raise SyncRefused(f"{result.remote}/{result.branch} deletes {len(deleted)} of the {held} memory files here "
                         f"(an emptied or force-pushed branch?); nothing was merged and both sides are kept at "
                         f"{result.rescue}/local and {result.rescue}/remote. If the deletions are meant, run "
                         "`memory-mcp sync --allow-deletions`.")
    result.deleted = deleted


def _check_no_overlap(history: History, theirs: str) -> None:
    """Refuse to merge over uncommitted changes to files the remote changed too.

    By now every hand edit that parses is committed; what is left (a memory file mid-edit that does
    not parse yet, a README) would go through --autostash, and where the remote changed the same
    file, popping the stash writes conflict markers into the person's file and leaves it unmerged."""
    both = history.changed(history.incoming_paths(theirs))
    if both:
        shown = ", ".join(both[:10]) + (f" and {len(both) - 10} more" if len(both) > 10 else "")
        raise SyncFailed(f"{shown}: changed here but not committed, and changed on the remote too (a memory "
                         "file is committed as soon as it parses); finish the edit or undo it, then run "
                         "memory-mcp sync again. Nothing was merged.")


def _blob(history: History, sha: str | None) -> bytes | None:
    return None if sha is None else history.blob(sha)


def _settle_conflicts(history: History, result: SyncResult, new_path: Callable[[str, str], str]) -> list[str]:
    """Resolve every conflicted path in the work tree and the git index; returns the memory ids involved."""
    ids: list[str] = []
    unmerged = history.unmerged()
    moved = _renamed_apart(history, unmerged)
    # Each side renamed these memories (old paths, and this machine's new ones): each lives on once,
    # at the remote's new path, merged there. Removed first, so a conflict copy may take a freed name.
    gone = {mine for mine, _, _ in moved.values()} | {
        p for p, st in unmerged.items() if not {2, 3} & st.keys() and _is_memory(p)}
    for path in sorted(gone):
        (history.root / path).unlink(missing_ok=True)
        history.remove_cached(path)
    for path, stages in sorted(unmerged.items()):
        base, ours, theirs = (_blob(history, stages.get(n)) for n in (1, 2, 3))
        target = history.root / path
        if path in gone:
            continue
        if path == DICTIONARY:
            files.atomic_write_bytes(target, union(history, base or b"", ours or b"", theirs or b""))
            result.dictionary_merged = True
        elif not _is_memory(path):
            raise Unmergeable(f"{path} changed on both sides and is not a memory file")
        elif path in moved:
            _, mine, was = moved[path]
            remote = history.blob("MERGE_HEAD", path) or b""
            ids += _merge_memory(history, path, was, mine, remote, result, new_path)
        elif ours is None or theirs is None:
            kept = ours if ours is not None else theirs
            files.atomic_write_bytes(target, kept or b"")
            result.kept_edits.append(path)
            with contextlib.suppress(Unmergeable):
                ids.append(parse_version(kept or b"", path).id)
        else:
            ids += _merge_memory(history, path, base, ours, theirs, result, new_path)
        history.add(path)
    return ids


def _is_memory(path: str) -> bool:
    return path.startswith("memories/") and path.endswith(".md")


def _renamed_apart(history: History, unmerged: dict[str, dict[int, str]]) -> dict[str, tuple[str, bytes, bytes | None]]:
    """Memories each side renamed to a different path (git's rename/rename): the remote's new path ->
    (this machine's new path, this machine's version, the old version). Told apart by the id in the
    files. The versions come from the two commits: for a rename/rename git stages its own attempt at
    merging the texts, conflict markers and all."""
    def ids(stage: int, rev: str) -> dict[str, tuple[str, bytes]]:
        out: dict[str, tuple[str, bytes]] = {}
        for path, stages in unmerged.items():
            if set(stages) == {stage} and _is_memory(path):
                data = _blob(history, stages[stage]) if rev == "" else history.blob(rev, path)
                with contextlib.suppress(Unmergeable):
                    out[parse_version(data or b"", path).id] = (path, data or b"")
        return out

    base, mine, theirs = ids(1, ""), ids(2, "HEAD"), ids(3, "MERGE_HEAD")
    return {theirs[i][0]: (mine[i][0], mine[i][1], base[i][1] if i in base else None)
            for i in theirs.keys() & mine.keys()}


def _merge_memory(history: History, path: str, base: bytes | None, ours: bytes, theirs: bytes,
                  result: SyncResult, new_path: Callable[[str, str], str]) -> list[str]:
    o, t = parse_version(ours, path), parse_version(theirs, path)
    b = parse_version(base, path) if base is not None else None
    rival = _rival_superseder(history, b, o, t)
    if rival is not None:
        # Both sides superseded this memory. It stays superseded by the remote's successor (other clones
        # have that already); the two successors are the real disagreement, so ours is paired with it.
        o = replace(o, superseded_by=t.superseded_by)
    merged = merge_fields(history, b, o, t)
    if merged is not None:
        files.atomic_write(history.root / path, files.serialize(merged))
        result.merged.append(path)
        if rival is None:
            return [merged.id]
        rel, successor = rival
        successor.conflicts_with = [*successor.conflicts_with, str(t.superseded_by)]
        files.atomic_write(history.root / rel, files.serialize(successor))
        history.add(rel)
        result.rival_superseders.append((successor.id, str(t.superseded_by)))
        return [merged.id, successor.id]
    # Both sides changed what only a person can choose between: keep both, linked as an open conflict.
    files.atomic_write_bytes(history.root / path, theirs)
    copy = replace(o, id=new_ulid(), conflicts_with=[*o.conflicts_with, t.id], supersedes=[],
                   superseded_by=None, created=now_iso(), extra=dict(o.extra))
    copy_path = new_path(copy.title, copy.id)
    files.atomic_write(history.root / copy_path, files.serialize(copy))
    history.add(copy_path)
    result.conflicts.append(ConflictPair(t.id, copy.id, path, copy_path))
    return [t.id, copy.id]


def _rival_superseder(history: History, base: Memory | None, ours: Memory, theirs: Memory
                      ) -> tuple[str, Memory] | None:
    """When each side superseded the memory with a memory of its own: this machine's successor and its
    path (a file only this side has, so not conflicted), else None."""
    was = base.superseded_by if base else None
    if not (ours.superseded_by and theirs.superseded_by) or ours.superseded_by in (theirs.superseded_by, was) \
            or theirs.superseded_by == was:
        return None
    # A ULID is letters and digits only, so it needs no escaping in the pattern.
    rels = history.grep_paths(f"^id: {ours.superseded_by}$", "HEAD", "memories")
    if len(rels) != 1:
        return None
    try:
        successor = parse_version((history.root / rels[0]).read_bytes(), rels[0])
    except (OSError, Unmergeable):
        return None
    return (rels[0], successor) if successor.id == ours.superseded_by else None


def _commit_merge(history: History, result: SyncResult, ids: list[str]) -> None:
    left = history.unmerged()
    if left:
        raise Unmergeable(f"{', '.join(sorted(left))} still conflicted")
    subject = f"sync: merge {result.remote}/{result.branch}"
    lines = [f"merged field by field: {p}" for p in result.merged]
    lines += [f"conflict kept as a pair: {c.path} (remote) / {c.copy_path} (this machine)" for c in result.conflicts]
    lines += [f"deleted on one side, edit kept: {p}" for p in result.kept_edits]
    if result.dictionary_merged:
        lines.append("dictionary.md: lines of both sides kept")
    trailers = "".join(f"\nMemory-Id: {i}" for i in dict.fromkeys(ids))
    message = subject + ("\n\n" + "\n".join(lines) if lines else "") + ("\n" + trailers if trailers else "")
    history.commit_merge(message)

