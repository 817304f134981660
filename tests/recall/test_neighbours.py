"""The neighbours-in-time signal (issue 13): a memory written in the same `source` just before or
after a strong match gets a share of its score. Real stores and real SQLite; the memories are
written by hand with their `source` and `created` so their order in time is what the test says."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import fm_file, new_id

from memory_mcp.app.store import Store
from memory_mcp.index.db import Index
from memory_mcp.index.schema import FileStat, RowFilter
from memory_mcp.recall import neighbours, query
from memory_mcp.truth.model import Memory, State, compose_body
from memory_mcp.truth.stamp import Writer, new_session

SESSION = "session 2026-08-24 staging"
# (name, source, created, text). The cause of the failure is written right after the failure, in the
# same session; a template about causes in general says "cause" more often.
MEMORIES = [
    ("failure", SESSION, "2026-08-24T09:00:00Z", "Staging deploys fail\n\nStaging deploys fail with a 401 from the registry."),
    ("found", SESSION, "2026-08-24T09:05:00Z", "Runner token\n\nCause found: the CI runner lost its token when secrets rotated."),
    ("lunch", SESSION, "2026-08-24T09:10:00Z", "Lunch\n\nLunch order for Friday is noodles."),
    ("template", "", "2026-08-01T10:00:00Z", "RCA template\n\nRoot cause template: cause, impact, fix, cause owner."),
    ("other", "session 2026-08-30", "2026-08-30T10:00:00Z", "Approvals\n\nProduction deploys need two approvals."),
]
QUERY = "what is the cause of the staging deploys that fail"


def _store(root: Path, with_source: bool) -> tuple[Store, dict[str, str]]:
    store = Store.open(root)
    ids: dict[str, str] = {}
    for name, source, created, text in MEMORIES:
        mem_id = new_id()
        ids[mem_id] = name
        fm_file(root, f"{name}.md", text + "\n", id=mem_id, type="fact", state="active", trust="agent-inferred",
                source=f'"{source}"' if with_source and source else None, created=created, updated=created)
    return store, ids


def _ranked(store: Store, ids: dict[str, str]) -> list[str]:
    return [ids[h.id] for h in store.recall(query=QUERY, limit=10).results]


def test_a_recall_finds_the_memory_written_next_to_the_best_match_in_its_source(tmp_path: Path) -> None:
    store, ids = _store(tmp_path / "store", with_source=True)
    try:
        got = _ranked(store, ids)
    finally:
        store.close()
    assert got[:2] == ["failure", "found"], got
    assert got.index("found") < got.index("template")


def test_memories_without_a_source_are_ranked_on_their_text_alone(tmp_path: Path) -> None:
    store, ids = _store(tmp_path / "store", with_source=False)
    try:
        got = _ranked(store, ids)
    finally:
        store.close()
    # The same files with no source: the template's two "cause"s (and the other session's "deploys")
    # beat the cause that was found.
    assert got[0] == "failure" and got.index("template") < got.index("found"), got


def test_a_neighbour_that_matches_nothing_of_the_query_is_no_result(tmp_path: Path) -> None:
    store, ids = _store(tmp_path / "store", with_source=True)
    try:
        got = _ranked(store, ids)
    finally:
        store.close()
    assert "lunch" not in got, got


def test_memories_written_in_one_server_session_are_neighbours_with_no_source(tmp_path: Path) -> None:
    # The server never set `source`, so an agent's memories had no neighbours; each write is now
    # stamped with the session that wrote it, and that is the thread neighbours follow. All of them
    # are written within a second or two: write order survives the tie in `created`.
    store = Store.open(tmp_path / "store")
    ids: dict[str, str] = {}
    sessions = {SESSION: Writer("agent", new_session()), "session 2026-08-30": Writer("agent", new_session())}
    try:
        for name, source, _created, text in MEMORIES:
            ids[store.remember(text, by=sessions.get(source), type="fact").id] = name
        got = _ranked(store, ids)
        rows = {ids[r.id]: r for r in store.index().select(RowFilter(frozenset({"active"})))}
    finally:
        store.close()
    assert all(not r.source for r in rows.values())
    assert rows["failure"].written_by["session"] == rows["found"].written_by["session"] != rows["other"].thread
    assert got[:2] == ["failure", "found"], got
    assert got.index("found") < got.index("template")


def test_write_order_in_a_session_survives_writes_in_the_same_second(tmp_path: Path) -> None:
    # Ids made by one process sort in the order they were made, also within one millisecond, and
    # adjacency in a thread is by (created, id): the second written is next to the first and the third.
    made = [new_id() for _ in range(2000)]
    assert made == sorted(made)
    index = Index.open(tmp_path / "index.sqlite")
    try:
        with index.transaction():
            for i, name in enumerate("abc"):
                mem = Memory(id=made[i], body=compose_body(f"note {name}", None), created="2026-01-01T10:00:00Z",
                             written_by={"client": "agent", "session": "S1"})
                index.upsert(f"{name}.md", mem, [], FileStat(0, 0, ""))
        r = {p[:-3]: rowid for rowid, p in index.conn.execute("SELECT rowid, path FROM memories")}
        assert index.neighbours([r["b"]], 1) == {r["b"]: [r["a"], r["c"]]}
        assert index.neighbours([r["a"]], 1) == {r["a"]: [r["b"]]}
    finally:
        index.close()


def _index(tmp_path: Path, rows: list[tuple[str, str | None, str, str]]) -> tuple[Index, dict[str, int]]:
    """An index of (name, created, source, state) memories, inserted in the order given."""
    index = Index.open(tmp_path / "index.sqlite")
    with index.transaction():
        for i, (name, created, source, state) in enumerate(rows):
            mem = Memory(id=f"P{i:016X}", body=compose_body(f"note {name}", None), source=source, created=created,
                         state=State(state))
            index.upsert(f"{name}.md", mem, [], FileStat(0, 0, ""))
    rowid = {p[:-3]: r for r, p in index.conn.execute("SELECT rowid, path FROM memories")}
    return index, rowid


def test_neighbours_follow_created_within_the_source_not_file_or_insertion_order(tmp_path: Path) -> None:
    # Inserted out of order; two memories share a second (ties go by id); another source interleaves.
    index, r = _index(tmp_path, [
        ("c", "2026-01-01T10:00:02Z", "s", "active"),
        ("a", "2026-01-01T10:00:00Z", "s", "active"),
        ("x", "2026-01-01T10:00:01Z", "t", "active"),
        ("e", "2026-01-01T10:00:04Z", "s", "active"),
        ("b", "2026-01-01T10:00:01Z", "s", "active"),
        ("d", "2026-01-01T10:00:02Z", "s", "active"),
        ("n", "2026-01-01T10:00:03Z", "", "active"),
        ("z", None, "s", "active"),
    ])
    try:
        name = {v: k for k, v in r.items()}
        got = index.neighbours([r["c"], r["x"], r["n"], r["z"]], 2)
        # c sits between b (10:00:01) and d (same second, later id); a and e are two steps away.
        assert {name[k]: sorted(name[n] for n in v) for k, v in got.items()} == {"c": ["a", "b", "d", "e"], "x": []}
        assert index.neighbours([r["c"]], 1) == {r["c"]: [r["b"], r["d"]]}
        assert index.neighbours([r["c"]], 2) == index.neighbours([r["c"]], 2)
    finally:
        index.close()


def test_a_memory_the_recall_leaves_out_is_stepped_over(tmp_path: Path) -> None:
    index, r = _index(tmp_path, [
        ("a", "2026-01-01T10:00:00Z", "s", "active"),
        ("b", "2026-01-01T10:00:01Z", "s", "archived"),
        ("c", "2026-01-01T10:00:02Z", "s", "active"),
    ])
    try:
        active = RowFilter(frozenset({"active"}))
        assert index.neighbours([r["a"]], 1, active) == {r["a"]: [r["c"]]}
        assert index.neighbours([r["a"]], 1) == {r["a"]: [r["b"]]}
    finally:
        index.close()


def test_each_neighbour_is_an_indexed_step(tmp_path: Path) -> None:
    index, r = _index(tmp_path, [("a", "2026-01-01T10:00:00Z", "s", "active")])
    try:
        plan = " ".join(str(row[-1]) for row in index.conn.execute(
            "EXPLAIN QUERY PLAN SELECT m.rowid FROM memories m WHERE m.thread = ? AND (m.created, m.id) < (?, ?)"
            " ORDER BY m.created DESC, m.id DESC LIMIT 1", ("s", "2026-01-01T10:00:00Z", "x")))
        assert "memories_by_thread" in plan, plan
    finally:
        index.close()


@pytest.mark.parametrize("share", [0.0, neighbours.SHARE])
def test_the_order_is_the_same_on_every_run(tmp_path: Path, share: float, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(neighbours, "SHARE", share)
    index, _ = _index(tmp_path, [(f"m{i}", f"2026-01-01T10:00:{i % 3:02d}Z", "s", "active") for i in range(12)])
    try:
        first = query.text_scores(index, "note", 50)
        assert all(query.text_scores(index, "note", 50) == first for _ in range(3))
        assert list(first) == sorted(first, key=lambda k: (-first[k], k))
    finally:
        index.close()
