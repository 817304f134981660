"""Second outside review: each test demonstrates one bug and is marked xfail(strict) until it is
fixed. Real git, real SQLite, the core `Store` or a `memory-mcp serve` subprocess over stdio."""

from __future__ import annotations

import os
import time
from pathlib import Path

import mcp.types as types
import pytest
from conftest import commit_count, git, make_store, open_server

from memory_mcp.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return make_store(tmp_path / "store")


@pytest.fixture
def s(store: Path):
    st = Store.open(store)
    yield st
    st.close()


def _stale_git_lock(store: Path) -> Path:
    lock = Path(git(store, "rev-parse", "--absolute-git-dir").strip()) / "index.lock"
    lock.write_text("")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    return lock


# ------------------------------------------------------------------ git
def test_stale_git_lock_recovered_after_the_process_has_already_written(store: Path, s: Store) -> None:
    s.remember("The heron service restarts nightly.")  # a long-running server has written before
    lock = _stale_git_lock(store)  # another process crashed an hour ago, leaving git's lock behind
    before = commit_count(store)
    s.remember("The egret service restarts weekly.")
    assert commit_count(store) == before + 1 and not lock.exists()


# ------------------------------------------------------------------ purge and elicitation
def _elicit(answer: str, seen: list[str]):
    async def callback(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params.message)
        return types.ElicitResult(action=answer, content={"ok": True} if answer == "accept" else None)
    return callback


@pytest.mark.anyio
async def test_purge_asks_the_person_about_a_memory_archived_by_hand(store: Path) -> None:
    seen: list[str] = []
    async with open_server(store, elicitation_callback=_elicit("accept", seen)) as sess:
        m = await sess.call("memory_remember", content="The ibis export runs on Sundays.")
        path = store / m["path"]
        path.write_text(path.read_text().replace("state: active", "state: archived"))  # archived in an editor
        r = await sess.raw("memory_forget", id=m["id"], mode="purge")
        assert not r.is_error, r.content
        assert seen and not path.exists()


@pytest.mark.anyio
async def test_declined_purge_does_not_tell_the_agent_to_pass_confirm(store: Path) -> None:
    seen: list[str] = []
    async with open_server(store, elicitation_callback=_elicit("decline", seen)) as sess:
        m = await sess.call("memory_remember", content="The jacana report is kept for audits.")
        await sess.call("memory_forget", id=m["id"], mode="archive")
        err = await sess.error("memory_forget", id=m["id"], mode="purge")
        assert seen, "the person was not asked"
        assert "confirm=true" not in err, err


# ------------------------------------------------------------------ provisional ids in responses
def test_purge_of_a_file_without_id_reports_the_id_it_had(store: Path, s: Store) -> None:
    (store / "memories" / "hand.md").write_text("---\nstate: archived\n---\n# Hand note\n\nOtters nap at noon.\n")
    pid = s.status().provisional[0].id
    r = s.forget(pid, "purge", confirm=True)
    assert r.id == pid
    assert "Memory-Id: " + pid in git(store, "log", "-1", "--format=%B")


def test_supersede_of_a_file_without_id_reports_its_permanent_id(store: Path, s: Store) -> None:
    (store / "memories" / "hand.md").write_text("# Badger naps\n\nBadgers nap at noon.\n")
    pid = s.status().provisional[0].id
    r = s.remember("Badgers nap at one o'clock now.", supersedes=[pid])
    chain = s.read(id=r.id).chain.supersedes
    assert r.superseded == chain


# ------------------------------------------------------------------ search
def test_short_cyrillic_word_found_inside_a_longer_word(s: Store) -> None:
    latin = s.remember("The analytics events are stored in MongoDB.")
    cyr = s.remember("Биллинг хранит данные в СУБД PostgreSQL.")
    assert [h.id for h in s.recall("db").results] == [latin.id]  # the fallback works for Latin
    assert [h.id for h in s.recall("бд").results] == [cyr.id]
