"""What the local page reads and writes through the facade (issue 35): the timeline and its
filters, a search through recall's own pipeline that records no usage, a memory's page, a version
of its file, the compare-and-swap a write carries (`expected_sha`) and undo."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, subjects
from ui_support import XSS_TITLE, Sample, sample_store

from memory_mcp.truth.errors import InvalidArgument, Stale
from memory_mcp.truth.recall import Recall
from memory_mcp.truth.standing import OWN, UNACCEPTED


@pytest.fixture
def sample(tmp_path: Path) -> Sample:
    made = sample_store(tmp_path / "s")
    yield made
    made.store.close()


def test_the_timeline_is_newest_change_first_with_counts_and_pages(sample: Sample) -> None:
    store = sample.store
    every = store.timeline()
    assert every.total == 7 and len(every.entries) == 7
    dates = [e.updated for e in every.entries]
    assert dates == sorted(dates, reverse=True)
    assert every.counts == {"decision": 2, "fact": 3, "knowledge": 1, "preference": 1}
    second = store.timeline(limit=3, offset=3)
    assert [e.id for e in second.entries] == [e.id for e in every.entries[3:6]] and second.total == 7
    with pytest.raises(InvalidArgument):
        store.timeline(limit=0)


def test_each_filter_of_the_timeline_selects_what_it_names(sample: Sample) -> None:
    store = sample.store

    def ids(**filters: object) -> set[str]:
        return {e.id for e in store.timeline(**filters).entries}  # type: ignore[arg-type]

    assert ids(types=["decision"]) == {sample.older, sample.newer}
    assert ids(trusts=["user-stated"]) == {sample.teammate}
    assert ids(entity="pnpm") == {sample.pnpm}
    assert ids(file="web/app/index.ts") == {sample.pnpm}
    assert ids(author="Robin Mate") == {sample.teammate}
    assert ids(standing=UNACCEPTED) == {sample.teammate}
    assert sample.teammate not in ids(standing=OWN) and len(ids(standing=OWN)) == 6
    store.forget(sample.img)
    assert ids(states=["archived"]) == {sample.img}
    assert "Robin Mate" in store.timeline().authors
    with pytest.raises(InvalidArgument):
        store.timeline(types=["nonsense"])


def test_a_search_ranks_through_recall_and_records_no_usage(sample: Sample) -> None:
    store = sample.store
    found = store.timeline("pnpm lockfile")
    assert found.searched and found.entries[0].id == sample.pnpm and found.entries[0].score > 0
    assert store.page(sample.pnpm).recall_count == 0  # a person looking is not an agent recalling
    assert {e.id for e in store.timeline("deploys", types=["decision"]).entries} == {sample.older, sample.newer}


def test_a_memorys_page_has_its_version_author_standing_and_open_pairs(sample: Sample) -> None:
    store = sample.store
    page = store.page(sample.older)
    assert [(p.id, p.other_id) for p in page.conflicts] == [(sample.newer, sample.older)]
    assert page.blob == git(store.root, "rev-parse", f"HEAD:{page.memory.path}").strip()
    mate = store.page(sample.teammate)
    assert (mate.author, mate.author_email, mate.standing) == ("Robin Mate", "robin@example.com", UNACCEPTED)
    assert store.page(sample.xss).memory.title == XSS_TITLE


def test_a_version_is_the_file_before_and_after_a_commit(sample: Sample) -> None:
    store = sample.store
    store.update(sample.pnpm, content="Use pnpm 9 in the web workspace.")
    head = store.head()
    assert head is not None and head.memory_ids == [sample.pnpm] and head.subject.startswith("update: ")
    v = store.version(sample.pnpm, head.commit)
    assert "the lockfile is pnpm's" in v.before and "Use pnpm 9" in v.after and "Use pnpm 9" not in v.before


def test_a_write_carrying_the_version_read_never_overwrites_a_hand_edit_made_since(sample: Sample) -> None:
    store = sample.store
    page = store.page(sample.pnpm)
    path = store.root / page.memory.path
    path.write_text(path.read_text(encoding="utf-8") + "\nAdded by hand in an editor.\n", encoding="utf-8")
    before = subjects(store.root)
    with pytest.raises(Stale, match="changed since it was read"):
        store.update(sample.pnpm, content="The page's stale text.", expected_sha=page.blob)
    with pytest.raises(Stale):
        store.forget(sample.pnpm, expected_sha=page.blob)
    assert "Added by hand in an editor." in path.read_text(encoding="utf-8")
    assert subjects(store.root)[1:] == before  # only the hand edit's own reconcile commit came
    fresh = store.page(sample.pnpm)
    assert "Now from what it holds." in store.update(sample.pnpm, content="Now from what it holds.",
                                                     expected_sha=fresh.blob).body


def test_undo_puts_back_a_commit_and_refuses_when_a_file_changed_since(sample: Sample) -> None:
    store = sample.store
    path = store.root / store.page(sample.pnpm).memory.path
    original = path.read_bytes()
    store.update(sample.pnpm, content="A change to undo.")
    head = store.head()
    assert head is not None
    done = store.undo(head.commit)
    assert path.read_bytes() == original and subjects(store.root, 1) == [f"undo: {head.subject}"]
    with pytest.raises(Stale, match="has changed since commit"):
        store.undo(head.commit)  # the undo changed the file since
    assert done.paths == [store.page(sample.pnpm).memory.path]


def test_undo_of_a_remember_removes_the_file_and_undo_of_a_purge_brings_it_back(sample: Sample) -> None:
    store = sample.store
    made = store.remember("A memory written by mistake.")
    path = store.root / made.path
    store.undo(store.head().commit)  # type: ignore[union-attr]
    assert not path.exists() and store.peek(made.id) is None
    store.forget(sample.img)
    store.forget(sample.img, mode="purge", confirm=True)
    store.undo(store.head().commit)  # type: ignore[union-attr]
    assert store.page(sample.img).memory.title == "An image tag" and store.page(sample.img).memory.state == "archived"
    assert not git(store.root, "status", "--porcelain", "--", "memories").strip()


def test_insights_count_weeks_authors_and_pairs_that_read_alike(sample: Sample) -> None:
    store = sample.store
    twin = store.remember("Deploys happen on Fridays, written again.", title="Fence-breaking backticks").id
    found = store.insights()
    assert found.total == 8 and found.counts["type"]["decision"] == 2
    assert sum(sum(c.values()) for _, c in found.weeks) == 8  # the teammate's of November included
    assert [w for w, _ in found.weeks] == sorted(w for w, _ in found.weeks)
    assert {(a.name, a.memories) for a in found.authors} >= {("Robin Mate", 1)}
    assert [(p.id, p.other_id) for p in found.alike] == [(sample.fence, twin)]
    assert found.clients == {"": 8}  # the facade called directly stamps no client; the teammate's has none


def test_prune_candidates_are_active_memories_unchanged_and_unrecalled_for_the_days(sample: Sample) -> None:
    store = sample.store
    assert store.prune_candidates(90).total == 0
    old = store.prune_candidates(30)  # the teammate's memory was last changed on 2026-11-02
    assert (old.total, [x.id for x in old.listed]) == (1, [sample.teammate])
    store.recall("CI caches the pnpm store between jobs")  # an agent's recall counts as use
    assert store.prune_candidates(30).total == 0


def test_a_preview_of_recall_records_no_usage(sample: Sample) -> None:
    store = sample.store
    assert store.preview(Recall("pnpm lockfile")).results[0].id == sample.pnpm
    assert store.page(sample.pnpm).recall_count == 0
    store.recall("pnpm lockfile")
    assert store.page(sample.pnpm).recall_count == 1


def test_sync_status_counts_ahead_and_behind_the_remote_from_git_alone(sample: Sample, tmp_path: Path) -> None:
    store = sample.store
    assert store.sync_status() is None  # no remote
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(store.root, "remote", "add", "origin", str(remote))
    status = store.sync_status()
    assert status is not None and not status.fetched and status.ahead == int(git(store.root, "rev-list", "--count", "HEAD"))
    branch = git(store.root, "branch", "--show-current").strip()
    git(store.root, "push", "-q", "-u", "origin", branch)
    store.remember("One more after the push.")
    status = store.sync_status()
    assert status is not None and (status.remote, status.ahead, status.behind, status.fetched) == ("origin", 1, 0, True)
    assert status.last_at == ""  # no sync recorded by memory-mcp here yet
