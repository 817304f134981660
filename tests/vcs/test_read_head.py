"""`read_head`: the commit HEAD names, read from git's files on every tool call (no git process),
must be what `git rev-parse HEAD` says in each shape a repository keeps it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memory_mcp.vcs.repo import read_head


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "r"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for k in range(2):
        (repo / "f").write_text(f"{k}\n")
        _git(repo, "add", "f")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", f"c{k}")
    return repo


def test_read_head_agrees_with_git_for_loose_packed_and_detached_heads(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    git_dir = repo / ".git"
    assert read_head(git_dir, git_dir) == _git(repo, "rev-parse", "HEAD")  # a loose ref
    _git(repo, "pack-refs", "--all")
    assert not (git_dir / "refs" / "heads" / "main").exists()
    assert read_head(git_dir, git_dir) == _git(repo, "rev-parse", "HEAD")  # only in packed-refs
    _git(repo, "checkout", "-q", "--detach", "HEAD~1")
    assert read_head(git_dir, git_dir) == _git(repo, "rev-parse", "HEAD")  # a commit id in HEAD


def test_read_head_is_empty_for_an_unborn_branch_or_an_unreadable_ref(tmp_path: Path) -> None:
    repo = tmp_path / "u"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    assert read_head(repo / ".git", repo / ".git") == ""  # no commit yet, no packed-refs either
    (repo / ".git" / "refs" / "heads" / "main").mkdir()  # a folder where the ref would be
    assert read_head(repo / ".git", repo / ".git") == ""
    (repo / ".git" / "HEAD").write_bytes(b"ref: refs/heads/\xff\n")  # not UTF-8
    assert read_head(repo / ".git", repo / ".git") == ""


def test_read_head_does_not_hang_on_a_named_pipe_where_the_ref_would_be(tmp_path: Path) -> None:
    """Every tool call reads HEAD: a pipe in the loose ref's place (a store in a shared folder can hold
    anything) must not block the call; the packed ref is read instead."""
    import os
    import sys

    repo = _repo(tmp_path)
    git_dir = repo / ".git"
    want = _git(repo, "rev-parse", "HEAD")
    _git(repo, "pack-refs", "--all")
    os.mkfifo(git_dir / "refs" / "heads" / "main")
    code = f"from pathlib import Path; from memory_mcp.vcs.repo import read_head; g = Path({str(git_dir)!r}); print(read_head(g, g))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == want, done.stderr
