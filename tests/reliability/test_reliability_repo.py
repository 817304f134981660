"""The person's repository: their own work is never touched, and a store in the middle of a merge or
rebase, or on a detached HEAD, refuses writes with a clear error instead of committing into the mess.
Reads keep working throughout, and hand edits made meanwhile are committed once git is idle."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Session, commit_count, git, new_id, open_server, subjects

pytestmark = pytest.mark.anyio


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"  # each test leaves the repository in its own state


@pytest.fixture
async def s(store: Path):
    async with open_server(store) as session:
        await session.call("memory_status")
        yield session

ID = ["-c", "user.name=Ada", "-c", "user.email=ada@example.org"]


def person(store: Path, *args: str) -> str:
    """A git command the person runs by hand (with their own identity)."""
    return git(store, *ID, *args, check=False)


def memory_files(store: Path) -> list[str]:
    return sorted(p.name for p in (store / "memories").rglob("*"))


def conflict_on_readme(store: Path) -> None:
    """Two branches that both change README.md: merging or rebasing one onto the other stops."""
    person(store, "checkout", "-q", "-b", "theirs")
    (store / "README.md").write_text("their readme\n")
    person(store, "commit", "-qam", "their readme")
    person(store, "checkout", "-q", "main")
    (store / "README.md").write_text("my readme\n")
    person(store, "commit", "-qam", "my readme")


async def assert_writes_refused(s: Session, store: Path, word: str, mem_id: str) -> None:
    """Every kind of write is refused with [repo_busy] naming the operation; nothing is written."""
    before, commits = memory_files(store), commit_count(store)
    index = git(store, "diff", "--cached", "--name-only")
    for tool, args in (("memory_remember", {"content": "The snipe cache holds ten entries."}),
                       ("memory_update", {"id": mem_id, "content": "The snipe queue is LIFO now."}),
                       ("memory_feedback", {"id": mem_id, "helpful": True}),
                       ("memory_forget", {"id": mem_id})):
        err = await s.error(tool, **args)
        assert "[repo_busy]" in err and word in err and "Nothing was written" in err, err
    assert memory_files(store) == before and commit_count(store) == commits
    assert git(store, "diff", "--cached", "--name-only") == index  # nothing staged into their operation
    assert await s.recall_ids("snipe queue") == [mem_id]  # reads still work


async def test_mid_merge_writes_wait_and_hand_edits_are_committed_afterwards(s: Session, store: Path) -> None:
    m = await s.call("memory_remember", content="The snipe queue is FIFO.")
    conflict_on_readme(store)
    assert "CONFLICT" in person(store, "merge", "theirs")
    await assert_writes_refused(s, store, "merge", m["id"])
    # A hand edit during the merge is indexed at once but not committed into the merge.
    path = store / m["path"]
    path.write_text(path.read_text().replace("FIFO", "FIFO, capped at 100"))
    head = git(store, "rev-parse", "HEAD")
    assert await s.recall_ids("capped") == [m["id"]]
    assert git(store, "rev-parse", "HEAD") == head and (store / ".git" / "MERGE_HEAD").exists()
    person(store, "merge", "--abort")
    await s.call("memory_status")
    assert subjects(store, 1)[0].startswith("reconcile:")
    assert git(store, "status", "--porcelain", "--", "memories").strip() == ""
    assert "capped" in git(store, "show", "HEAD")


async def test_mid_rebase_writes_wait(s: Session, store: Path) -> None:
    m = await s.call("memory_remember", content="The snipe queue is FIFO.")
    conflict_on_readme(store)
    person(store, "checkout", "-q", "theirs")
    assert "CONFLICT" in person(store, "rebase", "main")
    await assert_writes_refused(s, store, "rebase", m["id"])
    person(store, "rebase", "--abort")
    person(store, "checkout", "-q", "main")
    r = await s.call("memory_remember", content="The snipe retry limit is five.")
    assert r["path"] in git(store, "show", "--name-only", "--format=", "HEAD")


async def test_detached_head_writes_wait(s: Session, store: Path) -> None:
    m = await s.call("memory_remember", content="The snipe queue is FIFO.")
    person(store, "checkout", "-q", "--detach", "HEAD")
    await assert_writes_refused(s, store, "detached", m["id"])
    person(store, "checkout", "-q", "main")
    await s.call("memory_feedback", id=m["id"], helpful=True)
    assert git(store, "branch", "--show-current").strip() == "main"
    assert subjects(store, 1)[0].startswith("feedback:")


async def test_person_staged_unstaged_and_untracked_work_stays_exactly_as_it_was(s: Session, store: Path) -> None:
    """Every write and a reconciled hand edit, while the person has work of their own in the store."""
    readme = store / "README.md"
    readme.write_text(readme.read_text() + "\nmy staged line\n")
    (store / "notes.txt").write_text("my staged notes\n")
    person(store, "add", "README.md", "notes.txt")
    readme.write_text(readme.read_text() + "my unstaged line\n")
    (store / "dictionary.md").write_text((store / "dictionary.md").read_text())  # unchanged, untouched
    (store / "scratch.txt").write_text("untracked\n")
    snapshot = (git(store, "diff", "--cached", "--binary"), git(store, "diff", "--binary", "--", "README.md"),
                readme.read_bytes(), (store / "scratch.txt").read_bytes())
    commits = commit_count(store)
    a = await s.call("memory_remember", content="The godwit cache is LRU.", entities=["godwit"])
    b = await s.call("memory_remember", content="The godwit workers scale to eight.")
    await s.call("memory_update", id=a["id"], content="The godwit cache is LFU now.")
    await s.call("memory_feedback", id=a["id"], helpful=True)
    await s.call("memory_resolve", id=a["id"], other_id=b["id"], decision="supersede")  # b is archived
    await s.call("memory_forget", id=b["id"], mode="restore")
    hand = store / "memories" / "godwit-by-hand.md"
    hand.write_text(f"---\nid: {new_id()}\n---\n# Godwit by hand\n\nwritten in an editor\n")
    await s.call("memory_recall", query="godwit")
    assert commit_count(store) == commits + 7
    for n in range(7):
        changed = git(store, "show", "--name-only", "--format=", f"HEAD~{n}").split()
        assert changed and all(p.startswith("memories/") for p in changed), changed
    assert (git(store, "diff", "--cached", "--binary"), git(store, "diff", "--binary", "--", "README.md"),
            readme.read_bytes(), (store / "scratch.txt").read_bytes()) == snapshot
    status = git(store, "status", "--porcelain")
    assert "MM README.md" in status and "A  notes.txt" in status and "?? scratch.txt" in status
    assert "notes.txt" not in git(store, "log", "--name-only", "--format=")
