"""What git holds and sees: tracked and changed paths, a file's log, a commit by date, the files of a commit, deletions.

A part of `History` (it inherits `ReadOps`), kept apart so history.py stays about writing commits.
Together with history.py and remote.py the only module that runs git, always with History's
environment."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from memory_mcp.truth.layout import MEMORIES
from memory_mcp.truth.paths import shown
from memory_mcp.vcs.repo import GitFailed, read_head

if TYPE_CHECKING:  # built by the reads that return them: a write or a recall builds none
    from memory_mcp.vcs.commits import Change, Commit, Deletion



MAX_ARGV_PATHS = 200


def _status(specs: list[str]) -> list[str]:
    return ["status", "--porcelain", "-z", "--untracked-files=all", "--", *specs]


class Started:
    """A `git status` of `ReadOps.changed_started` under way: `result()` waits for it and reads it,
    `drop()` stops it when its answer is not wanted (it takes no lock: GIT_OPTIONAL_LOCKS=0)."""

    def __init__(self, proc: subprocess.Popen[bytes], argv: list[str], read: Callable[[str], list[str]]) -> None:
        self._proc, self._argv, self._read = proc, argv, read

    def result(self) -> list[str]:
        out, err = self._proc.communicate()
        if self._proc.returncode != 0:
            raise GitFailed(self._argv, self._proc.returncode, err)
        return self._read(out.decode("utf-8", "surrogateescape"))

    def drop(self) -> None:
        if self._proc.returncode is None:
            self._proc.kill()
            self._proc.communicate()


class ReadOps:
    """Reading the history and the work tree's status, as methods of `History`."""

    root: Path
    git_dir: Path
    common_dir: Path
    # History's
    _git: Callable[..., str]
    _git_bytes: Callable[..., bytes]
    _git_run: Callable[..., subprocess.CompletedProcess[bytes]]
    _batch: Callable[[list[str]], list[tuple[str, bytes, bytes] | None]]
    _process_env: Callable[..., dict[str, str]]
    _head: Callable[[], str | None]
    branch: Callable[[], str | None]  # RemoteOps'

    def authors(self, folder: str, present: set[str]) -> dict[str, int]:
        """How many of the files `present` (under `folder`) each git author last wrote: shown when a
        store asks to be trusted, never trusted itself (anyone can commit under any name)."""
        out = self._git("log", "--format=%x01%an", "--name-only", "--", folder)
        seen: set[str] = set()
        counts: dict[str, int] = {}
        author = "?"
        for line in out.splitlines():
            if line.startswith("\x01"):
                author = line[1:] or "?"
            elif line and line in present and line not in seen:
                seen.add(line)
                counts[author] = counts.get(author, 0) + 1
        for _ in present - seen:  # files git does not have: written by hand, not committed
            counts["(not committed)"] = counts.get("(not committed)", 0) + 1
        return counts

    def head_seen(self) -> str:
        """The commit HEAD names, read from git's files without a git process ("" when unborn or
        unreadable): every tool call asks whether the history moved, and answers nearly always no."""
        return read_head(self.git_dir, self.common_dir)

    def blob_authors(self, since: str = "") -> list[tuple[str, str, str, str, str]]:
        """(blob, author name, author e-mail, author date, subject) of every memory file version written by a
        commit of HEAD after `since` (all of HEAD's history without it), oldest first: one `git log`
        for all of them. A merge commit's own result is not listed (its parents' commits are), so a
        teammate's text pulled by a merge is theirs, not the person's who merged."""
        span = [f"{since}..HEAD"] if since else ["HEAD"]
        # No pathspec: limiting the log to memories/ made git compare trees for every commit (5.5 s
        # against 2.3 s over 10,000 commits); the records are filtered by path here instead.
        args = ["log", "--reverse", "--raw", "--no-abbrev", "--no-renames", "-z",
                "--format=%x01%an%x00%ae%x00%aI%x00%s%x00", *span]
        try:
            out = self._git_bytes(*args).decode("utf-8", "replace")
        except GitFailed:
            if not since:
                return []
            return self.blob_authors()  # `since` is gone (history rewritten, gc'd): read it all
        found: list[tuple[str, str, str, str, str]] = []
        for commit in out.split("\x01")[1:]:
            name, email, date, subject, rest = (commit.split("\0", 4) + ["", "", "", ""])[:5]
            # -z --raw: ":old-mode new-mode old-blob new-blob status" NUL path NUL, repeated.
            tokens = rest.split("\0")
            for info, path in zip(tokens, tokens[1:], strict=False):
                parts = info.strip().split(" ")
                if (len(parts) >= 5 and parts[0].startswith(":") and parts[3].strip("0")
                        and path.startswith(f"{MEMORIES}/")):
                    found.append((parts[3], name, email, date, subject))
        return found

    def head_blobs(self, paths: list[str]) -> dict[str, str]:
        """The blob HEAD holds at each of `paths` that it has (one `ls-tree`)."""
        specs = paths if len(paths) <= MAX_ARGV_PATHS else [MEMORIES]
        out = self._git_bytes("ls-tree", "-r", "-z", "HEAD", "--", *specs, check=False).decode("utf-8", "replace")
        wanted = set(paths)
        found: dict[str, str] = {}
        for record in out.split("\0"):
            info, _, path = record.partition("\t")
            parts = info.split(" ")
            if path in wanted and len(parts) == 3 and parts[1] == "blob":
                found[path] = parts[2]
        return found

    def identity_email(self) -> str:
        """The e-mail this store's commits are made with on this machine (the person's, else the
        fallback identity)."""
        ident = self._git("var", "GIT_AUTHOR_IDENT", check=False).strip()
        return ident.rsplit(" ", 2)[0].rpartition("<")[2].rstrip(">") if "<" in ident else ""

    def tracked(self, paths: list[str]) -> set[str]:
        """Which of `paths` git tracks (in its index)."""
        out = self._git("ls-files", "-z", "--", *paths)
        return {p for p in out.split("\0") if p}

    def changed(self, wanted: list[str] | None = None) -> list[str]:
        """Which of the `wanted` paths (default: all memory files and dictionary.md) git sees as changed
        against HEAD, untracked included."""
        few = wanted is not None and len(wanted) <= MAX_ARGV_PATHS
        specs = wanted if wanted is not None and few else ["memories", "dictionary.md"]
        # Without the fallback identity, which only a commit needs: deciding it runs `git config`, a
        # process of its own that a recall (a new process at the CLI) otherwise starts for nothing.
        out = self._git(*_status(specs), env=self._process_env(identity=False))
        return self._changed_paths(out, wanted, few)

    def changed_started(self) -> Started:
        """`changed()` of every memory file, its `git status` started now to be read later: a
        one-shot command's walk of the files runs meanwhile (on two cores, 4 ms of git beside 6 of
        walking at 1,000 memories, bench_cli.py)."""
        argv = ["git", *_status(["memories", "dictionary.md"])]
        proc = subprocess.Popen(argv, cwd=self.root, env=self._process_env(identity=False), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return Started(proc, argv, lambda out: self._changed_paths(out, None, False))

    def _changed_paths(self, out: str, wanted: list[str] | None, few: bool) -> list[str]:
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

    def summary(self) -> dict[str, object]:
        """Branch, head, and whether memory files have uncommitted changes."""
        head = self._head()
        head = head[:12] if head else None
        dirty = bool(self._git("status", "--porcelain", "--", "memories", "dictionary.md").strip())
        return {"branch": self.branch(), "head": head, "memory_files_dirty": dirty}

    def blob(self, rev: str, path: str | None = None) -> bytes | None:
        """The bytes of `path` as commit `rev` holds it (without a path, `rev` names the blob itself),
        or None when there is no such file."""
        done = self._git_run("cat-file", "blob", rev if path is None else f"{rev}:{path}")
        return done.stdout if done.returncode == 0 else None

    def log(self, path: str, limit: int = 20) -> list[Commit]:
        """The commits that touched one file, newest first, following renames."""
        from memory_mcp.vcs.commits import Commit

        out = self._git("log", f"-n{limit}", "--follow", "--format=%H%x1f%aI%x1f%s", "--", path, check=False)
        return [Commit(*line.split("\x1f", 2)) for line in out.splitlines() if line.count("\x1f") == 2]

    def head_commit(self) -> Commit | None:
        """The commit HEAD is on (committer date), or None before the first commit."""
        from memory_mcp.vcs.commits import Commit

        line = self._git("log", "-1", "--format=%H%x1f%cI%x1f%s", "HEAD", check=False).strip()
        return Commit(*line.split("\x1f", 2)) if line.count("\x1f") == 2 else None

    def commit_changes(self, rev: str) -> tuple[Commit, list[Change]] | None:
        """What commit `rev` changed against its first parent (against nothing for a first commit),
        each file with its blob before and after (None: absent); None when there is no such commit."""
        from memory_mcp.vcs.commits import Change, Commit

        if rev.startswith("-"):
            return None
        sha = self._git("rev-parse", "-q", "--verify", f"{rev}^{{commit}}", check=False).strip()
        if not sha:
            return None
        line = self._git("log", "-1", "--format=%H%x1f%cI%x1f%s", sha).strip()
        out = self._git("diff-tree", "-r", "-z", "--no-commit-id", "--no-renames", "--root", "-m", "--first-parent", sha)
        fields = out.split("\0")
        changes = []
        for info, path in zip(fields[0::2], fields[1::2], strict=False):
            if not info.startswith(":"):
                continue
            _, _, old, new, _ = info[1:].split(" ", 4)
            changes.append(Change(path, None if set(old) == {"0"} else old, None if set(new) == {"0"} else new))
        return Commit(*line.split("\x1f", 2)), changes

    def commit_at(self, until: str) -> Commit | None:
        """The last first-parent commit of HEAD whose committer date is at or before `until` (ISO 8601
        with an offset), or None when history starts after it. First parent: what this branch held
        then, not the date a merged branch's commit was made elsewhere."""
        from memory_mcp.vcs.commits import Commit

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
        blobs = self._batch([sha.decode() for _, sha in wanted])
        return [(path, found[2]) for (path, _), found in zip(wanted, blobs, strict=True) if found is not None]

    def changed_after(self, commit: str, path: str) -> str | None:
        """The committer date (ISO 8601) of the first first-parent commit after `commit` that changed
        or deleted `path`, or None when none did."""
        out = self._git("log", "--first-parent", "--reverse", "--format=%cI", f"{commit}..HEAD", "--", path,
                        check=False)
        return out.split("\n", 1)[0].strip() or None

    def deleted_files(self, under: str = "memories") -> list[Deletion]:
        """Every commit that deleted files under `under`, newest first, with the paths it deleted
        (read a deleted file's last text with `blob(f"{commit}^", path)`)."""
        from memory_mcp.vcs.commits import Deletion

        log = self._git("log", "--diff-filter=D", "--name-only", "-z", "--format=%x1e%H %cI", "--", under)
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
