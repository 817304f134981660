"""A project's identity (issue 34): the repository's common git directory, found from files alone,
with real git repositories: worktrees, a bare repository's worktrees, a re-clone at another path,
and the stores earlier versions named from a work tree, adopted rather than left behind."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from memory_mcp.truth import projects

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]


def git(*args: str | Path) -> None:
    subprocess.run([*GIT, *map(str, args)], check=True, capture_output=True)


def seeded(path: Path) -> Path:
    """A repository with one commit (worktrees need one)."""
    git("init", "-q", path)
    git("-C", path, "commit", "-q", "--allow-empty", "-m", "first")
    return path


def bare_with_worktrees(tmp: Path, *names: str) -> Path:
    bare = tmp / "proj.git"
    git("clone", "-q", "--bare", seeded(tmp / "seed"), bare)
    for name in names:
        git("-C", bare, "worktree", "add", "-q", "-b", name, tmp / name)
    return bare


def old_name(root: Path) -> str:
    """How a102c0e named a project's store: the work tree root's name and the hash of its text."""
    import re

    name = re.sub(r"[^A-Za-z0-9._-]+", "-", root.name).strip("-.") or "root"
    return f"{name[:40]}-{hashlib.sha256(str(root).encode('utf-8')).hexdigest()[:8]}"


def made(store: Path) -> Path:
    (store / "memories").mkdir(parents=True)
    (store / ".git").mkdir()
    return store


def test_every_worktree_of_a_bare_repository_shares_one_store(tmp_path: Path) -> None:
    # a102c0e gave each worktree of a bare repository a store of its own (its work tree's path),
    # against README's "all worktrees of a repository share one".
    bare = bare_with_worktrees(tmp_path, "wt1", "wt2")
    home = tmp_path / "projects"
    one, two = projects.locate(tmp_path / "wt1", home), projects.locate(tmp_path / "wt2" / "sub", home)
    assert one.store == two.store == home / projects.store_name(bare.resolve())
    assert one.store.name.startswith("proj-") and one.repository is not None
    assert one.repository.common_dir == bare.resolve() and "common git directory" in one.why


def test_a_linked_worktree_and_its_main_tree_keep_the_store_name_of_earlier_versions(tmp_path: Path) -> None:
    main = seeded(tmp_path / "prøject ünïcode")
    git("-C", main, "worktree", "add", "-q", "-b", "side", tmp_path / "side")
    home = tmp_path / "projects"
    expected = home / old_name(main.resolve())
    assert projects.locate(main, home).store == projects.locate(tmp_path / "side", home).store == expected


def test_a_re_clone_at_another_path_finds_the_store_through_its_remote(tmp_path: Path) -> None:
    home = tmp_path / "projects"
    first = seeded(tmp_path / "a" / "app")
    git("-C", first, "remote", "add", "origin", "git@github.com:Team/App.git")
    located = projects.locate(first, home)
    made(located.store)
    projects.locate(first, home)  # the store exists now: its remote is recorded
    again = seeded(tmp_path / "b" / "app-again")
    git("-C", again, "remote", "add", "origin", "https://github.com/Team/App")  # the same repository, spelt otherwise
    found = projects.locate(again, home)
    assert found.store == located.store and "remote" in found.why
    # A clone with a store of its own keeps it: nothing is merged behind the person's back; where lists the other.
    third = seeded(tmp_path / "c" / "app")
    git("-C", third, "remote", "add", "origin", "git@github.com:Team/App.git")
    own = made(home / projects.store_name(third.resolve()))
    mine = projects.locate(third, home)
    assert mine.store == own and projects.related(mine, home) == [located.store]


def test_the_store_an_earlier_version_made_for_a_bare_worktree_is_adopted_by_the_repository(tmp_path: Path) -> None:
    bare_with_worktrees(tmp_path, "wt1", "wt2", "wt3")
    home = tmp_path / "projects"
    legacy_one = made(home / old_name((tmp_path / "wt1").resolve()))
    legacy_two = made(home / old_name((tmp_path / "wt2").resolve()))
    assert projects.locate(tmp_path / "wt1", home).store == legacy_one  # kept, and recorded for the repository
    assert projects.locate(tmp_path / "wt2", home).store == legacy_two  # its own memories are not hidden
    third = projects.locate(tmp_path / "wt3", home)  # a new worktree: the adopted store, not an empty one
    assert third.store == legacy_one and "earlier version" in third.why
    assert not (home / projects.store_name((tmp_path / "proj.git").resolve())).exists()
    assert projects.related(projects.locate(tmp_path / "wt2", home), home) == [legacy_one]


def test_a_project_s_own_memory_folder_comes_first(tmp_path: Path) -> None:
    main = seeded(tmp_path / "p")
    (main / ".memory").mkdir()
    git("-C", main, "worktree", "add", "-q", "-b", "x", tmp_path / "x")
    assert projects.locate(tmp_path / "x", tmp_path / "projects").store == main.resolve() / ".memory"


def test_a_folder_in_no_repository_is_its_own_project(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    located = projects.locate(plain, tmp_path / "projects")
    assert located.repository is None and located.store.name == old_name(plain.resolve())


@pytest.mark.parametrize(("url", "key"), [
    ("git@github.com:Team/App.git", "github.com/Team/App"),
    ("https://github.com/Team/App/", "github.com/Team/App"),
    ("ssh://git@GitHub.com:22/Team/App.git", "github.com/Team/App"),
    ("https://user@gitlab.example/group/sub/app.git", "gitlab.example/group/sub/app"),
    ("/srv/git/app.git", "path:/srv/git/app.git"),
    ("file:///srv/git/app.git", "path:/srv/git/app.git"),
    ("../app.git", "path:/src/app.git"),
])
def test_remote_spellings_of_one_repository_share_a_key(url: str, key: str) -> None:
    assert projects.remote_key(url, Path("/src/proj")) == key


def test_the_remote_is_read_from_the_common_git_directory_s_config(tmp_path: Path) -> None:
    bare = bare_with_worktrees(tmp_path, "wt")
    git("-C", bare, "remote", "add", "upstream", "https://example.org/u.git")
    git("-C", bare, "remote", "set-url", "origin", "https://example.org/o.git")
    repo = projects.find_repository(tmp_path / "wt")
    assert repo is not None and projects.remote_url(repo) == "https://example.org/o.git"
