"""The commit path (git plumbing with a scratch index) and the index's cached file table: what they
must keep true while being fast. Real git repositories, real SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import commit_count, fm_file, git

from memory_mcp.app.store import Store
from memory_mcp.index.db import Index
from memory_mcp.index.schema import FileStat


@pytest.fixture
def core(tmp_path: Path):
    st = Store.open(tmp_path / "store")
    yield st
    st.close()


def tracked(store: Store) -> set[str]:
    return set(git(store.root, "ls-tree", "-r", "--name-only", "HEAD").split("\n")) - {""}


def memory_changes(store: Store) -> str:
    """What git status says about memory files: empty when index, HEAD and work tree agree."""
    return git(store.root, "status", "--porcelain", "--untracked-files=all", "--", "memories").strip()


def test_a_commit_made_by_a_person_between_two_writes_is_kept(core: Store) -> None:
    """The scratch index is in step with the HEAD of the last write; a person's commit since must
    become the parent of the next write, with its content, not be overwritten by a stale tree."""
    core.remember("The ocelot job runs at noon.")
    readme = core.root / "README.md"
    readme.write_text(readme.read_text() + "\nmy own line\n")
    git(core.root, "-c", "user.name=Pat", "-c", "user.email=pat@example.org", "commit", "-q", "-am", "person: notes")
    mine = git(core.root, "rev-parse", "HEAD").strip()
    r = core.remember("The puma cache is LRU.")
    assert git(core.root, "rev-parse", "HEAD~1").strip() == mine
    assert "my own line" in git(core.root, "show", "HEAD:README.md")
    assert git(core.root, "show", "--name-only", "--format=", "HEAD").split() == [r.path]
    assert memory_changes(core) == ""


def test_two_store_objects_writing_in_turn_lose_no_commit(tmp_path: Path) -> None:
    """Two server processes share one scratch index file: each must notice the other's writes."""
    a = Store.open(tmp_path / "store")
    b = Store.open(tmp_path / "store")
    before = commit_count(a.root)
    paths = [a.remember("The ocelot job runs at noon.").path, b.remember("The puma cache is LRU.").path,
             a.remember("The quokka service restarts nightly.").path]
    assert commit_count(a.root) == before + 3
    assert set(paths) <= tracked(a)
    assert memory_changes(a) == ""
    assert git(a.root, "diff", "--cached", "--name-only").strip() == ""


def test_commit_message_and_trailers_keep_their_format(core: Store) -> None:
    r = core.remember("The ocelot job runs at noon.", title="Ocelot schedule")
    raw = git(core.root, "cat-file", "commit", "HEAD")
    assert raw.split("\n\n", 1)[1] == f"remember: Ocelot schedule\n\nMemory-Id: {r.id}"
    assert "commit: remember: Ocelot schedule" in git(core.root, "reflog", "-n1")


def test_a_lost_scratch_index_is_rebuilt_from_head(core: Store) -> None:
    """Only commits git's own index must make use the scratch index: attributes are one such case."""
    info = core.history.git_dir / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("*.md text\n")
    core.remember("The ocelot job runs at noon.")
    scratch = Path(git(core.root, "rev-parse", "--absolute-git-dir").strip()) / "memory-mcp.index"
    assert scratch.exists()
    scratch.unlink()
    r = core.remember("The puma cache is LRU.")
    assert r.path in tracked(core) and len(tracked(core)) > 3
    assert memory_changes(core) == ""


def test_a_memory_deleted_by_hand_is_committed_as_a_deletion(core: Store) -> None:
    r = core.remember("The ocelot job runs at noon.")
    (core.root / r.path).unlink()
    core.recall("ocelot")
    assert r.path not in tracked(core)
    assert memory_changes(core) == ""


def test_nothing_to_commit_makes_no_commit(core: Store) -> None:
    r = core.remember("The ocelot job runs at noon.")
    before = commit_count(core.root)
    assert core.history.commit_paths([r.path, "memories/never-existed.md"], "noop", []) is None
    assert commit_count(core.root) == before


def test_file_table_cache_sees_another_connection_write(tmp_path: Path) -> None:
    """The no-op call reuses the files table it loaded; a write by another process must still show."""
    one = Index.open(tmp_path / "index.sqlite3")
    two = Index.open(tmp_path / "index.sqlite3")
    assert one.file_stats() == {}
    with two.transaction():
        two.set_file("memories/a.md", FileStat(1, 2, "h"))
    assert one.file_stats() == {"memories/a.md": (FileStat(1, 2, "h"), None)}
    with pytest.raises(RuntimeError), one.transaction():
        one.set_file("memories/b.md", FileStat(3, 4, "k"))
        assert "memories/b.md" in one.file_stats()
        raise RuntimeError("undo")
    assert set(one.file_stats()) == {"memories/a.md"}


def test_file_table_cache_follows_own_writes_and_hands_out_copies(tmp_path: Path) -> None:
    index = Index.open(tmp_path / "index.sqlite3")
    with index.transaction():
        index.set_file("memories/a.md", FileStat(1, 2, "h"))
        index.set_file("memories/b.md", FileStat(3, 4, "k"), "broken")
    seen = index.file_stats()
    seen.pop("memories/a.md")
    with index.transaction():
        index.remove_path("memories/b.md")
        index.set_file("memories/c.md", FileStat(5, 6, "m"))
    fresh = Index.open(tmp_path / "index.sqlite3").file_stats()
    assert index.file_stats() == fresh == {"memories/a.md": (FileStat(1, 2, "h"), None),
                                           "memories/c.md": (FileStat(5, 6, "m"), None)}


def test_memory_count_follows_writes_here_and_in_another_process(tmp_path: Path) -> None:
    one = Store.open(tmp_path / "store")
    two = Store.open(tmp_path / "store")
    assert one.status().counts["total"] == 0
    r = two.remember("The ocelot job runs at noon.")
    assert one.recall("ocelot").coverage.indexed == 1
    one.remember("The puma cache is LRU.")
    one.forget(r.id, "archive")
    assert one.recall("puma").coverage.indexed == 2 == two.recall("puma").coverage.indexed


def test_failed_commit_ends_the_transaction_and_drops_its_cached_rows(tmp_path: Path) -> None:
    """Regression: a COMMIT that failed (a full disk; here a deferred constraint, which SQLite checks at
    COMMIT) left the transaction open, so every later transaction nested inside it and never committed,
    other connections could not write, and the file cache kept the rows that were never stored."""
    index = Index.open(tmp_path / "index.sqlite3")
    index.conn.execute("PRAGMA foreign_keys=ON")
    index.conn.execute("CREATE TABLE parent(id INTEGER PRIMARY KEY)")
    index.conn.execute("CREATE TABLE child(parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)")
    with pytest.raises(sqlite3.IntegrityError), index.transaction():
        index.set_file("memories/a.md", FileStat(1, 2, "h"))
        index.conn.execute("INSERT INTO child VALUES (42)")  # no such parent: COMMIT fails
    assert not index.conn.in_transaction and index.file_stats() == {}
    other = Index.open(tmp_path / "index.sqlite3")
    with other.transaction():
        other.set_file("memories/b.md", FileStat(3, 4, "k"))
    assert set(index.file_stats()) == {"memories/b.md"}


def split(root: Path) -> bool:
    """Whether the person's index is a split index (git's `link` extension names a shared index)."""
    return b"link" in (root / ".git" / "index").read_bytes()[-4096:] and any((root / ".git").glob("sharedindex.*"))


def test_a_large_index_is_staged_into_as_a_split_index(core: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """From SPLIT_INDEX_BYTES on, a write rewrites only the changed entries of the person's index; git
    reads it as before: status clean, every memory tracked, the person's own commit works."""
    from memory_mcp.vcs import staging

    monkeypatch.setattr(staging, "SPLIT_INDEX_BYTES", 1)
    paths = [core.remember("The ocelot job runs at noon.").path, core.remember("The puma cache is LRU.").path]
    assert split(core.root)
    assert memory_changes(core) == ""
    assert set(paths) <= set(git(core.root, "ls-files").split())
    (core.root / "notes.txt").write_text("mine\n")
    git(core.root, "add", "notes.txt")
    git(core.root, "-c", "user.name=Pat", "-c", "user.email=pat@example.org", "commit", "-q", "-m", "person: notes")
    assert git(core.root, "show", "--name-only", "--format=", "HEAD").split() == ["notes.txt"]
    assert core.remember("The quokka service restarts nightly.").path in tracked(core)


def test_a_person_who_configured_split_index_is_obeyed(core: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """`core.splitIndex false` (libgit2 tools cannot read a split index) keeps the index whole, however big."""
    from memory_mcp.vcs import staging

    monkeypatch.setattr(staging, "SPLIT_INDEX_BYTES", 1)
    git(core.root, "config", "core.splitIndex", "false")
    core.remember("The ocelot job runs at noon.")
    assert not split(core.root)
    assert memory_changes(core) == ""


def test_a_small_store_keeps_an_index_every_tool_reads(core: Store) -> None:
    core.remember("The ocelot job runs at noon.")
    assert not split(core.root)


def _hand_added(root: Path, n: int) -> list[str]:
    return [str(fm_file(root, f"hand/note-{i}.md", f"# Note {i}\n\nThe heron shard {i} sits on host {i % 7}.\n")
                .relative_to(root)) for i in range(n)]


def _objects_complete(root: Path) -> None:
    """Every object HEAD and the person's index name exists (fsck), and the person can commit."""
    assert git(root, "fsck", "--no-progress", "--connectivity-only").strip() == ""
    git(root, "write-tree")  # fails on an index entry whose object is missing


def test_many_hand_added_files_are_committed_through_one_pack(core: Store) -> None:
    """From BULK_STAGE paths on, git only hashes the files into the person's index and the blobs go
    into one pack: nothing missing, no loose file each, the index and HEAD agree."""
    from memory_mcp.vcs import history

    core.recall("warm")
    loose_before = int(git(core.root, "count-objects").split()[0])
    paths = _hand_added(core.root, history.BULK_STAGE + 20)
    core.recall("heron")
    assert set(paths) <= tracked(core)
    assert memory_changes(core) == ""
    _objects_complete(core.root)
    assert int(git(core.root, "count-objects").split()[0]) - loose_before < 20  # trees and the commit
    assert list((core.root / ".git" / "objects" / "pack").glob("*.pack"))


def test_a_file_changed_while_a_bulk_commit_reads_it_leaves_no_missing_object(core: Store,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """git hashed one version into the index, the commit read the next: git writes the object of
    the version it hashed, so the person's index names no object that is missing."""
    from memory_mcp.vcs import history

    core.recall("warm")
    paths = _hand_added(core.root, history.BULK_STAGE)
    real = history.History._changes

    def edit_then_read(self: history.History, changed: list[str]):  # type: ignore[no-untyped-def]
        (self.root / paths[3]).write_text((self.root / paths[3]).read_text() + "\nEdited meanwhile.\n")
        return real(self, changed)

    monkeypatch.setattr(history.History, "_changes", edit_then_read)
    core.recall("heron")
    monkeypatch.undo()
    _objects_complete(core.root)
    core.recall("heron again")  # the edit made meanwhile is committed on the next call
    assert memory_changes(core) == ""
    _objects_complete(core.root)


def test_a_bulk_commit_that_git_attributes_filter_is_left_to_git(core: Store) -> None:
    from memory_mcp.vcs import history

    core.recall("warm")
    (core.root / "memories" / "hand").mkdir(parents=True)
    (core.root / "memories" / "hand" / ".gitattributes").write_text("*.md text eol=lf\n")
    paths = _hand_added(core.root, history.BULK_STAGE)
    core.recall("heron")
    assert set(paths) <= tracked(core)
    _objects_complete(core.root)


def test_a_file_deleted_while_a_bulk_commit_reads_it_leaves_no_missing_object(core: Store,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """git hashed a file into the index that is gone when the commit reads it: the index drops it
    as the commit does, instead of naming a blob nobody wrote."""
    from memory_mcp.vcs import history

    core.recall("warm")
    paths = _hand_added(core.root, history.BULK_STAGE)
    real = history.History._changes

    def delete_then_read(self: history.History, changed: list[str]):  # type: ignore[no-untyped-def]
        (self.root / paths[5]).unlink()
        return real(self, changed)

    monkeypatch.setattr(history.History, "_changes", delete_then_read)
    core.recall("heron")
    monkeypatch.undo()
    _objects_complete(core.root)
    assert paths[5] not in git(core.root, "ls-files").split()
    assert paths[5] not in tracked(core) and paths[6] in tracked(core)
    assert memory_changes(core) == ""


def test_a_bulk_commit_keeps_its_pack_until_the_commit_names_it(core: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A `git repack -a -d` deletes packs of objects nothing refers to: the blobs' packs (one per
    PACK_OBJECTS) carry a .keep file while the commit is being made, and none once it is."""
    from memory_mcp.vcs import history, staging

    monkeypatch.setattr(staging, "PACK_OBJECTS", history.BULK_STAGE // 2)
    core.recall("warm")
    _hand_added(core.root, history.BULK_STAGE)
    packs = core.root / ".git" / "objects" / "pack"
    seen: list[int] = []
    real = history.History._commit_changes

    def look(self: history.History, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(len(list(packs.glob("*.keep"))))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(history.History, "_commit_changes", look)
    core.recall("heron")
    assert seen == [2]
    assert list(packs.glob("*.keep")) == []
    git(core.root, "repack", "-a", "-d", "-q")
    _objects_complete(core.root)


def test_a_split_index_setting_in_an_included_config_file_is_obeyed(core: Store,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_mcp.vcs import staging

    monkeypatch.setattr(staging, "SPLIT_INDEX_BYTES", 1)
    (core.root / ".git" / "extra.config").write_text("[core]\n\tsplitIndex = false\n")
    git(core.root, "config", "include.path", "extra.config")
    core.remember("The ocelot job runs at noon.")
    assert not split(core.root)


def test_a_keep_file_left_by_a_killed_bulk_commit_is_removed_by_the_next(core: Store) -> None:
    """A commit killed between writing its pack and committing leaves the .keep file: the next bulk
    commit, holding the index lock no other commit of ours can hold meanwhile, removes it; a
    person's own .keep file stays."""
    from memory_mcp.vcs import history, staging

    core.recall("warm")
    _hand_added(core.root, history.BULK_STAGE)
    core.recall("heron")
    packs = core.root / ".git" / "objects" / "pack"
    ours = packs / f"{next(packs.glob('*.pack')).stem}.keep"
    theirs = packs / f"pack-{'0' * 40}.keep"
    ours.write_text(staging.KEEP_REASON + "\n")
    theirs.write_text("kept by pat\n")
    for i in range(history.BULK_STAGE):
        fm_file(core.root, f"more/note-{i}.md", f"# More {i}\n\nThe ibis shard {i}.\n")
    core.recall("ibis")
    assert not ours.exists() and theirs.read_text() == "kept by pat\n"
    assert list(packs.glob("*.keep")) == [theirs]
    _objects_complete(core.root)


def test_a_kill_after_head_moved_and_before_the_index_rename_is_mended_by_the_next_process(tmp_path: Path) -> None:
    """A write killed after its commit moved HEAD and before its staged copy replaced the person's
    index left HEAD with a file their index lacks (`git status`: D and ?? for it; a crash test in CI
    caught it). The next process's recovery finds HEAD's tree already right, makes no commit, and
    must still stage the file: it published the staged copy only along with a commit before."""
    st = Store.open(tmp_path / "store")
    st.remember("The knot roost is counted at dawn.")
    st.close()
    [rel] = [p for p in git(st.root, "ls-files", "memories").split("\n") if p.endswith(".md")]
    git(st.root, "rm", "-q", "--cached", "--", rel)  # the index as the killed write left it
    commits = commit_count(st.root)
    again = Store.open(st.root)
    try:
        assert again.status().git["memory_files_dirty"] is False
    finally:
        again.close()
    assert memory_changes(again) == ""
    assert commit_count(st.root) == commits  # mended without a commit of its own


def test_a_same_size_edit_within_the_second_of_the_last_commit_is_staged_as_committed(tmp_path: Path) -> None:
    """git compares whole seconds, so an index entry as new as the index file is "racily clean" and
    its file is hashed again. The copy of the person's index a commit stages into was dated now,
    which made such an entry look safely old: a same-size edit within that second was staged as the
    old blob, and the person's index disagreed with the commit made from the file (`git status`
    said M after a tool call had committed the edit; a hook test caught it 1 run in 4). Pinned here
    with the times set by hand and core.trustctime off, so no second boundary decides it."""
    import os

    st = Store.open(tmp_path / "store")
    m = st.remember("Stripe webhook retries caused duplicate invoices; the handler is idempotent now.")
    st.close()
    git(st.root, "config", "core.trustctime", "false")
    path, index = st.root / m.path, st.root / ".git" / "index"
    past = path.stat().st_mtime_ns - 100 * 10**9
    os.utime(path, ns=(past, past))
    git(st.root, "update-index", "--refresh")  # the entry now holds that time
    os.utime(index, ns=(past, past))  # and is as new as the index: racily clean, as within a second
    path.write_text(path.read_text().replace("Stripe webhook retries caused duplicate invoices",
                                             "Paddle webhook retries caused duplicate receipts"))
    os.utime(path, ns=(past, past))  # same size, same inode, same time: only the racy check sees it
    again = Store.open(st.root)
    try:
        again.recall("paddle receipts")
    finally:
        again.close()
    assert "Paddle webhook" in git(st.root, "show", f"HEAD:{m.path}")
    assert memory_changes(again) == ""


@pytest.mark.parametrize("hand_edit", [False, True])
def test_the_next_process_commits_what_was_left_uncommitted_with_or_without_hand_edits(
        core: Store, hand_edit: bool) -> None:
    """A process's first call asks git what is uncommitted while reconcile walks the files (the
    status starts before the walk): with nothing found by the walk that answer is used, and with a
    hand edit, which the walk commits first, it is asked again, so each change lands in one commit
    and the person's index agrees with HEAD."""
    kept = core.remember("The curlew survey runs every spring.")
    other = core.remember("The dunlin survey runs every autumn.")
    git(core.root, "reset", "-q", "--soft", "HEAD~1")  # the dunlin's commit undone: its file left as a crash leaves it
    git(core.root, "reset", "-q")
    if hand_edit:
        path = core.root / kept.path
        path.write_text(path.read_text().replace("every spring", "every spring and summer"))
    before = commit_count(core.root)
    again = Store.open(core.root)  # a new process's first call
    try:
        again.recall("survey")
    finally:
        again.close()
    assert memory_changes(core) == ""
    assert git(core.root, "status", "--porcelain").strip() == ""
    log = git(core.root, "log", f"-{1 + hand_edit}", "--format=%s%n%b")
    assert "left uncommitted" in log and other.id in log
    assert commit_count(core.root) == before + 1 + hand_edit
    assert ("edited by hand" in log) == hand_edit
    recovered = git(core.root, "log", "-1", "--format=%s%n%b")  # names only what it commits
    assert "left uncommitted" in recovered and kept.id not in recovered and kept.path not in recovered
