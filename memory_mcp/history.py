"""Git: one commit per write, only the memory files, with the person's identity when they have one."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import git

from .errors import RepoBusy

FALLBACK_NAME = "memory-mcp"
FALLBACK_EMAIL = "memory-mcp@localhost"
# A git index.lock older than this, found while we hold the store's write lock, is left by a crash.
STALE_GIT_LOCK_SECONDS = 60
# Where /proc shows no git process working in the store, a lock this old is left by a crash: git holds
# it for milliseconds (a killed server's commit must not fail every write for a minute).
UNOWNED_GIT_LOCK_SECONDS = 1.0
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


@dataclass(frozen=True)
class Commit:
    commit: str
    date: str
    message: str


class History:
    """The store's git repository, used through GitPython's git command wrapper."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.repo = git.Repo(root)
        self._env = self._identity_env()

    @staticmethod
    def init(root: Path) -> History:
        git.Repo.init(root, initial_branch="main")
        return History(root)

    def _identity_env(self) -> dict[str, str]:
        """Environment that supplies a fallback identity only for what the person has not configured."""
        # Paths are file names, never patterns: `notes [1].md` must not also match `notes 1.md`.
        env: dict[str, str] = {"GIT_LITERAL_PATHSPECS": "1"}
        reader = self.repo.config_reader()
        if not (os.environ.get("GIT_AUTHOR_NAME") or reader.get_value("user", "name", "")):
            env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = FALLBACK_NAME
        if not (os.environ.get("GIT_AUTHOR_EMAIL") or reader.get_value("user", "email", "")):
            env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = FALLBACK_EMAIL
        return env

    def _git_locks(self) -> list[Path]:
        """The lock files a commit takes: the index, HEAD, the branch's ref and packed-refs."""
        git_dir, common = Path(self.repo.git_dir), Path(self.repo.common_dir)
        locks = [git_dir / "index.lock", git_dir / "HEAD.lock", common / "packed-refs.lock"]
        if not self.repo.head.is_detached:
            locks.append(common / f"{self.repo.head.ref.path}.lock")
        return locks

    def _clear_stale_lock(self) -> None:
        """Remove git lock files a crash left behind (a commit killed midway leaves index.lock, HEAD.lock
        or the branch's ref lock); never one a live git process in the store holds."""
        can_see = Path("/proc").is_dir()
        grace = UNOWNED_GIT_LOCK_SECONDS if can_see else STALE_GIT_LOCK_SECONDS
        while True:
            ages = [(lock, age) for lock in self._git_locks() if (age := _age(lock)) is not None]
            if not ages or _git_running_in(self.root.resolve()):
                return
            for lock, age in ages:
                if age > grace:
                    lock.unlink(missing_ok=True)
            if not can_see or all(age > grace for _, age in ages):
                return
            time.sleep(0.1)

    def in_progress(self) -> str | None:
        """Why a memory commit must wait now (a merge, rebase, cherry-pick, revert or bisect the person
        has under way, or a detached HEAD), or None when the store is on a branch and idle."""
        git_dir = Path(self.repo.git_dir)
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

        Returns the commit sha, or None when none of the paths differ from HEAD."""
        if not paths:
            return None
        self.check_idle()
        self._clear_stale_lock()
        existing = [p for p in paths if (self.root / p).exists()]
        if existing:
            self._with_paths("add", existing)
        # Only paths git has a change for: a file that was never committed and is gone now (a broken
        # file a person deleted) would make `git commit -- path` fail on an unknown pathspec.
        changed = self.changed(paths)
        if not changed:
            return None
        paths = changed
        trailers = "".join(f"\nMemory-Id: {i}" for i in dict.fromkeys(memory_ids))
        message = subject + ("\n\n" + body.strip() if body.strip() else "") + ("\n" + trailers if trailers else "")
        # The message goes through a file too: a bulk edit's Memory-Id trailers can outgrow a command line.
        fd, message_file = tempfile.mkstemp(prefix="memory-mcp-message-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(message)
            if self.repo.head.is_valid():
                # --only with paths: commit these paths as they are in the work tree, leave other staged work alone.
                self._with_paths("commit", paths, "--only", "--no-verify", "-q", "--cleanup=verbatim",
                                 "-F", message_file)
            else:
                self.repo.git.commit("--no-verify", "-q", "--cleanup=verbatim", "-F", message_file, env=self._env)
        finally:
            os.unlink(message_file)
        return self.repo.head.commit.hexsha

    def _with_paths(self, verb: str, paths: list[str], *args: str) -> str:
        """`git VERB ARGS -- PATHS`; many paths go through a file, as a command line has a size limit
        (a reindex of 10,000 memories touches them all)."""
        run = getattr(self.repo.git, verb)
        if len(paths) <= MAX_ARGV_PATHS:
            return run(*args, "--", *paths, env=self._env)
        fd, listing = tempfile.mkstemp(prefix="memory-mcp-paths-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(b"\0".join(p.encode() for p in paths))
            return run(*args, f"--pathspec-from-file={listing}", "--pathspec-file-nul", env=self._env)
        finally:
            os.unlink(listing)

    def tracked(self, paths: list[str]) -> set[str]:
        """Which of `paths` git tracks (in its index)."""
        out = self.repo.git.ls_files("-z", "--", *paths, env=self._env)
        return {p for p in out.split("\0") if p}

    def dirty_paths(self) -> list[str]:
        """Memory files and dictionary.md that differ from HEAD (untracked ones included)."""
        return self.changed()

    def changed(self, wanted: list[str] | None = None) -> list[str]:
        """Which of the `wanted` paths (default: all memory files and dictionary.md) git sees as changed
        against HEAD, untracked included."""
        few = wanted is not None and len(wanted) <= MAX_ARGV_PATHS
        specs = wanted if few else ["memories", "dictionary.md"]
        out = self.repo.git.status("--porcelain", "-z", "--untracked-files=all", "--", *specs, env=self._env)
        paths: list[str] = []
        entries = iter(out.split("\0"))
        for entry in entries:
            if len(entry) < 4:
                continue
            paths.append(entry[3:])
            if entry[0] in "RC":  # a rename is followed by its source path
                paths.append(next(entries, ""))
        if wanted is None or few:
            return [p for p in paths if p]
        keep = set(wanted)
        return [p for p in paths if p in keep]

    def log(self, path: str, limit: int = 20) -> list[Commit]:
        """The commits that touched one file, newest first, following renames."""
        try:
            out = self.repo.git.log(f"-n{limit}", "--follow", "--format=%H%x1f%aI%x1f%s", "--", path,
                                    env=self._env)
        except git.GitCommandError:
            return []
        return [Commit(*line.split("\x1f", 2)) for line in out.splitlines() if line.count("\x1f") == 2]

    def summary(self) -> dict[str, object]:
        """Branch, head, and whether memory files have uncommitted changes."""
        head = self.repo.head.commit.hexsha[:12] if self.repo.head.is_valid() else None
        try:
            branch = self.repo.active_branch.name
        except TypeError:
            branch = None
        dirty = bool(self.repo.git.status("--porcelain", "--", "memories", "dictionary.md").strip())
        return {"branch": branch, "head": head, "memory_files_dirty": dirty}


def _age(path: Path) -> float | None:
    """Seconds since `path` was modified, or None when it does not exist."""
    try:
        return time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return None


def _git_running_in(root: Path) -> bool:
    """Whether a git process is working in `root` (a person's `git commit` with its editor open
    holds the index lock for as long as they type).

    Read from /proc where there is one; elsewhere the lock's age alone decides."""
    proc = Path("/proc")
    if not proc.is_dir():
        return False
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "git":
                continue
            # GitPython keeps `git cat-file` helpers running in the store (this process's and those of
            # other servers on the same store); they only read objects and never take the index lock.
            if (entry / "cmdline").read_bytes().split(b"\0")[1:2] == [b"cat-file"]:
                continue
            cwd = Path(os.readlink(entry / "cwd"))
        except (OSError, ValueError, IndexError):
            continue
        if cwd == root or root in cwd.parents:
            return True
    return False
