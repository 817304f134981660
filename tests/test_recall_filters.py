"""Recall's filters run in SQL, before ranking: memories a filter leaves out can never crowd the
ones it keeps out of the candidate pool (the search used to filter afterwards and re-run the whole
planner with a pool four times larger when too few survived)."""

from __future__ import annotations

from pathlib import Path

from conftest import make_store

from memory_mcp.store import Store


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
