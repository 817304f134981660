"""The git operations sync needs: remotes, fetch, merge, push, and the index work of settling a merge.

A part of `History` (it inherits `RemoteOps`), kept apart so history.py stays about commits, log and
status. Together with history.py the only module that runs git; every call gets History's
environment (English messages, literal pathspecs, the fallback identity); a failure raises GitFailed."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from memory_mcp.truth.layout import MEMORIES
from memory_mcp.vcs import lockfiles as gitlocks
from memory_mcp.vcs.repo import GitFailed, head_ref

SYNC_MARKER = "memory-mcp-sync-merge"
# `ext::` runs a command and `fd::` talks to file descriptors: never, whatever a config allows. The
# URLs a team store is cloned from come from a pointer file a repository committed (`truth/teams.py`).
_NO_COMMAND_TRANSPORTS = ["-c", "protocol.ext.allow=never", "-c", "protocol.fd.allow=never"]


def _before_a_store(args: list[str]) -> str:
    """`git ARGS` for a store that does not exist yet: English messages, no password asked for (no
    terminal may be there to answer), no command-running transport."""
    env = {**os.environ, "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}
    env.pop("LANGUAGE", None)
    done = subprocess.run(["git", *_NO_COMMAND_TRANSPORTS, *args], capture_output=True, env=env,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise GitFailed(["git", *args], done.returncode, done.stderr)
    return done.stdout.decode("utf-8", "replace")


def has_branches(url: str) -> bool:
    """Whether the repository at `url` has any branch (one just made empty on a git host has none)."""
    return bool(_before_a_store(["ls-remote", "--heads", "--", url]).strip())


def clone(url: str, dest: Path) -> None:
    """`git clone -- URL DEST` (git never clones a remote's hooks, and no submodule is fetched)."""
    _before_a_store(["clone", "--quiet", "--no-recurse-submodules", "--", url, str(dest)])


class RemoteOps:
    """fetch / merge / push and friends, as methods of `History`."""

    root: Path
    git_dir: Path  # the repository's git directory (`.git`, or a worktree's own folder under it)
    clear_stale_locks: Callable[[], None]  # History's
    _git: Callable[..., str]
    _git_bytes: Callable[..., bytes]
    _git_run: Callable[..., subprocess.CompletedProcess[bytes]]
    _process_env: Callable[..., dict[str, str]]

    def _network_env(self) -> dict[str, str]:
        # Never wait for a password nobody will type: the server has no terminal.
        return {**self._process_env(), "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "", "SSH_ASKPASS": ""}

    # ------------------------------------------------------------------ branch and remotes
    def branch(self) -> str | None:
        """The name of the branch checked out, or None when HEAD is detached."""
        ref = head_ref(self.git_dir)
        return ref.removeprefix("refs/heads/") if ref is not None and ref.startswith("refs/heads/") else None

    def remote_names(self) -> list[str]:
        """The names of the repository's remotes (`git remote`), in git's order."""
        return self._git("remote").split()

    def set_origin(self, url: str) -> None:
        """Make `url` the `origin` remote (added, or changed when there is one)."""
        verb = "set-url" if "origin" in self.remote_names() else "add"
        self._git(*_NO_COMMAND_TRANSPORTS, "remote", verb, "--", "origin", url)

    def upstream(self) -> tuple[str, str] | None:
        """The current branch's upstream as (remote name, branch name on the remote), or None when it
        has none (or HEAD is detached)."""
        branch = self.branch()
        if branch is None:
            return None
        remote = self._git("config", "--get", f"branch.{branch}.remote", check=False).strip()
        merge = self._git("config", "--get", f"branch.{branch}.merge", check=False).strip()
        if not remote or remote == "." or not merge.startswith("refs/heads/"):
            return None  # none, or a local branch: nothing to fetch from
        return remote, merge.removeprefix("refs/heads/")

    # ------------------------------------------------------------------ network
    def fetch_branch(self, remote: str, branch: str, tracking: str) -> None:
        """`git fetch` one branch of `remote` into the ref `tracking`, forced, without tags and without
        asking for a password. Raises GitFailed with git's message (see sync's classification)."""
        self._git("fetch", "--no-tags", "--quiet", remote, f"+refs/heads/{branch}:{tracking}", env=self._network_env())

    def push_head(self, remote: str, branch: str) -> None:
        """`git push -u`: HEAD to `branch` on `remote`, which the current branch then tracks. Raises
        GitFailed with git's message (a rejected push says `rejected` / `non-fast-forward`)."""
        self._git("push", "--quiet", "-u", remote, f"HEAD:refs/heads/{branch}", env=self._network_env())

    # ------------------------------------------------------------------ commits
    def resolve_commit(self, rev: str) -> str:
        """The full sha of the commit `rev` names; GitFailed when it names none."""
        return self._git("rev-parse", "--verify", f"{rev}^{{commit}}").strip()

    def count_commits(self, spec: str) -> int:
        """How many commits `git rev-list SPEC` lists (e.g. `HEAD..origin/main`)."""
        return int(self._git("rev-list", "--count", spec))

    def is_ancestor(self, ancestor: str, rev: str) -> bool:
        """Whether commit `ancestor` is `rev` or one of its ancestors."""
        done = self._git_run("merge-base", "--is-ancestor", ancestor, rev)
        if done.returncode not in (0, 1):
            raise GitFailed(["git", "merge-base", "--is-ancestor", ancestor, rev], done.returncode, done.stderr)
        return done.returncode == 0

    def incoming_paths(self, theirs: str) -> list[str]:
        """The paths `theirs` changed since it and HEAD parted (every path that differs when the two
        have no common history)."""
        return [p.decode() for p in self._changed_since_parting(theirs).split(b"\0") if p]

    def _changed_since_parting(self, theirs: str) -> bytes:
        """`git diff --name-only -z` of what `theirs` changed since it and HEAD parted."""
        try:
            return self._git_bytes("diff", "--name-only", "-z", f"HEAD...{theirs}")
        except GitFailed:  # unrelated histories have no merge base: all of theirs is incoming
            return self._git_bytes("diff", "--name-only", "-z", "HEAD", theirs)

    def incoming_entries(self, theirs: str) -> list[tuple[str, int | None, bytes]]:
        """(mode, size, path) of each file `theirs` has at a path it changed since it and HEAD parted
        (`git ls-tree -r -l`: links, submodules and files, with their raw path bytes; a size for blobs)."""
        wanted = set(self._changed_since_parting(theirs).split(b"\0")) - {b""}
        listing = self._git_bytes("ls-tree", "-r", "-z", "-l", "--full-tree", theirs)
        out: list[tuple[str, int | None, bytes]] = []
        for record in listing.split(b"\0"):
            meta, _, path = record.partition(b"\t")
            if path in wanted:
                mode, _kind, _sha, size = meta.split()
                out.append((mode.decode(), int(size) if size.isdigit() else None, path))
        return out

    def deleted_memories(self, theirs: str) -> list[str]:
        """The memory files HEAD holds that `theirs` deleted since it and HEAD parted: what a merge of
        `theirs` would delete here (none when the two share no history: a merge then keeps both)."""
        try:
            base = self._git("merge-base", "HEAD", theirs).strip()
        except GitFailed:
            return []
        gone = self._git_bytes("diff", "--name-only", "--no-renames", "--diff-filter=D", "-z", base, theirs,
                               "--", MEMORIES)
        paths = [x.decode("utf-8", "replace") for x in gone.split(b"\0") if x]
        if not paths:
            return []
        held = set(self.memory_files("HEAD"))
        return [p for p in paths if p in held]

    def memory_files(self, rev: str) -> list[str]:
        """The memory files (`memories/**.md`) commit `rev` holds."""
        listing = self._git_bytes("ls-tree", "-r", "-z", "--name-only", rev, "--", MEMORIES)
        return [p for p in (x.decode("utf-8", "replace") for x in listing.split(b"\0")) if p.endswith(".md")]

    def arrivals(self, before: str, after: str) -> list[tuple[str, str, str]]:
        """(status A/M/D, memory path, author name) for each memory file the commits between `before`
        and `after` wrote, merges left out (a merge's author is whoever merged, never the writer), the
        latest commit per path first."""
        out = self._git_bytes("log", "--no-merges", "--no-renames", "--name-status", "-z",
                              "--format=%x01%an", f"{before}..{after}", "--", MEMORIES).decode("utf-8", "replace")
        found: list[tuple[str, str, str]] = []
        for commit in out.split("\x01")[1:]:
            # NAME NUL, then "\nSTATUS" NUL PATH NUL per file
            name, *rest = commit.split("\0")
            tokens = [t.strip("\n") for t in rest]
            for status, path in zip(tokens[0::2], tokens[1::2], strict=False):
                if status and path.endswith(".md"):
                    found.append((status[0], path, name))
        return found

    def set_ref(self, ref: str, rev: str, why: str) -> None:
        """Point `ref` at commit `rev` (`git update-ref -m WHY`), creating it."""
        self._git("update-ref", "-m", why, ref, rev)

    def grep_paths(self, pattern: str, rev: str = "HEAD", under: str = "memories") -> list[str]:
        """The paths under `under` whose text at commit `rev` has a line matching the regular expression
        `pattern` (`git grep -l`); none when nothing matches."""
        found = self._git("grep", "-l", "-e", pattern, rev, "--", under, check=False).split("\n")
        return [line.split(":", 1)[1] for line in found if line.startswith(f"{rev}:")]

    # ------------------------------------------------------------------ merge
    def merging(self) -> bool:
        """Whether a merge is under way (MERGE_HEAD exists)."""
        return (self.git_dir / "MERGE_HEAD").exists()

    def merge_fast_forward(self, theirs: str) -> None:
        """Fast-forward HEAD to `theirs`, carrying uncommitted work across (--autostash)."""
        self._git("merge", "--ff-only", "--autostash", "--quiet", theirs)

    def merge_no_commit(self, theirs: str) -> None:
        """Start a merge of `theirs` and stop before committing (conflicts are left staged for
        `unmerged`), carrying uncommitted work (--autostash) and allowing unrelated histories. Raises
        GitFailed when it conflicts, or when it could not start (see `merging`)."""
        self._git("merge", "--no-ff", "--no-commit", "--autostash", "--allow-unrelated-histories", "--quiet", theirs)

    def abort_merge(self) -> None:
        """`git merge --abort`: the work tree and index as they were before the merge."""
        self._git("merge", "--abort")

    # A sync marks the merges it starts, so that one a killed sync left is told from a person's own.
    def mark_sync_merge(self, theirs: str) -> None:
        """Record that the merge about to start (of `theirs` into the current HEAD) is sync's own."""
        marker = self.git_dir / SYNC_MARKER
        marker.write_text(f"{self.resolve_commit('HEAD')} {theirs}\n", encoding="ascii")

    def unmark_sync_merge(self) -> None:
        """The merge sync started is committed or undone."""
        (self.git_dir / SYNC_MARKER).unlink(missing_ok=True)

    def undo_interrupted_sync(self) -> bool:
        """Undo the merge a sync killed midway left behind (the marker names it: HEAD and MERGE_HEAD
        are still the ones it started from and merged), or finish it when the kill came after its
        commit moved HEAD and before git dropped MERGE_HEAD. A person's own merge is never touched, nor a
        merge a git process is still working on. Call under the store lock; True when one was undone."""
        marker = self.git_dir / SYNC_MARKER
        try:
            head, theirs = marker.read_text(encoding="ascii").split()
        except (FileNotFoundError, ValueError):
            return False
        if gitlocks.git_running_in(self.root.resolve()):
            return False  # the killed sync's `git merge` may still be writing; the next call looks again
        merge_head = self.git_dir / "MERGE_HEAD"
        ours = merge_head.exists() and merge_head.read_text().split()[:1] == [theirs]
        if ours and self.resolve_commit("HEAD") == head:
            self.clear_stale_locks()
            self.abort_merge()
        elif ours and self._parents("HEAD") == [head, theirs]:
            # Killed inside `git commit` of the merge, after HEAD moved and before git removed its
            # merge state: the merge is committed; only MERGE_HEAD and its files are left to drop.
            self.clear_stale_locks()
            self._git("merge", "--quit")
        self.unmark_sync_merge()
        return ours

    def _parents(self, rev: str) -> list[str]:
        """The parents of commit `rev`, in order."""
        return self._git("rev-list", "--parents", "-n1", rev).split()[1:]

    def unmerged(self) -> dict[str, dict[int, str]]:
        """Conflicted path -> {stage: blob sha} (1 base, 2 ours = this machine, 3 theirs = the remote)."""
        out: dict[str, dict[int, str]] = {}
        for entry in self._git("ls-files", "-u", "-z").split("\0"):
            if not entry:
                continue
            meta, path = entry.split("\t", 1)
            _mode, sha, stage = meta.split()
            out.setdefault(path, {})[int(stage)] = sha
        return out

    def add(self, path: str) -> None:
        """`git add PATH`: stage the file as it is in the work tree (marks a conflict resolved)."""
        self._git("add", "--", path)

    def remove_cached(self, path: str) -> None:
        """`git rm --cached`: drop `path` from the index (every stage), if it is there at all."""
        self._git("rm", "-q", "--cached", "--ignore-unmatch", "--", path)

    def merge_texts(self, ours: str, base: str, theirs: str, union: bool = False) -> str | None:
        """git's line merge of three texts (`git merge-file -p`); None when it conflicts, never with
        `union` (conflicting hunks keep both sides' lines)."""
        import tempfile  # a sync's only: every command's process imports this module

        with tempfile.TemporaryDirectory(prefix="memory-mcp-merge-") as tmp:
            names = []
            for name, text in (("ours", ours), ("base", base), ("theirs", theirs)):
                p = os.path.join(tmp, name)
                Path(p).write_text(text, encoding="utf-8")
                names.append(p)
            done = self._git_run("merge-file", "-p", *(["--union"] if union else []), *names)
        return done.stdout.decode("utf-8") if done.returncode == 0 else None

    def commit_merge(self, message: str) -> None:
        """Commit the merge under way with `message` exactly as given, no hooks."""
        import tempfile

        fd, message_file = tempfile.mkstemp(prefix="memory-mcp-message-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(message)
            self._git("commit", "--no-verify", "-q", "--cleanup=verbatim", "-F", message_file)
        finally:
            os.unlink(message_file)
