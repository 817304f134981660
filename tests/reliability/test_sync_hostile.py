"""A hostile remote: `memory-mcp sync` checks what a fetched branch brings before merging it and
refuses, naming each path, a link (a `memories/` that leads out of the store), a derived index, a
name that is not UTF-8, a temp-file name, an oversized file. The store is left as it was. Content
that is merely bad (a 400-digit number) is merged and listed as unindexed, like a hand edit."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import EXE, git, server_env

from memory_mcp.app.store import Store
from memory_mcp.truth.files import MAX_FILE_BYTES


def _remote_with(tmp_path: Path) -> tuple[Store, Path]:
    """Store `a` pushed to a bare remote, and `evil`: a plain git clone of that remote."""
    a = Store.open(tmp_path / "a")
    a.remember("The avocet nest count is taken in May.")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    git(a.root, "remote", "add", "origin", str(bare))
    a.sync()
    subprocess.run(["git", "clone", "-q", str(bare), str(tmp_path / "evil")], check=True)
    return a, tmp_path / "evil"


def _memories_link(evil: Path) -> None:
    git(evil, "rm", "-r", "-q", "memories")
    (evil.parent / "elsewhere").mkdir(exist_ok=True)
    (evil / "memories").symlink_to("../elsewhere")


def _derived_index(evil: Path) -> None:
    (evil / ".derived").mkdir()
    (evil / ".derived" / "index.sqlite3").write_bytes(b"SQLite format 3\x00 not the local index")


def _dictionary_link(evil: Path) -> None:
    (evil / "dictionary.md").unlink()
    (evil / "dictionary.md").symlink_to("/dev/zero")


def _latin1_name(evil: Path) -> None:
    with open(os.path.join(os.fsencode(evil / "memories"), b"caf\xe9.md"), "wb") as f:
        f.write(b"# Cafe\n\nlatin name\n")


def _temp_name(evil: Path) -> None:
    (evil / "memories" / ".notes.md.abcd1234.tmp").write_text("kept by someone\n")


def _oversized(evil: Path) -> None:
    (evil / "memories" / "big.md").write_bytes(b"# Big\n\n" + b"x" * (MAX_FILE_BYTES + 10))


HOSTILE: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "memories-link": (_memories_link, "memories:", "symbolic link"),
    "derived-index": (_derived_index, ".derived/index.sqlite3", "derived"),
    "dictionary-link": (_dictionary_link, "dictionary.md", "symbolic link"),
    "latin1-name": (_latin1_name, "memories/caf\\xe9.md", "not UTF-8"),
    "temp-name": (_temp_name, "memories/.notes.md.abcd1234.tmp", "temp"),
    "oversized": (_oversized, "memories/big.md", "bytes"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_sync_refuses_a_remote_that_brings_what_a_store_never_takes(tmp_path: Path, case: str) -> None:
    a, evil = _remote_with(tmp_path)
    plant, path, reason = HOSTILE[case]
    plant(evil)
    git(evil, "add", "-A", "-f")
    git(evil, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", f"hostile: {case}")
    git(evil, "push", "-q", "origin", "main")
    head = git(a.root, "rev-parse", "HEAD")

    done = subprocess.run([str(EXE), "sync", "--store", str(a.root)], capture_output=True, text=True,
                          env=server_env(a.root, tmp_path), timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "[sync_failed]" in done.stderr and path in done.stderr and reason in done.stderr, done.stderr
    assert git(a.root, "rev-parse", "HEAD") == head
    assert not (a.root / ".git" / "MERGE_HEAD").exists()
    assert (a.root / "memories").is_dir() and not (a.root / "memories").is_symlink()
    assert not (tmp_path / "elsewhere").exists() or not any((tmp_path / "elsewhere").iterdir())
    assert [h.title for h in a.recall("avocet nest").results] == ["The avocet nest count is taken in May."]


def test_a_huge_number_from_a_remote_is_merged_and_listed_unindexed(tmp_path: Path) -> None:
    a, evil = _remote_with(tmp_path)
    (evil / "memories" / "huge.md").write_text(f"---\nfeedback: {'9' * 400}\n---\n# Huge\n\nhugeword\n")
    git(evil, "add", "-A")
    git(evil, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "a huge number")
    git(evil, "push", "-q", "origin", "main")
    a.sync()
    reasons = {u.path: u.reason for u in a.status().unindexed}
    assert "400" in reasons["memories/huge.md"]
    assert [h.title for h in a.recall("avocet nest").results] == ["The avocet nest count is taken in May."]


def test_a_tracked_file_named_like_a_temp_file_is_not_deleted(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store")
    kept = store.root / "memories" / ".notes.md.abcd1234.tmp"
    kept.write_text("a person's notes, committed on purpose\n")
    git(store.root, "add", "-f", str(kept))
    git(store.root, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "notes")
    ours = store.root / "memories" / ".left.md.zz99yy88.tmp"
    ours.write_text("what a writer killed mid-write leaves\n")
    Store.open(store.root).remember("The tern colony moved to the spit.")
    assert kept.read_text() == "a person's notes, committed on purpose\n"
    assert not ours.exists()
