"""Git: one commit per write, only the memory files, with the person's identity when they have one.

`History` is the only thing in memory-mcp that runs git (its sync half, fetch / merge / push, is in
remote.py; its reading half, log / status / files of a commit, in readops.py; the scratch index and
the objects a commit is built from, in staging.py), each as a `git` process of its own. Callers catch
`GitFailed` (repo.py), re-exported here: a failed git command is known without a git library."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from memory_mcp.truth.errors import RepoBusy
from memory_mcp.truth.layout import MEMORIES
from memory_mcp.vcs import lockfiles as gitlocks
from memory_mcp.vcs import packing
from memory_mcp.vcs.objects import (
    Authored,
    Entry,
    ObjectWriter,
    Snapshot,
    Unsupported,
    author_date,
    commit_body,
)
from memory_mcp.vcs.objects import subject as commit_subject
from memory_mcp.vcs.readops import ReadOps
from memory_mcp.vcs.remote import RemoteOps
from memory_mcp.vcs.repo import GitFailed, git_dirs, head_ref
from memory_mcp.vcs.staging import BULK_STAGE, ScratchBase, StagingOps

__all__ = ["GitFailed", "HeadKeptMoving", "History"]

FALLBACK_NAME = "memory-mcp"
FALLBACK_EMAIL = "memory-mcp@localhost"
# Files git keeps in its directory while an operation waits for the person; a commit now would land in
# the middle of their merge or rebase.
_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge is in progress: finish it with `git commit` or undo it with `git merge --abort`"),
    ("rebase-merge", "a rebase is in progress: `git rebase --continue` or `git rebase --abort`"),
    ("rebase-apply", "a rebase or `git am` is in progress: `git rebase --continue` or `git rebase --abort`"),
    ("CHERRY_PICK_HEAD", "a cherry-pick is in progress: `git cherry-pick --continue` or `--abort`"),
    ("REVERT_HEAD", "a revert is in progress: `git revert --continue` or `--abort`"),
    ("BISECT_LOG", "a bisect is in progress: end it with `git bisect reset`"),
)
COMMIT_ATTEMPTS = 5
SCRATCH_INDEX = "memory-mcp.index"


class HeadKeptMoving(GitFailed):
    """Every attempt lost the race for HEAD to someone else's commits: the memory file is written and
    the next call commits it. A GitFailed, so callers that tolerate a failed commit still do."""


class History(StagingOps, RemoteOps, ReadOps):
    """The store's git repository: the only object that runs git (a `git` process per command),
    always with `_env` on top of the process's environment."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_dir, self.common_dir = git_dirs(root)
        # Paths are file names, never patterns: `notes [1].md` must not also match `notes 1.md`.
        # git's messages in English whatever the person's locale: a held lock, a rejected push and
        # the network errors sync explains are recognised by their English text.
        # No optional locks: `git status` would otherwise refresh the person's index under index.lock,
        # and a `git mv` or `git add` of theirs in that moment fails (index.lock exists).
        self._base_env = {"GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0",
                          **self._foreign_store_env()}
        self._settings_seen: tuple[object, dict[str, str]] | None = None  # (what it depends on, `_settings`)
        # The index the commits' trees are written from; the person's own index only gets the paths.
        self._scratch = self.git_dir / SCRATCH_INDEX
        self._base: ScratchBase | None = None
        # The commit this object last made (or read HEAD as) and the trees of it read so far.
        self._tip: Snapshot | None = None
        self._writer: ObjectWriter | None = None
        # The commits made here from Python since the app last took them (`provenance.own_commits`).
        self.authored: list[Authored] = []
        self._ident: tuple[object, tuple[str, str] | None] | None = None  # (what it depends on, identity)
        self._oid_hex: int | None = None
        self.deferred = False  # a commit was put off: a person's git held the index lock
        self._packer: subprocess.Popen[bytes] | None = None
        self._split_logged = False  # the switch to a split index is said once a process
        self._keeps: list[Path] = []  # .keep files of the packs a commit in progress wrote

    @staticmethod
    def init(root: Path) -> History:
        done = subprocess.run(["git", "init", "-q", "--initial-branch=main", str(root)], capture_output=True,
                              stdin=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"})
        if done.returncode != 0:
            raise GitFailed(["git", "init", str(root)], done.returncode, done.stderr)
        return History(root)

    @property
    def _env(self) -> dict[str, str]:
        """What every git of ours runs with on top of the process's environment: `_base_env`, and a
        fallback identity only for what the person has not configured."""
        env = dict(self._base_env)
        settings = self._settings()
        if not (os.environ.get("GIT_AUTHOR_NAME") or settings.get("user.name")):
            env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = FALLBACK_NAME
        if not (os.environ.get("GIT_AUTHOR_EMAIL") or settings.get("user.email")):
            env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = FALLBACK_EMAIL
        return env

    def _foreign_store_env(self) -> dict[str, str]:
        """Config for a store another user owns and this one cannot write (a shared folder): git
        refuses such a repository (safe.directory) and `status` failed. Every git call on it is a read
        (nothing in it can be written), so it is declared safe for our calls only, as command-line
        config (the person's own config is never changed), with what lets a repository's owner run a
        command as its reader switched off: the fsmonitor hook and the clean filters `git status`
        runs on files whose stat changed."""
        if not hasattr(os, "geteuid"):
            return {}
        try:
            owner = os.stat(self.git_dir).st_uid
        except OSError:
            return {}
        if owner == os.geteuid() or os.access(self.git_dir, os.W_OK):
            return {}
        pairs = [("safe.directory", str(self.root.resolve())), ("core.fsmonitor", "false")]
        # The repository's own config file, read as a file: git refuses the repository itself here.
        said = subprocess.run(["git", "config", "--file", str(self.common_dir / "config"), "-z", "--name-only",
                               "--get-regexp", r"^filter\."], capture_output=True, stdin=subprocess.DEVNULL)
        names = {key.split(b".", 1)[1].rsplit(b".", 1)[0] for key in said.stdout.split(b"\0") if key.count(b".") >= 2}
        for name in sorted(n.decode("utf-8", "replace") for n in names):
            pairs += [(f"filter.{name}.clean", ""), (f"filter.{name}.process", "")]
        start = int(os.environ.get("GIT_CONFIG_COUNT") or 0)  # after any the person's environment sets
        env = {"GIT_CONFIG_COUNT": str(start + len(pairs))}
        for n, (key, value) in enumerate(pairs, start):
            env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"] = key, value
        return env

    def _process_env(self, identity: bool = True) -> dict[str, str]:
        """The whole environment of a git this object starts itself: the process's, with ours on top
        (without the fallback identity, which needs `_settings`, unless `identity`) and without
        LANGUAGE (gettext ignores it under LC_ALL=C; dropped so nothing can pick a language back up,
        e.g. a git built with a gettext that honours LANGUAGE there)."""
        env = {**os.environ, **(self._env if identity else self._base_env)}
        env.pop("LANGUAGE", None)
        return env

    def _git_locks(self) -> list[Path]:
        """The lock files a commit takes: the index, our scratch index and the copy of the person's
        index it stages into (`gitlocks.IndexStage`), HEAD, the branch's ref and packed-refs."""
        git_dir, common = self.git_dir, self.common_dir
        locks = [git_dir / "index.lock", git_dir / f"{SCRATCH_INDEX}.lock", git_dir / f"{gitlocks.STAGE_INDEX}.lock",
                 git_dir / "HEAD.lock", common / "packed-refs.lock"]
        ref = head_ref(git_dir)
        if ref is not None:
            locks.append(common / f"{ref}.lock")
        return locks

    def clear_stale_locks(self) -> None:
        """Remove git lock files a crash left behind (a commit killed midway leaves index.lock, HEAD.lock
        or the branch's ref lock); never one a live git process in the store holds."""
        gitlocks.clear_stale(self._git_locks(), self.root.resolve())

    def in_progress(self) -> str | None:
        """Why a memory commit must wait now (a merge, rebase, cherry-pick, revert or bisect the person
        has under way, or a detached HEAD), or None when the store is on a branch and idle."""
        git_dir = self.git_dir
        for name, what in _IN_PROGRESS:
            if (git_dir / name).exists():
                return what
        if head_ref(git_dir) is None:
            return ("HEAD is detached (no branch checked out), so commits would be left behind: "
                    "check out a branch, e.g. `git switch main`")
        return None

    def check_idle(self) -> None:
        """Raise RepoBusy when a commit must wait (see `in_progress`)."""
        reason = self.in_progress()
        if reason:
            raise RepoBusy(f"the store's git repository is busy: {reason}. Nothing was written; "
                           "call again once the repository is back on a branch.")

    def commit_paths(self, paths: list[str], subject: str, memory_ids: list[str], body: str = "") -> str | None:
        """Commit exactly `paths` (added, changed or deleted) and nothing else the person has staged.

        Returns the commit sha, or None when none of the paths differ from HEAD.

        Plumbing rather than `git commit --only`, which stats every file of the work tree on each
        write: the paths are staged in the person's index as `git add` would, and the commit's tree is
        the last commit's with new trees only along the changed paths, written in Python
        (objects.py); where only git's index gives the right tree (attributes, line-ending
        conversion, a link or an executable) it is written from a scratch index kept in step with HEAD.
        HEAD moves by compare-and-swap, so a commit made meanwhile by someone else is never lost (the
        tree is rebuilt on top of it)."""
        if not paths:
            return None
        self.check_idle()
        self.clear_stale_locks()
        trailers = "".join(f"\nMemory-Id: {i}" for i in dict.fromkeys(memory_ids))
        message = subject + ("\n\n" + body.strip() if body.strip() else "") + ("\n" + trailers if trailers else "")
        try:
            commit = self._stage_and_commit(paths, message, subject)
        finally:
            # The commit names the packed blobs now (or failed): a repack may take them in.
            for keep in self._keeps:
                keep.unlink(missing_ok=True)
            self._keeps = []
        if commit is not None:
            self._pack_now_and_then()
        return commit

    def _stage_and_commit(self, paths: list[str], message: str, subject: str) -> str | None:
        """`commit_paths`: stage `paths` in a copy of the person's index, commit, and let the copy
        replace their index, holding their index lock only for that rename (`gitlocks.IndexStage`)."""
        if gitlocks.index_held(self.git_dir):
            # A person's git holds their index (a `git commit` waiting for its editor). The files are
            # written; the commit follows on a later call, and nothing of ours is staged meanwhile
            # for their commit to sweep up under their message.
            self.deferred = True
            return None
        stage = gitlocks.IndexStage(self.git_dir)
        commit = None
        staged = False
        try:
            commit = self._commit_staged(paths, message, subject, stage.copy)
            entries: list[bytes] = []  # read from the copy once, the first time they are needed

            def restage(fresh: Path) -> None:
                entries[:] = entries or [self._staged(paths, stage.copy)]
                self._git("update-index", "-z", "--index-info", data=entries[0], index=fresh)

            # Published with no commit too: a process killed after moving HEAD and before replacing
            # the person's index left HEAD holding files their index lacks (`git status` said D and
            # ?? for each); the next call's recovery finds HEAD's tree already right and only the
            # index to mend.
            stage.take(restage)
            staged = True
            return commit
        except gitlocks.IndexHeld:
            # A git of theirs took the lock the moment HEAD moved and kept it: their index lacks the
            # commit's paths until the next call, whose recovery stages them (nothing is lost: the
            # files and the commit are there).
            self.deferred = True
            return commit
        finally:
            stage.done(published=staged)

    def _commit_staged(self, paths: list[str], message: str, subject: str, staging: Path) -> str | None:
        """Stage `paths` into `staging` as `git add` would and commit them."""
        listing = b"".join(p.encode() + b"\0" for p in paths)
        options = self._index_options(staging)
        # Many paths (hand edits, an import): git only hashes them and the objects are written here,
        # once. `update-index --add` compressed and wrote 10,000 loose objects that the commit then
        # looked up again: 3-9 s of the first call after 10,000 new files, against 0.24 s.
        bulk = ["--info-only"] if len(paths) >= BULK_STAGE else []
        self._git(*options, "update-index", "--add", "--remove", *bulk, "-z", "--stdin", data=listing, index=staging)
        try:
            changes = self._changes(paths)
            if bulk:
                self._stage_what_we_read(changes, staging, options)
            return self._commit_changes(changes, message, subject)
        except Unsupported:
            if bulk:
                # Only git knows what these files become (filters, links, modes): it writes them, from
                # entries it must hash again (an entry whose stat is up to date is not re-read).
                for how in (["--force-remove"], ["--add", "--remove"]):
                    self._git(*options, "update-index", *how, "-z", "--stdin", data=listing, index=staging)
            return self._commit_entries(self._staged(paths, staging), message, subject)

    def _commit_entries(self, entries: bytes, message: str, subject: str) -> str | None:
        """Commit HEAD's tree with `entries` (update-index input) applied; None when that is HEAD's tree."""
        for _ in range(COMMIT_ATTEMPTS):
            try:
                head, head_tree = self._scratch_base()
                self._git("update-index", "-z", "--index-info", data=entries, scratch=True)
                tree = self._git("write-tree", scratch=True).strip()
            except GitFailed:
                self._drop_scratch()  # whatever broke it, the next call starts from a fresh copy of HEAD
                raise
            if tree == head_tree:
                if self._head() != head:
                    # The cached base is stale (a person's revert, reset or commit moved HEAD): a tree
                    # equal to the old HEAD's may well differ from the new one's.
                    self._drop_scratch()
                    continue
                self._base = ScratchBase(head, tree, self._scratch_stat())
                return None
            commit = self._advance(head, tree, message, subject)
            if commit is None:
                # HEAD moved since the scratch index was built (a person's commit, a pull, another
                # process): build it again from the new HEAD and retry.
                self._drop_scratch()
                continue
            self._base = ScratchBase(commit, tree, self._scratch_stat())
            self._tip = None
            return commit
        raise HeadKeptMoving(["git", "update-ref", "HEAD"], 1,
                             b"HEAD kept moving while memory-mcp was committing; try again")

    def _advance(self, head: str | None, tree: str, message: str, subject: str,
                 written: tuple[str, ...] | None = None) -> str | None:
        """Commit `tree` on `head` and move HEAD to it if HEAD is still `head`; None when it moved.
        A commit made here whose `written` blobs are known is recorded in `authored`."""
        signature = self._signature()
        when = time.time()
        if signature is not None:
            body = commit_body(tree, head, *signature, when, message)
            commit = self._object_writer().write(b"commit", body).hex()
        else:
            parents = ["-p", head] if head else []
            commit = self._git("commit-tree", tree, *parents, "-F", "-", data=message.encode()).strip()
        reflog = f"commit{'' if head else ' (initial)'}: {subject}"
        try:
            # An empty old value: HEAD's branch must not exist yet.
            self._git("update-ref", "-m", reflog, "HEAD", commit, head or "")
        except GitFailed:
            if self._head() == head:
                # HEAD did not move: the ref could not be written (a lock another git holds, a full
                # disk); the caller maps git's own message to a clear error.
                raise
            return None
        name, bracket, email = signature[0].rpartition(" <") if signature else ("", "", "")
        if written is not None and bracket and email.endswith(">"):
            self.authored.append(Authored(head, commit, name, email[:-1], author_date(when), written,
                                          commit_subject(message)))
        return commit

    def _signature(self) -> tuple[str, str] | None:
        """The author and committer ("Name <email>") git would put on a commit now, or None when only
        `git commit-tree` should make it (a date or a signature asked for, an encoding, config includes).

        Asked of `git var` once, and again whenever the environment or a config file that can set an
        identity changes (their bytes are the key: a stat could miss an edit within the same tick)."""
        names = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL",
                 "HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM",
                 "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")
        env = self._process_env()
        if env.get("GIT_AUTHOR_DATE") or env.get("GIT_COMMITTER_DATE"):
            return None
        texts = self._config_texts(env)
        if any(b"include" in t.lower() for t in texts):
            return None
        key = (tuple(env.get(n) for n in names), tuple(texts))
        if self._ident is None or self._ident[0] != key:
            settings = self._settings()
            author = self._git("var", "GIT_AUTHOR_IDENT").strip().rsplit(" ", 2)[0]
            committer = author if _one_identity(env, settings) else \
                self._git("var", "GIT_COMMITTER_IDENT").strip().rsplit(" ", 2)[0]
            plain = "i18n.commitencoding" not in settings and not _true(settings.get("commit.gpgsign", ""))
            self._ident = (key, (author, committer) if plain else None)
        return self._ident[1]

    def _commit_changes(self, changes: dict[str, Entry | None], message: str, subject: str) -> str | None:
        """Commit the last commit's tree with `changes` applied, its new trees built in Python along
        the changed paths; None when that is the last commit's tree. Raises Unsupported for a change
        only git's index can make."""
        paths = list(changes)
        for _ in range(COMMIT_ATTEMPTS):
            try:
                base = self._snapshot(paths)
            except GitFailed:
                self._tip = None
                raise
            snap = base.changed(changes, self._object_writer())
            if snap.root == base.root:
                if self._head() != base.commit:
                    self._tip = None  # a person's revert, reset or commit moved HEAD: compare with it
                    continue
                return None
            written = tuple(e[1].hex() for p, e in changes.items()
                            if e is not None and p.startswith(f"{MEMORIES}/") and e != base.entry(p))
            commit = self._advance(base.commit, snap.root.hex(), message, subject, written)
            if commit is None:
                self._tip = None  # HEAD moved since our last commit: rebuild on top of the new one
                continue
            snap.commit = commit
            self._tip = snap
            self._base = None  # the scratch index is a commit behind now
            return commit
        raise HeadKeptMoving(["git", "update-ref", "HEAD"], 1,
                             b"HEAD kept moving while memory-mcp was committing; try again")

    def _head(self) -> str | None:
        """The commit HEAD points at, or None on a branch with no commit yet."""
        return self._git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).strip() or None

    def _git_run(self, *args: str, data: bytes | None = None, scratch: bool = False, index: Path | None = None,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run `git ARGS` in the store, `data` on stdin (else nothing: a git that would read the
        server's stdin must not take the protocol's bytes), with `env` (default `_process_env()`);
        `scratch` points it at the scratch index, `index` at another index file."""
        env = dict(env if env is not None else self._process_env())
        if scratch or index is not None:
            env["GIT_INDEX_FILE"] = str(self._scratch if scratch else index)
        return subprocess.run(["git", *args], cwd=self.root, input=data, capture_output=True, env=env,
                              stdin=subprocess.DEVNULL if data is None else None)

    def _git_bytes(self, *args: str, data: bytes | None = None, scratch: bool = False, index: Path | None = None,
                   check: bool = True, env: dict[str, str] | None = None) -> bytes:
        """`_git_run`'s output; GitFailed, with git's message, when `check` and git exits non-zero."""
        done = self._git_run(*args, data=data, scratch=scratch, index=index, env=env)
        if check and done.returncode != 0:
            raise GitFailed(["git", *args], done.returncode, done.stderr)
        return done.stdout

    def _git(self, *args: str, data: bytes | None = None, scratch: bool = False, index: Path | None = None,
             check: bool = True, env: dict[str, str] | None = None) -> str:
        """`_git_bytes` as text; bytes that are not UTF-8 (a file name) become surrogates, which
        `paths.shown` tells from a name that can be indexed."""
        out = self._git_bytes(*args, data=data, scratch=scratch, index=index, check=check, env=env)
        return out.decode("utf-8", "surrogateescape")

    def _pack_now_and_then(self) -> None:
        """Pack the loose objects in the background when there are many (`vcs/packing.py`); one
        repack at a time from this process (a finished one is reaped here)."""
        if self._packer is not None and self._packer.poll() is None:
            return
        self._packer = packing.start(self.root, self.common_dir, self._process_env())


def _one_identity(env: dict[str, str], settings: dict[str, str]) -> bool:
    """Whether git's committer is its author: neither is named apart from the other, by the
    environment or by an `author.*` or `committer.*` key in any config git reads here. Both are then
    made by git from the same values (user.name and user.email, EMAIL, the system's), so one `git
    var` answers for both (a one-shot `memory-mcp remember` started two)."""
    return (env.get("GIT_AUTHOR_NAME") == env.get("GIT_COMMITTER_NAME")
            and env.get("GIT_AUTHOR_EMAIL") == env.get("GIT_COMMITTER_EMAIL")
            and not any(k.startswith(("author.", "committer.")) for k in settings))


def _true(value: str) -> bool:
    """Whether a git config value says yes (a key given without a value does)."""
    return value.strip().lower() in ("true", "yes", "on", "1")
