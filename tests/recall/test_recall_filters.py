"""Recall's filters run in SQL, before ranking: memories a filter leaves out can never crowd the
ones it keeps out of the candidate pool (the search used to filter afterwards and re-run the whole
planner with a pool four times larger when too few survived)."""

from __future__ import annotations

from pathlib import Path

from conftest import make_store

from memory_mcp.app.store import Store


def _write(root: Path, name: str, state: str, type_: str, text: str) -> None:
    (root / "memories" / f"{name}.md").write_text(
        f"---\ntype: {type_}\nstate: {state}\ntrust: agent-inferred\nentities: [kestrel]\n---\n# {text}\n\n{text}\n")


def test_many_archived_matches_do_not_hide_the_one_active_memory(tmp_path: Path) -> None:
    root = make_store(tmp_path / "store")
    for i in range(300):  # far more than the planner's pool (limit x 8, at least 64)
        _write(root, f"old-{i}", "archived", "fact", f"kestrel kestrel kestrel deploy note {i}")
    _write(root, "live", "active", "fact", "a kestrel deploy happened once, among other things said here")
    store = Store.open(root)
    hits = store.recall("kestrel deploy", limit=1).results
    assert [h.path for h in hits] == ["memories/live.md"]
    assert len(store.recall("kestrel deploy", limit=5, include_archived=True).results) == 5


def test_a_type_filter_finds_the_one_decision_among_many_better_facts(tmp_path: Path) -> None:
    root = make_store(tmp_path / "store")
    for i in range(300):
        _write(root, f"fact-{i}", "active", "fact", f"kestrel kestrel kestrel deploy fact {i}")
    _write(root, "choice", "active", "decision", "we chose to deploy kestrel on fridays, among other things")
    store = Store.open(root)
    hits = store.recall("kestrel deploy", limit=3, types=["decision"]).results
    assert [h.path for h in hits] == ["memories/choice.md"]
    withheld = store.recall("kestrel deploy", limit=3, entities=["kestrel"], types=["decision"]).results
    assert [h.path for h in withheld] == ["memories/choice.md"]


def test_a_listing_by_entity_starts_from_the_entity_index_not_every_memory(tmp_path: Path) -> None:
    # A recall with only an entity filter tested every memory with a correlated EXISTS: 50 ms at
    # 10,000 memories for an entity no memory carries (the perf harness's no-op call; 14-20 ms at
    # 7e4e5f0). The plan must look the entity up first.
    from memory_mcp.index.db import Index
    from memory_mcp.index.schema import RowFilter

    index = Index.open(tmp_path / "index.sqlite3")
    cond, args = RowFilter(states=frozenset({"active"}), entities=("no-such-entity",)).sql()
    plan = " | ".join(row[3] for row in index.conn.execute(
        f"EXPLAIN QUERY PLAN SELECT m.id FROM memories m WHERE 1{cond}", args))
    index.close()
    assert "entities_by_name" in plan and "SCAN m" not in plan, plan
