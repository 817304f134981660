"""The store reads git's messages as English text (a held `.lock': File exists`, a rejected push, an
unreachable remote), so git must speak English to it whatever language the person's git speaks.

These tests run the store with the process environment of a person whose git is in German. They
need git's German translation (/usr/share/locale/de/LC_MESSAGES/git.mo) and a locale gettext accepts:
on a machine with only C/C.UTF-8/POSIX locales, `LANGUAGE=de` with `LC_ALL=C.UTF-8` is what makes
git print German."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import git, make_store
from reliability_support import commit_waiting_in_editor, kill_tree

from memory_mcp.app.store import Store

# Tried in turn; the first one under which git's messages come out in German is used.
_GERMAN = (
    {"LANGUAGE": "de", "LC_ALL": "C.UTF-8"},
    {"LANGUAGE": "de", "LC_ALL": "de_DE.UTF-8"},
    {"LC_ALL": "de_DE.UTF-8"},
    {"LANGUAGE": "de", "LANG": "C.UTF-8"},
)
_LOCALE_VARS = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def _git_speaks_german(tmp: Path, env: dict[str, str]) -> bool:
    import os

    base = {k: v for k, v in os.environ.items() if k not in _LOCALE_VARS}
    done = subprocess.run(["git", "-C", str(tmp), "rev-parse", "--git-dir"], capture_output=True, text=True,
                          env={**base, **env})
    return done.returncode != 0 and "not a git repository" not in done.stderr and "Git-Repository" in done.stderr


@pytest.fixture
def german_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Set this process's environment to one where git prints German (else skip)."""
    probe = tmp_path_factory.mktemp("not-a-repo")
    env = next((e for e in _GERMAN if _git_speaks_german(probe, e)), None)
    if env is None:
        pytest.skip("git prints no German here: no git translation (/usr/share/locale/de/LC_MESSAGES/git.mo) "
                    "or no locale that gettext accepts")
    for var in _LOCALE_VARS:
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    return env


def test_held_git_lock_recognised_under_german_git(tmp_path: Path, german_git: dict[str, str]) -> None:
    """A person's `git commit` waiting in their editor holds index.lock. git says so in German
    ("Konnte '.../index.lock' nicht erstellen: Die Datei existiert bereits"), which the store did not
    recognise: the write failed with an internal error. Now the write is done and its commit follows."""
    store = make_store(tmp_path / "store")
    proc = commit_waiting_in_editor(store, tmp_path)
    core = Store.open(store)
    try:
        core.remember("The wryneck nests in old woodpecker holes.")
        kill_tree(proc.pid)
        proc.wait()
        [hit] = core.recall("wryneck").results
        assert hit.path in git(store, "show", "--name-only", "--format=", "HEAD")
    finally:
        core.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_rejected_push_is_merged_and_retried_under_german_git(tmp_path: Path, german_git: dict[str, str]) -> None:
    """The remote moves between this machine's fetch and its push: git rejects the push (in German
    around the `[rejected]` line), and sync must fetch, merge and push again as it does in English."""
    a = Store.open(tmp_path / "a")
    a.remember("Release notes go in CHANGELOG.md, newest first.")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    git(a.root, "remote", "add", "origin", str(bare))
    a.sync()  # the first push, to a remote without the branch yet
    subprocess.run(["git", "clone", "-q", str(bare), str(tmp_path / "b")], check=True)
    b = Store.open(tmp_path / "b")
    mine = b.remember("The staging cluster is called auk.")
    real_hold = b.session.lock.hold
    entered: list[int] = []

    @contextmanager
    def hold(*args: object, **kwargs: object) -> Iterator[None]:
        if not entered:  # b has fetched and is about to merge: the other machine pushes meanwhile
            theirs.append(a.remember("The build cache lives on the nas."))
            a.sync()
        entered.append(1)
        with real_hold(*args, **kwargs):
            yield

    theirs: list = []
    b.session.lock.hold = hold  # type: ignore[method-assign]
    try:
        result = b.sync()
    finally:
        del b.session.lock.hold
    assert len(entered) >= 2, "the push was never rejected, so the retry was not exercised"
    assert result.pushed >= 1 and result.pulled >= 1
    assert git(b.root, "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert (b.root / theirs[0].path).exists() and (b.root / mine.path).exists()
    a.sync()
    assert (a.root / mine.path).exists()
