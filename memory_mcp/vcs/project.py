"""The project's own repository (the code a session works on, not the memory store): where a write
happens (the project's shared name, its branch and HEAD commit, read from git's files with no
process, as every write asks) and how many commits since a memory was written touched its files (a
`git rev-list` process; `app/staleness.py` keeps the answers per HEAD)."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memory_mcp.truth import projects
from memory_mcp.truth.identity import git_dir
from memory_mcp.vcs.repo import head_ref, read_head

if TYPE_CHECKING:
    from memory_mcp.truth.stamp import Place

_COMMIT = re.compile(r"[0-9a-f]{7,64}")


@dataclass(frozen=True)
class Project:
    """A git project as the staleness marks need it: its root (what `paths` are relative to), its
    common git directory (its identity) and HEAD's commit now."""

    root: Path
    common_dir: Path
    head: str


def find(folder: Path) -> Project | None:
    """The git project holding `folder` with its HEAD now; None outside git or before a first commit."""
    repo = projects.find_repository(folder)
    own = git_dir(repo.work_tree) if repo else None
    if repo is None or own is None:
        return None
    head = read_head(own, repo.common_dir)
    return Project(repo.root, repo.common_dir, head) if head else None


def place(folder: Path | None) -> Place:
    """Where a session in `folder` writes: the project's shared name (`name`), its branch and HEAD
    commit; only the folder's name outside git; nothing without a folder."""
    from memory_mcp.truth.stamp import Place  # a write's: the file hook loads this module for `find`

    if folder is None:
        return Place()
    repo = projects.find_repository(folder)
    if repo is None:
        return Place(project=folder.expanduser().resolve().name)
    own = git_dir(repo.work_tree)
    if own is None:
        return Place(project=name(repo))
    ref = head_ref(own) if (own / "HEAD").exists() else None
    return Place(name(repo), ref.removeprefix("refs/heads/") if ref else "", read_head(own, repo.common_dir))


@functools.lru_cache(maxsize=8)
def name(repo: projects.Repository) -> str:
    """A project's name as a team shares it: its remote's host and path (`github.com/org/app`, the
    user and password dropped), else the name of its folder; never a path on this machine."""
    remote = projects.remote_url(repo)
    key = projects.remote_key(remote, repo.root) if remote else ""
    if key and not key.startswith("path:"):
        return key
    return projects.label(repo.key)


def commits_since(root: Path, since: str, pathspecs: list[str]) -> int | None:
    """How many commits of HEAD's history after `since` changed a file `pathspecs` names (git pathspecs:
    `:(literal)a/b.py`, `:(glob)src/**`); None when `since` is not a commit of this repository (a
    teammate's commit not fetched, a history rewritten) or git fails."""
    if not _COMMIT.fullmatch(since) or not pathspecs:
        return None
    import subprocess  # here: the file hook loads this module on every read, and counts are kept per HEAD

    env = {**os.environ, "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}
    env.pop("GIT_LITERAL_PATHSPECS", None)
    done = subprocess.run(["git", "-C", str(root), "rev-list", "--count", f"{since}..HEAD", "--", *pathspecs],
                          capture_output=True, stdin=subprocess.DEVNULL, env=env)
    if done.returncode != 0:
        return None
    try:
        return int(done.stdout.strip() or b"0")
    except ValueError:
        return None
