"""The pieces of authorship and acceptance in one process (tests/adapters/test_accept.py runs them
through the hooks, the CLI and the server): the blob a decision is keyed by is git's, the author
comes from one `git log` at reconcile, a line's provenance stays within its token cost."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory_mcp.adapters.hooks.events import prompt_line
from memory_mcp.app import authorship
from memory_mcp.app.store import Store
from memory_mcp.index import authors
from memory_mcp.truth.recall import Hit
from memory_mcp.truth.standing import ACCEPTED, OWN, REJECTED, UNACCEPTED, blob_sha, rank


def test_the_blob_a_decision_is_keyed_by_is_the_one_git_names(tmp_path: Path) -> None:
    data = "---\nid: x\n---\n# A title\n\nsome text \u00e9\n".encode()
    (tmp_path / "f").write_bytes(data)
    assert blob_sha(data) == subprocess.run(["git", "hash-object", str(tmp_path / "f")], capture_output=True,
                                            text=True, check=True).stdout.strip()


def test_own_then_accepted_then_unaccepted_is_one_sort_key() -> None:
    assert sorted([UNACCEPTED, ACCEPTED, OWN, ""], key=rank) == [OWN, ACCEPTED, "", UNACCEPTED]


def test_a_lines_provenance_costs_at_most_12_tokens() -> None:
    base = Hit(id="01JD2K3A9FZQ4W8XVBH5T6N701", path="memories/m.md", title="Billing deploy rules",
               excerpt="Billing deploys go out from main only.", type="preference", state="active",
               trust="user-stated", entities=[], updated=None, score=1.0)
    plain = prompt_line(base)
    marked = prompt_line(Hit(**{**base.__dict__, "author": "Maximilian Alexander Featherstonehaugh-Smythe",
                                "standing": UNACCEPTED}))
    # The hooks count a line's tokens as its characters / 4.
    assert 0 < len(marked) // 4 - len(plain) // 4 <= 12, marked
    assert prompt_line(Hit(**{**base.__dict__, "standing": OWN})) == plain


def test_authors_are_read_once_per_new_commit_and_a_write_here_is_the_persons_own(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s")
    mem = store.remember("Releases are cut on Tuesdays after the freeze.", type="decision")
    hits = store.recall("releases cut tuesdays").results  # the next call reads the new commit's author
    index = store.index()
    got = authors.versions(index.conn)
    version = next(v for v in got.values() if v.id == mem.id)
    assert version.name == "memory-mcp"  # the fallback identity committed it
    assert index.get_meta(authors.AUTHORS_HEAD) == store.history.head_seen()
    with authorship.Reader() as reader:
        assert reader.standings([(version.id, version.blob)]) == {(version.id, version.blob): OWN}
        assert reader.seen(store.root)
    assert hits[0].standing == OWN and hits[0].author == ""
    store.close()


def test_the_authors_of_a_commit_made_here_are_recorded_as_git_log_reads_them(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A write records who wrote its commit's memory versions itself (`provenance.own_commits`): the
    next call read them back with a `git log` and a `git var` before. What it records is what that
    log gives, also in a time zone that is not whole hours from UTC."""
    monkeypatch.setenv("TZ", "IST-5:30")
    time.tzset()
    try:
        store = Store.open(tmp_path / "s")
        first = store.remember("Releases are cut on Tuesdays after the freeze.", type="decision")
        store.update(first.id, content="Releases are cut on Wednesdays after the freeze.")
        store.remember("The freeze starts on Monday at noon.")  # the last call: its commit is not read back yet
        trace = tmp_path / "git-trace.txt"
        monkeypatch.setenv("GIT_TRACE", str(trace))
        store.recall("releases freeze")
        started = trace.read_text() if trace.exists() else ""  # git writes it when one starts
        assert " log " not in started and " var " not in started
        monkeypatch.delenv("GIT_TRACE")
        index = store.index()
        recorded = {row[0]: tuple(row[1:])
                    for row in index.conn.execute("SELECT blob, name, email, date, subject FROM authors")}
        from_git = {blob: rest for blob, *rest in store.history.blob_authors()}
        assert recorded == {blob: tuple(rest) for blob, rest in from_git.items()}
        assert len(recorded) == 4  # the template's memories/.gitkeep, 3 versions
        assert sorted(r[3] for r in recorded.values()) == [  # each version's commit subject, as git log gives it
            "init: new memory store", "remember: Releases are cut on Tuesdays after the freeze.",
            "remember: The freeze starts on Monday at noon.", "update: Releases are cut on Tuesdays after the freeze."]
        assert next(iter(recorded.values()))[2].endswith("+05:30")
        assert index.get_meta(authors.AUTHORS_HEAD) == store.history.head_seen()
        assert index.get_meta(authors.PERSON_EMAIL) == store.history.identity_email()
        store.close()
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()



def test_a_decision_made_by_another_process_reaches_an_open_stores_kept_reader(tmp_path: Path) -> None:
    """The store keeps its standings reader open across calls (`Session.reader`): a decision another
    process commits afterwards (`memory-mcp accept` in a terminal) must still be read on the next call."""
    store = Store.open(tmp_path / "s")
    store.remember("Releases are cut on Tuesdays after the freeze.", type="decision")
    store.recall("releases")
    kept = store.session.reader()
    teammates = ("01JD2K3A9FZQ4W8XVBH5T6N701", "a" * 40)
    assert kept.standings([teammates]) == {}
    subprocess.run([sys.executable, "-c", "import sys; from memory_mcp.app import authorship; "
                    "authorship.mark([(sys.argv[1], sys.argv[2])], sys.argv[3])", *teammates, REJECTED], check=True)
    store.recall("releases")
    assert store.session.reader() is kept and kept.standings([teammates]) == {teammates: REJECTED}
    assert kept.rejected_count() == 1
    store.close()
