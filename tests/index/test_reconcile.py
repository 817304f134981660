"""Reconcile (design section 3) through the core: stat gate, hashing, sweeps, skipped files, the
index as a disposable cache, and git commits that touch memory files only."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from pathlib import Path

import pytest
from conftest import commit_count, fm_file, git, new_id, subjects

from memory_mcp.app.store import Store
from memory_mcp.index.schema import SCHEMA_VERSION, FileStat
from memory_mcp.truth import files


@pytest.fixture
def core(tmp_path: Path):
    st = Store.open(tmp_path / "store")
    yield st
    st.close()


def ids(store: Store, query: str, **kw) -> list[str]:
    return [h.id for h in store.recall(query, **kw).results]


def sync(store: Store):
    with store.session.call():
        pass
    return store.session.last


def test_unchanged_files_are_not_reparsed(core: Store) -> None:
    core.remember("The aardvark service listens on 8080.")
    fm_file(core.root, "hand.md", "# Hand\n\naardvark hand note\n")
    first = sync(core)
    assert first.reindexed == ["memories/hand.md"]
    again = sync(core)
    assert again.reindexed == [] and again.removed == [] and again.changed == 0


def test_touched_file_with_same_content_is_only_restated(core: Store) -> None:
    r = core.remember("The badger cron runs daily.")
    path = core.root / r.path
    sync(core)
    future = time.time_ns() + 10**9
    os.utime(path, ns=(future, future))
    report = sync(core)
    assert report.reindexed == [] and report.changed == 0
    assert subjects(core.root, 1)[0].startswith("remember:")  # nothing to commit


def test_racily_clean_file_is_rehashed(core: Store) -> None:
    """Same size, same mtime as the index row, but the mtime is not older than the last scan: hash it."""
    path = fm_file(core.root, "racy.md", "# Racy\n\ncamel text one\n")
    future = time.time_ns() + 5 * 10**9
    os.utime(path, ns=(future, future))
    sync(core)
    path.write_text(path.read_text().replace("camel text one", "camel text two"))
    os.utime(path, ns=(future, future))
    assert sync(core).reindexed == ["memories/racy.md"]  # same stat, yet re-hashed and re-indexed
    assert ids(core, "two")


def test_stat_gate_skips_old_unchanged_stat(core: Store) -> None:
    """The gate (as in git): same mtime, size, ctime and inode, older than the last scan -> not read
    again; an edit that keeps size and puts the mtime back still moves ctime, so it is read."""
    path = fm_file(core.root, "gate.md", "# Gate\n\ndonkey text aaa\n")
    past = time.time_ns() - 3600 * 10**9
    os.utime(path, ns=(past, past))
    sync(core)
    assert sync(core).reindexed == []
    path.write_text(path.read_text().replace("aaa", "bbb"))
    os.utime(path, ns=(past, past))
    assert sync(core).reindexed == ["memories/gate.md"]
    assert "bbb" in core.read(path="memories/gate.md").body
    # What the gate cannot see (a file system that keeps ctime too) is what verify is for.
    stale_index_sha(core.root, "memories/gate.md")
    assert sync(core).reindexed == []
    assert core.reindex(verify=True).drift == ["memories/gate.md"]


def stale_index_sha(root: Path, rel: str) -> None:
    """Make the index hold another content hash for `rel` under the file's own stat, as after an
    edit that no stat shows."""
    con = sqlite3.connect(root / ".derived" / "index.sqlite3")
    with con:
        con.execute("UPDATE files SET sha = ? WHERE path = ?", ("0" * 64, rel))
    con.close()


def test_skipped_names_and_non_markdown(core: Store) -> None:
    mem = core.root / "memories"
    body = "---\ntype: fact\n---\n# Skipme\n\nelkword text\n"
    for name in (".hidden.md", "x.md.swp", "x.md~", "#x.md#", ".x.md.123.tmp", "notes.txt", "x.md.bak", "x.md.orig"):
        (mem / name).write_text(body)
    (mem / ".obsidian").mkdir()
    (mem / ".obsidian" / "y.md").write_text(body)
    assert ids(core, "elkword") == []
    assert core.status().unindexed == []
    assert core.status().counts["total"] == 0


def test_subfolders_are_walked(core: Store) -> None:
    fm_file(core.root, "a/b/c/deep.md", "# Deep\n\nferret deep text\n")
    hits = core.recall("ferret").results
    assert [h.path for h in hits] == ["memories/a/b/c/deep.md"]


def test_missing_memories_folder_does_not_look_like_everything_deleted(core: Store) -> None:
    r = core.remember("The gecko build needs java 21.")
    (core.root / "memories").rename(core.root / "memories.moved")
    res = core.recall("gecko java")
    assert [h.id for h in res.results] == [r.id]
    assert res.coverage.complete is False and "not swept" in res.coverage.note
    (core.root / "memories.moved").rename(core.root / "memories")
    assert ids(core, "gecko java") == [r.id]
    assert git(core.root, "status", "--porcelain").strip() == ""


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads folders whatever their mode")
def test_unreadable_folder_aborts_the_sweep(core: Store) -> None:
    fm_file(core.root, "sub/x.md", "# X\n\nhyena text\n")
    assert ids(core, "hyena")
    (core.root / "memories" / "sub").chmod(0)
    try:
        res = core.recall("hyena")
        assert res.results and res.coverage.complete is False
    finally:
        (core.root / "memories" / "sub").chmod(0o755)


def test_duplicate_id_is_unindexed_with_reason(core: Store) -> None:
    r = core.remember("The impala queue has two consumers.")
    copy = core.root / "memories" / "copy-of-impala.md"
    copy.write_bytes((core.root / r.path).read_bytes())
    st = core.status()
    reasons = {u.path: u.reason for u in st.unindexed}
    assert "duplicate id" in reasons["memories/copy-of-impala.md"]
    assert ids(core, "impala") == [r.id] and core.read(id=r.id).path == r.path


def test_file_moved_by_hand_keeps_its_identity(core: Store) -> None:
    r = core.remember("The jaguar cluster runs in eu-west.")
    (core.root / "memories" / "infra").mkdir()
    os.rename(core.root / r.path, core.root / "memories" / "infra" / "jaguar.md")
    hits = core.recall("jaguar cluster").results
    assert [(h.id, h.path) for h in hits] == [(r.id, "memories/infra/jaguar.md")]
    assert core.status().unindexed == []
    assert git(core.root, "status", "--porcelain").strip() == ""


def test_id_edited_by_hand(core: Store) -> None:
    r = core.remember("The kudu worker is single-threaded.")
    path = core.root / r.path
    nid = new_id()
    path.write_text(path.read_text().replace(r.id, nid))
    assert ids(core, "kudu worker") == [nid]
    assert core.recall("kudu").coverage.indexed == core.status().counts["total"]


def test_reindex_rebuilds_from_files_only(core: Store) -> None:
    a = core.remember("The lemur API uses OAuth.", entities=["lemur"])
    b = core.remember("The lemur API rate limit is 100/s.", entities=["lemur"])
    core.feedback(a.id, helpful=False)
    core.forget(b.id, mode="deprecate", reason="limit raised")
    before = core.read(id=b.id).frontmatter
    result = core.reindex()
    assert result.mode == "rebuild" and result.indexed == 2 and result.unindexed == 0
    assert core.read(id=b.id).frontmatter == before
    assert core.read(id=a.id).frontmatter["feedback"] == -0.2
    assert ids(core, "lemur", include_deprecated=True) == [a.id, b.id]


def test_schema_mismatch_rebuilds_automatically(core: Store) -> None:
    r = core.remember("The marten service is written in Go.")
    core.close()
    conn = sqlite3.connect(core.index_path)
    conn.execute("UPDATE meta SET value='0' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    again = Store.open(core.root)
    assert ids(again, "marten") == [r.id]
    assert again.session.last.reindexed == [r.path]  # the recall re-parsed the file: rebuilt, not reused
    check = sqlite3.connect(core.index_path)
    assert check.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == SCHEMA_VERSION
    check.close()
    again.close()


def test_corrupt_index_file_is_rebuilt(core: Store) -> None:
    r = core.remember("The newt deploy is manual.")
    core.close()
    for p in core.index_path.parent.iterdir():
        p.unlink()
    core.index_path.write_bytes(b"this is not sqlite" * 100)
    again = Store.open(core.root)
    try:
        assert ids(again, "newt deploy") == [r.id]
    finally:
        again.close()


def test_index_deleted_between_calls_rebuilds(core: Store) -> None:
    r = core.remember("The ocelot job runs at noon.")
    for p in core.index_path.parent.iterdir():
        p.unlink()
    assert ids(core, "ocelot") == [r.id]
    assert core.index_path.exists()  # answered from a rebuilt file, not the unlinked one


# ------------------------------------------------------------------ git: memory files only
def test_person_staged_and_unstaged_work_is_left_alone(core: Store) -> None:
    readme = core.root / "README.md"
    readme.write_text(readme.read_text() + "\nmy staged line\n")
    git(core.root, "add", "README.md")
    readme.write_text(readme.read_text() + "my unstaged line\n")
    (core.root / "scratch.txt").write_text("untracked\n")
    r = core.remember("The puma cache is LRU.")
    fm_file(core.root, "hand-puma.md", "# Hand puma\n\npuma hand edit\n")
    core.recall("puma")
    for commit in ("HEAD", "HEAD~1"):
        changed = git(core.root, "show", "--name-only", "--format=", commit).split()
        assert all(p.startswith("memories/") for p in changed), changed
    assert r.path in git(core.root, "show", "--name-only", "--format=", "HEAD~1")
    status = git(core.root, "status", "--porcelain")
    assert "MM README.md" in status and "?? scratch.txt" in status
    assert "my staged line" in git(core.root, "diff", "--cached", "README.md")
    assert "my unstaged line" in git(core.root, "diff", "README.md")


def test_stale_git_lock_is_recovered(core: Store) -> None:
    lock = Path(git(core.root, "rev-parse", "--absolute-git-dir").strip()) / "index.lock"
    lock.write_text("")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    before = commit_count(core.root)
    core.remember("The quokka service restarts nightly.")
    assert commit_count(core.root) == before + 1 and not lock.exists()


def test_dictionary_edit_is_committed_by_reconcile(core: Store) -> None:
    (core.root / "dictionary.md").write_text("- rhino: the render farm (aka: rf)\n")
    r = core.remember("The render farm queue is FIFO.", entities=["RF"])
    assert core.read(id=r.id).frontmatter["entities"] == ["rhino"]
    log = git(core.root, "log", "--format=%s", "--name-only", "-n2")
    assert "dictionary.md" in log and "reconcile:" in log


def test_write_left_uncommitted_by_a_crash_is_committed_by_the_next_process(core: Store) -> None:
    """A crash between the atomic rename (index already updated) and the commit leaves a dirty file
    the stat gate will never look at again; the next process commits it on its first call."""
    r = core.remember("The puffin deploy needs two approvals.")
    core.feedback(r.id, helpful=True)
    path = core.root / r.path
    before = commit_count(core.root)
    text = path.read_text().replace("feedback: 0.1", "feedback: 0.2")
    files.atomic_write(path, text)  # what _write does ...
    index = core.index()
    st = path.stat()
    index.set_file(r.path, FileStat(st.st_mtime_ns, st.st_size, hashlib.sha256(text.encode()).hexdigest()))
    core.close()  # ... and the process dies before the commit
    again = Store.open(core.root)
    again.status()
    assert commit_count(core.root) == before + 1
    assert git(core.root, "status", "--porcelain", "--", "memories").strip() == ""
    assert f"Memory-Id: {r.id}" in git(core.root, "log", "-1", "--format=%B")
    again.close()


def test_fts_rows_held_back_in_a_transaction_are_searched_replaced_and_rolled_back(tmp_path: Path) -> None:
    """A bulk index inserts the FTS rows a batch at a time: inside the transaction a search still
    finds a memory just indexed, replacing or removing one leaves no row of it behind, and a
    rollback leaves nothing; after the commit every table holds exactly the memories."""
    from memory_mcp.index.db import FTS_BATCH, FTS_TABLES, Index
    from memory_mcp.truth.model import Memory, compose_body

    idx = Index.open(tmp_path / "index.sqlite")

    def note(i: int, text: str) -> None:
        idx.upsert(f"{i}.md", Memory(id=f"M{i:025d}", body=compose_body(text, None)), [], FileStat(0, 0, ""))

    try:
        with idx.transaction():
            for i in range(FTS_BATCH + 10):
                note(i, f"Osprey shard {i} sits on the batch host.")
            note(FTS_BATCH + 10, "The kestrel ledger is append only.")
            assert len(idx.fts("fts_stem", '"kestrel"', 5)) == 1
            note(FTS_BATCH + 11, "The heron queue drains nightly.")
            note(FTS_BATCH + 11, "The plover queue drains hourly.")  # same path: replaced while held back
            idx.remove_path(f"{FTS_BATCH + 10}.md")
        assert idx.fts("fts_word", '"kestrel"', 5) == [] and idx.fts("fts_tri", '"heron"', 5) == []
        assert len(idx.fts("fts_tri", '"plover"', 5)) == 1
        with pytest.raises(RuntimeError), idx.transaction():
            note(900, "The albatross only lives here.")
            raise RuntimeError("rolled back")
        assert idx.fts("fts_stem", '"albatross"', 5) == []
        rowids = {r for (r,) in idx.conn.execute("SELECT rowid FROM memories")}
        assert len(rowids) == FTS_BATCH + 11
        for table in FTS_TABLES:
            assert {r for (r,) in idx.conn.execute(f"SELECT rowid FROM {table}")} == rowids
    finally:
        idx.close()


def test_another_connections_commit_does_not_drop_rows_held_back_in_a_transaction(tmp_path: Path) -> None:
    """Noticing another connection's commit forgets what was read, never what this transaction
    holds back to write: the memory indexed before the check keeps its FTS rows and its counts."""
    from memory_mcp.index.db import FTS_TABLES, Index
    from memory_mcp.truth.model import Memory, compose_body

    a, b = Index.open(tmp_path / "index.sqlite"), Index.open(tmp_path / "index.sqlite")
    try:
        a.count()
        b.set_meta("touched", "by b")  # a commit a has not seen yet
        with a.transaction():
            a.upsert("1.md", Memory(id=f"M{1:025d}", body=compose_body("The kestrel ledger.", None)), [],
                     FileStat(0, 0, ""))
            a.count()  # sees b's commit
        for table in FTS_TABLES:
            assert a.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 1
        assert a.conn.execute("SELECT n FROM tallies WHERE field = 'state'").fetchone()[0] == 1
    finally:
        a.close()
        b.close()


def test_an_upsert_outside_a_transaction_writes_everything_it_held_back(tmp_path: Path) -> None:
    """Called on its own (no transaction open), an upsert or a removal is its own transaction: its
    FTS rows, term counts and status counts are written when it returns, not left held back."""
    from memory_mcp.index.db import FTS_TABLES, Index
    from memory_mcp.truth.model import Memory, compose_body

    idx = Index.open(tmp_path / "index.sqlite")
    try:
        idx.upsert("1.md", Memory(id=f"M{1:025d}", body=compose_body("The kestrel ledger.", None)), [],
                   FileStat(0, 0, ""))
        assert not idx.conn.in_transaction
        other = sqlite3.connect(tmp_path / "index.sqlite")  # sees only what was committed
        for table in FTS_TABLES:
            assert other.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 1
        assert other.execute("SELECT doc FROM term_df WHERE term = 'kestrel'").fetchone() == (1,)
        assert other.execute("SELECT n FROM tallies WHERE field = 'state'").fetchone() == (1,)
        idx.remove_path("1.md")
        assert other.execute("SELECT count(*) FROM term_df").fetchone() == (0,)
        assert other.execute("SELECT n FROM tallies WHERE field = 'state'").fetchone() == (0,)
        other.close()
    finally:
        idx.close()
