"""Git: one commit per write, only the memory files, with the person's identity when they have one.

`History` is the only thing in memory-mcp that runs git (its sync half, fetch / merge / push, is in
gitremote.py). Callers catch `GitCommandError`, re-exported here."""

from __future__ import annotations

import contextlib
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import git
from git import GitCommandError

from . import gitlocks
from .errors import RepoBusy
from .gitremote import RemoteOps
from .layout import MEMORIES
from .paths import shown

__all__ = ["Commit", "Deletion", "GitCommandError", "HeadKeptMoving", "History"]

FALLBACK_NAME = "memory-mcp"
FALLBACK_EMAIL = "memory-mcp@localhost"
MAX_ARGV_PATHS = 200
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
# Commits between two background packs of the loose objects: about 4 objects each.
PACK_EVERY = 100


class HeadKeptMoving(git.GitCommandError):
    """Every attempt lost the race for HEAD to someone else's commits: the memory file is written and
    the next call commits it. A GitCommandError, so callers that tolerate a failed commit still do."""


@dataclass(frozen=True)
class _ScratchBase:
    """The commit the scratch index was last made to match, its tree, and the index file's
    (inode, mtime, size) right after, to notice a write by anyone else."""

    head: str | None
    tree: str
    stat: tuple[int, int, int] | None


@dataclass(frozen=True)
class Commit:
    commit: str
    date: str
    message: str


@dataclass(frozen=True)
class Deletion:
    """One commit that deleted files: its sha, its committer date (ISO 8601) and the deleted paths."""

    commit: str
    date: str
    paths: tuple[str, ...]


class History(RemoteOps):
    """The store's git repository: the only object that runs git (plumbing through subprocess on the
    write path, GitPython's command wrapper elsewhere), always with `_env` on top of the process's."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = git.Repo(root)
        self._env = self._identity_env()
        # The index the commits' trees are written from; the person's own index only gets the paths.
        self._scratch = self.git_dir / SCRATCH_INDEX
        self._base: _ScratchBase | None = None
        self._oid_hex: int | None = None
        self.deferred = False  # a commit was put off: a person's git held the index lock
        self._commits = 0
        self._packer: subprocess.Popen[bytes] | None = None

    @staticmethod
    def init(root: Path) -> History:
        git.Repo.init(root, initial_branch="main")
        return History(root)

    def _identity_env(self) -> dict[str, str]:
        """Environment that supplies a fallback identity only for what the person has not configured."""
        # Paths are file names, never patterns: `notes [1].md` must not also match `notes 1.md`.
        # git's messages in English whatever the person's locale: a held lock, a rejected push and
        # the network errors sync explains are recognised by their English text.
        env: dict[str, str] = {"GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C"}
        reader = self.repo.config_reader()
        if not (os.environ.get("GIT_AUTHOR_NAME") or reader.get_value("user", "name", "")):
            env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = FALLBACK_NAME
        if not (os.environ.get("GIT_AUTHOR_EMAIL") or reader.get_value("user", "email", "")):
            env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = FALLBACK_EMAIL
        return env

    def _process_env(self) -> dict[str, str]:
        """The whole environment of a git this object starts itself: the process's, with ours on top
        and without LANGUAGE (gettext ignores it under LC_ALL=C; dropped so nothing can pick a
        language back up, e.g. a git built with a gettext that honours LANGUAGE there)."""
        env = {**os.environ, **self._env}
        env.pop("LANGUAGE", None)
        return env

    def _git_locks(self) -> list[Path]:
        """The lock files a commit takes: the index, our scratch index and the copy of the person's
        index it stages into (`gitlocks.holding_index`), HEAD, the branch's ref and packed-refs."""
        git_dir, common = self.git_dir, Path(self.repo.common_dir)
        locks = [git_dir / "index.lock", git_dir / f"{SCRATCH_INDEX}.lock", git_dir / f"{gitlocks.STAGE_INDEX}.lock",
                 git_dir / "HEAD.lock", common / "packed-refs.lock"]
        if not self.repo.head.is_detached:
            locks.append(common / f"{self.repo.head.ref.path}.lock")
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
        if self.repo.head.is_detached:
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
        write: the paths are staged in the person's index as `git add` would, the commit's tree is
        written from a scratch index kept in step with HEAD, and HEAD moves by compare-and-swap,
        so a commit made meanwhile by someone else is never lost (the tree is rebuilt on top of it)."""
        if not paths:
            return None
        self.check_idle()
        self.clear_stale_locks()
        trailers = "".join(f"\nMemory-Id: {i}" for i in dict.fromkeys(memory_ids))
        message = subject + ("\n\n" + body.strip() if body.strip() else "") + ("\n" + trailers if trailers else "")
        with gitlocks.holding_index(self.git_dir) as staging:
            if staging is None:
                # A person's git holds their index (a `git commit` waiting for its editor). The files are
                # written; the commit follows on a later call, and nothing of ours is staged meanwhile
                # for their commit to sweep up under their message.
                self.deferred = True
                return None
            commit = self._commit_entries(self._stage(paths, staging), message, subject)
        if commit is not None:
            self._pack_now_and_then()
        return commit

    def _commit_entries(self, entries: bytes, message: str, subject: str) -> str | None:
        """Commit HEAD's tree with `entries` (update-index input) applied; None when that is HEAD's tree."""
        for _ in range(COMMIT_ATTEMPTS):
            try:
                head, head_tree = self._scratch_base()
                self._git("update-index", "-z", "--index-info", data=entries, scratch=True)
                tree = self._git("write-tree", scratch=True).strip()
            except git.GitCommandError:
                self._drop_scratch()  # whatever broke it, the next call starts from a fresh copy of HEAD
                raise
            if tree == head_tree:
                if self._head() != head:
                    # The cached base is stale (a person's revert, reset or commit moved HEAD): a tree
                    # equal to the old HEAD's may well differ from the new one's.
                    self._drop_scratch()
                    continue
                self._base = _ScratchBase(head, tree, self._scratch_stat())
                return None
            parents = ["-p", head] if head else []
            commit = self._git("commit-tree", tree, *parents, "-F", "-", data=message.encode()).strip()
            reflog = f"commit{'' if head else ' (initial)'}: {subject}"
            try:
                # An empty old value: HEAD's branch must not exist yet.
                self._git("update-ref", "-m", reflog, "HEAD", commit, head or "")
            except git.GitCommandError:
                if self._head() == head:
                    # HEAD did not move: the ref could not be written (a lock another git holds, a full
                    # disk); the caller maps git's own message to a clear error.
                    raise
                # HEAD moved since the scratch index was built (a person's commit, a pull, another
                # process): build it again from the new HEAD and retry.
                self._drop_scratch()
                continue
            self._base = _ScratchBase(commit, tree, self._scratch_stat())
            return commit
        raise HeadKeptMoving(["git", "update-ref", "HEAD"], 1,
                             b"HEAD kept moving while memory-mcp was committing; try again")

    def _stage(self, paths: list[str], staging: Path) -> bytes:
        """Stage `paths` in `staging`, the copy of the person's index, as `git add` / `git rm --cached`
        would (their other staged work stays as it is) and return the paths' new entries as
        `update-index -z --index-info` input; a path gone from the index becomes a mode-0 entry."""
        self._git("update-index", "--add", "--remove", "-z", "--stdin",
                  data=b"".join(p.encode() + b"\0" for p in paths), index=staging)
        # ls-files takes no path list from a file: many paths read the whole index instead.
        out = self._git_bytes("ls-files", "-s", "-z", "--", *(paths if len(paths) <= MAX_ARGV_PATHS else []),
                              index=staging)
        staged: dict[bytes, bytes] = {}
        for record in out.split(b"\0"):
            if record:
                info, path = record.split(b"\t", 1)
                mode, sha, _ = info.split(b" ")
                staged[path] = mode + b" " + sha
        removed = b"0 " + b"0" * self._oid_length()
        return b"".join(staged.get(p, removed) + b"\t" + p + b"\0" for p in (p.encode() for p in paths))

    def _scratch_base(self) -> tuple[str | None, str]:
        """HEAD and its tree, with the scratch index holding that tree. Rebuilt when anything but this
        object wrote the scratch index since its last commit (another server process, a crash)."""
        base = self._base
        if base is not None and base.stat == self._scratch_stat():
            return base.head, base.tree
        head = self._head()
        if head:
            self._git("read-tree", head, scratch=True)
            tree = self._git("rev-parse", f"{head}^{{tree}}").strip()
        else:
            self._git("read-tree", "--empty", scratch=True)
            tree = self._git("hash-object", "-t", "tree", "--stdin", data=b"").strip()
        self._base = _ScratchBase(head, tree, self._scratch_stat())
        return head, tree

    def _head(self) -> str | None:
        """The commit HEAD points at, or None on a branch with no commit yet."""
        return self._git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).strip() or None

    def _oid_length(self) -> int:
        """Hex digits of an object id here: 40 (SHA-1), or 64 in a SHA-256 repository."""
        if self._oid_hex is None:
            fmt = self._git("rev-parse", "--show-object-format", check=False).strip()
            self._oid_hex = 64 if fmt == "sha256" else 40
        return self._oid_hex

    def _scratch_stat(self) -> tuple[int, int, int] | None:
        try:
            st = self._scratch.stat()
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def _drop_scratch(self) -> None:
        self._base = None
        self._scratch.unlink(missing_ok=True)

    def _git_bytes(self, *args: str, data: bytes | None = None, scratch: bool = False, index: Path | None = None,
                   check: bool = True) -> bytes:
        """Run `git ARGS` in the store, `data` on stdin; `scratch` points it at the scratch index,
        `index` at another index file.

        subprocess directly: GitPython's wrapper costs a few milliseconds a call, and a write makes six."""
        env = self._process_env()
        if scratch or index is not None:
            env["GIT_INDEX_FILE"] = str(self._scratch if scratch else index)
        done = subprocess.run(["git", *args], cwd=self.root, input=data, capture_output=True, env=env)
        if check and done.returncode != 0:
            raise git.GitCommandError(["git", *args], done.returncode, done.stderr)
        return done.stdout

    def _git(self, *args: str, data: bytes | None = None, scratch: bool = False, index: Path | None = None,
             check: bool = True) -> str:
        return self._git_bytes(*args, data=data, scratch=scratch, index=index, check=check).decode()

    def _pack_now_and_then(self) -> None:
        """Every PACK_EVERY commits, pack the loose objects in the background.

        Plumbing never runs `git gc --auto`: 1,200 writes left 4,831 loose objects and made reads 70
        times slower. `git repack -d` touches neither refs nor the index, so it runs beside our commits
        without taking a lock they need; it is not waited for (its exit is reaped by the next one)."""
        self._commits += 1
        if self._commits % PACK_EVERY == 0:
            # Now and then all packs become one, so their number stays small too.
            every_pack = ["-a"] if self._commits % (PACK_EVERY * 10) == 0 else []
            with contextlib.suppress(OSError):
                self._packer = subprocess.Popen(["git", "repack", "-d", "-q", *every_pack], cwd=self.root,
                                                env=self._process_env(),
                                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL)

    def tracked(self, paths: list[str]) -> set[str]:
        """Which of `paths` git tracks (in its index)."""
        out = self.repo.git.ls_files("-z", "--", *paths, env=self._env)
        return {p for p in out.split("\0") if p}

    def changed(self, wanted: list[str] | None = None) -> list[str]:
        """Which of the `wanted` paths (default: all memory files and dictionary.md) git sees as changed
        against HEAD, untracked included."""
        few = wanted is not None and len(wanted) <= MAX_ARGV_PATHS
        specs = wanted if wanted is not None and few else ["memories", "dictionary.md"]
        out = self.repo.git.status("--porcelain", "-z", "--untracked-files=all", "--", *specs, env=self._env)
        paths: list[str] = []
        entries = iter(out.split("\0"))
        for entry in entries:
            if len(entry) < 4:
                continue
            paths.append(entry[3:])
            if entry[0] in "RC":  # a rename is followed by its source path
                paths.append(next(entries, ""))
        # A name that is not UTF-8 is never indexed, so never committed (reconcile lists it); nor is
        # anything below a memories/ that is a link (git refuses paths beyond one).
        linked = (self.root / MEMORIES).is_symlink()
        paths = [p for p in paths if p and shown(p) == p and not (linked and p.startswith(f"{MEMORIES}/"))]
        if wanted is None or few:
            return paths
        keep = set(wanted)
        return [p for p in paths if p in keep]

    def blob(self, rev: str, path: str | None = None) -> bytes | None:
        """The bytes of `path` as commit `rev` holds it (without a path, `rev` names the blob itself),
        or None when there is no such file.

        git itself rather than GitPython's object reader, which cannot read a SHA-256 repository."""
        done = subprocess.run(["git", "cat-file", "blob", rev if path is None else f"{rev}:{path}"], cwd=self.root,
                              capture_output=True, env=self._process_env())
        return done.stdout if done.returncode == 0 else None

    def log(self, path: str, limit: int = 20) -> list[Commit]:
        """The commits that touched one file, newest first, following renames."""
        try:
            out = self.repo.git.log(f"-n{limit}", "--follow", "--format=%H%x1f%aI%x1f%s", "--", path,
                                    env=self._env)
        except git.GitCommandError:
            return []
        return [Commit(*line.split("\x1f", 2)) for line in out.splitlines() if line.count("\x1f") == 2]

    def commit_at(self, until: str) -> Commit | None:
        """The last first-parent commit of HEAD whose committer date is at or before `until` (ISO 8601
        with an offset), or None when history starts after it. First parent: what this branch held
        then, not the date a merged branch's commit was made elsewhere."""
        out = self._git("log", "--first-parent", "-n1", f"--until={until}", "--format=%H%x1f%cI%x1f%s", "HEAD",
                        check=False)
        line = out.strip()
        return Commit(*line.split("\x1f", 2)) if line.count("\x1f") == 2 else None

    def memory_ids(self, rev: str) -> list[str] | None:
        """The memories commit `rev` wrote (the Memory-Id trailers every memory-mcp commit carries), or
        None when the store has no such commit."""
        if rev.startswith("-"):  # an option, not a revision
            return None
        sha = self._git("rev-parse", "-q", "--verify", f"{rev}^{{commit}}", check=False).strip()
        if not sha:
            return None
        out = self._git("log", "-1", "--format=%(trailers:key=Memory-Id,valueonly,separator=%x00)", sha)
        return [v.strip() for v in out.split("\0") if v.strip()]

    def files_at(self, commit: str, under: str = MEMORIES) -> list[tuple[str, bytes]]:
        """Every regular file below `under` as `commit` holds it, (path, bytes) in path order, read
        without a checkout: one `ls-tree` and one `cat-file --batch` for all of them. Names that are
        not UTF-8 are left out, as a walk leaves them out of the index."""
        listing = self._git_bytes("ls-tree", "-r", "-z", "--full-tree", commit, "--", under)
        wanted: list[tuple[str, bytes]] = []
        for record in listing.split(b"\0"):
            if not record:
                continue
            info, raw_path = record.split(b"\t", 1)
            mode, kind, sha = info.split(b" ")
            try:
                path = raw_path.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if kind == b"blob" and mode in (b"100644", b"100755"):
                wanted.append((path, sha))
        out = self._git_bytes("cat-file", "--batch", data=b"".join(sha + b"\n" for _, sha in wanted))
        files: list[tuple[str, bytes]] = []
        at = 0
        for path, _ in wanted:
            end = out.index(b"\n", at)
            size = int(out[at:end].split(b" ")[2])
            files.append((path, out[end + 1:end + 1 + size]))
            at = end + 1 + size + 1  # the content is followed by a newline
        return files

    def changed_after(self, commit: str, path: str) -> str | None:
        """The committer date (ISO 8601) of the first first-parent commit after `commit` that changed
        or deleted `path`, or None when none did."""
        out = self._git("log", "--first-parent", "--reverse", "--format=%cI", f"{commit}..HEAD", "--", path,
                        check=False)
        return out.split("\n", 1)[0].strip() or None

    def deleted_files(self, under: str = "memories") -> list[Deletion]:
        """Every commit that deleted files under `under`, newest first, with the paths it deleted
        (read a deleted file's last text with `blob(f"{commit}^", path)`)."""
        log = self.repo.git.log("--diff-filter=D", "--name-only", "-z", "--format=%x1e%H %cI", "--", under,
                                env=self._env)
        out: list[Deletion] = []
        for chunk in log.split("\x1e"):
            head, _, names = chunk.partition("\n")
            if not head.strip("\0 "):
                continue
            sha, stamp = head.strip("\0 ").split()
            out.append(Deletion(sha, stamp, tuple(filter(None, (n.strip("\n") for n in names.split("\0"))))))
        return out

    def short_log(self) -> str:
        """`git log --format='%h %s'`: one line per commit of HEAD, newest first ("" without commits)."""
        return self._git("log", "--format=%h %s", check=False)

    def summary(self) -> dict[str, object]:
        """Branch, head, and whether memory files have uncommitted changes."""
        # rev-parse, not GitPython's objects: those cannot read a SHA-256 repository's refs.
        head = self._head()
        head = head[:12] if head else None
        dirty = bool(self.repo.git.status("--porcelain", "--", "memories", "dictionary.md", env=self._env).strip())
        return {"branch": self.branch(), "head": head, "memory_files_dirty": dirty}
