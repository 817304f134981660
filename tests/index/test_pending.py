"""The open conflict pairs every recall counts and memory_status lists: computed in SQL, kept until
a row changes. The rules are those of the files: a pair is open while both sides are live and
neither side settled it."""

from __future__ import annotations

from pathlib import Path

from conftest import fm_file, new_id

from memory_mcp.app.store import Store


def test_open_pairs_follow_the_files_and_the_next_write(tmp_path: Path) -> None:
    root = tmp_path / "store"
    Store.open(root).close()
    ids = {name: new_id() for name in "abcdefgh"}
    i = ids.__getitem__
    fm_file(root, "a.md", "# A\n\nalpha\n", id=i("a"), conflicts_with=[i("b"), i("c"), i("d"), i("e"), new_id()])
    fm_file(root, "b.md", "# B\n\nbravo\n", id=i("b"), conflicts_with=[i("a")])  # the same pair, seen from b
    fm_file(root, "c.md", "# C\n\ncharlie\n", id=i("c"), state="deprecated")  # one side retired
    fm_file(root, "d.md", "# D\n\ndelta\n", id=i("d"), distinct_from=[i("a")])  # settled: keep both
    fm_file(root, "e.md", "# E\n\necho\n", id=i("e"), superseded_by=i("f"))  # settled: replaced
    fm_file(root, "f.md", "# F\n\nfoxtrot\n", id=i("f"), supersedes=[i("e")])
    fm_file(root, "g.md", "# G\n\ngolf\n", id=i("g"), conflicts_with=[i("h")])
    fm_file(root, "h.md", "# H\n\nhotel\n", id=i("h"))
    store = Store.open(root)
    try:
        listed = {frozenset((p.id, p.other_id)) for p in store.status().pending_conflicts}
        assert listed == {frozenset((i("a"), i("b"))), frozenset((i("g"), i("h")))}
        assert store.recall("golf").pending_conflicts == 2
        # A write to one side closes its pair; the count a recall reports follows at once.
        store.resolve(i("g"), i("h"), "keep_both")
        assert store.recall("golf").pending_conflicts == 1
        assert [{p.title, p.other_title} for p in store.status().pending_conflicts] == [{"A", "B"}]
    finally:
        store.close()
