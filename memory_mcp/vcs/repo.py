"""The repository as files, read without running git (its git directories, what HEAD names), and
GitFailed, the error every git command memory-mcp runs raises when git exits non-zero: catching a
git failure anywhere loads no git library and starts no process."""

from __future__ import annotations

from pathlib import Path

from memory_mcp.truth.errors import ParseError
from memory_mcp.truth.identity import common_dir, git_dir
from memory_mcp.truth.paths import read_regular


class GitFailed(Exception):
    """A git command that exited non-zero: its command line, its exit status and what git said on
    stderr (in English: every git of ours runs with LC_ALL=C)."""

    def __init__(self, command: list[str], status: int, stderr: bytes | str) -> None:
        self.command = command
        self.status = status
        self.stderr = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
        super().__init__(f"{' '.join(command)} exited with status {status}: {self.stderr.strip()}")


def git_dirs(root: Path) -> tuple[Path, Path]:
    """The git directory of the work tree `root` (`.git`, or a linked worktree's own folder) and the
    common one that holds its objects, refs and config (the same folder outside linked worktrees)."""
    own = git_dir(root)
    if own is None or not (own / "HEAD").exists():
        raise GitFailed(["git", "rev-parse", "--git-dir"], 128, f"fatal: not a git repository: {root}")
    return own, common_dir(own)


def head_ref(own_git_dir: Path) -> str | None:
    """The ref HEAD points at (`refs/heads/main`), or None when HEAD is detached (a commit id)."""
    text = (own_git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    return text.removeprefix("ref:").strip() if text.startswith("ref:") else None


def read_head(own: Path, common: Path) -> str:
    """The commit HEAD names, read from git's files without a git process ("" when unborn or
    unreadable): `own` is the work tree's git directory, `common` the one holding its refs."""
    # Bytes read with `paths.read_regular` (a pipe or a device in their place never hangs a call):
    # every tool call asks, and pathlib's text reading took twice as long.
    try:
        head = _read(own / "HEAD", _REF_LIMIT)
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        try:
            return _read(common / ref, _REF_LIMIT)
        except (FileNotFoundError, NotADirectoryError, ParseError):
            pass  # not loose: packed
        for line in _read(common / "packed-refs", -1).splitlines():
            if line.endswith(f" {ref}"):
                return line.split(" ", 1)[0]
    except (OSError, UnicodeDecodeError, ParseError):
        pass
    return ""


def _read(path: Path, limit: int) -> str:
    return read_regular(path, limit).decode("utf-8").strip()


# HEAD and a loose ref hold one line; asking `read` for more allocates that much on every call.
_REF_LIMIT = 4096
