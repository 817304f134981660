"""memory_status from the index's own counts (`tallies`, kept by triggers) and SQL lists: the same
answers as counting every row, through writes, state moves, hand edits, deletions and a reindex."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from conftest import fm_file, make_store

from memory_mcp.schema import TALLIED
from memory_mcp.store import Store


def _counted(s: Store) -> dict[str, dict[str, int]]:
    rows = s.index().rows()
    return {f"by_{c}": dict(Counter(getattr(r, c) for r in rows)) for c in TALLIED}


def _reported(s: Store) -> dict[str, dict[str, int]]:
    counts = s.status().counts
    return {f"by_{c}": counts[f"by_{c}"] for c in TALLIED}


def test_tallies_follow_every_change_of_the_rows(tmp_path: Path) -> None:
    root = make_store(tmp_path / "s")
    s = Store.open(root)
    a = s.remember("The heron service retries three times.", type="decision").id
    b = s.remember("The ibis queue drains nightly at two.", type="episode").id
    s.remember("Pat prefers tabs over spaces in Go files.", type="preference")
    assert _reported(s) == _counted(s)
    s.forget(a, mode="archive")
    s.update(b, type="fact")
    assert _reported(s) == _counted(s)
    fm_file(root, "by-hand.md", "# By hand\n\nThe plover cache is warm.\n", type="reference", trust="user-stated")
    (root / s.read(id=b).path).unlink()
    assert _reported(s) == _counted(s)
    s.reindex()
    assert _reported(s) == _counted(s)
    assert s.status().counts["total"] == 3
    assert s.status().counts["by_state"] == {"active": 2, "archived": 1}


def test_status_lists_come_from_sql_with_the_old_rules(tmp_path: Path) -> None:
    root = make_store(tmp_path / "s")
    fm_file(root, "due.md", "# Due\n\nRotate the staging keys.\n", review_after="2020-01-01")
    fm_file(root, "later.md", "# Later\n\nRotate the prod keys.\n", review_after="2999-01-01")
    fm_file(root, "old.md", "# Old episode\n\nWe paired on the parser.\n", type="episode",
            created="2020-01-01T00:00:00Z", updated="2020-01-01T00:00:00Z")
    fm_file(root, "bad.md", "# Misleading\n\nThe build uses make.\n", feedback="-0.6")
    (root / "memories" / "no-id.md").write_text("# No id\n\nA note without frontmatter.\n", encoding="utf-8")
    r = Store.open(root).status()
    assert [x.title for x in r.review_due] == ["Due"]
    assert [x.title for x in r.distill_candidates] == ["Old episode"]
    assert [x.title for x in r.withheld] == ["Misleading"]
    assert [x.title for x in r.provisional] == ["No id"]
