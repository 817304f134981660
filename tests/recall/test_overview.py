"""memory_status from the index's own counts (`tallies`, kept by triggers) and SQL lists: the same
answers as counting every row, through writes, state moves, hand edits, deletions and a reindex; and
the session digest from SQL, in the order its rule gave over every row."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from conftest import fm_file, make_store

from memory_mcp.app.store import Store
from memory_mcp.index.schema import TALLIED
from memory_mcp.recall import ranking
from memory_mcp.truth import lifecycle


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


def _digest_by_every_row(s: Store, limit: int) -> list[str]:
    """The digest's rule applied to every row in Python, as reads.digest did before it read SQL."""
    now = datetime.now(UTC)
    rows = sorted((r for r in s.index().rows() if r.state == "active" and r.feedback > lifecycle.WITHHOLD_AT),
                  key=lambda r: r.rowid)
    usage = s.index().usage(r.id for r in rows)
    first = sorted((r for r in rows if r.type in ranking.DIGEST_FIRST), key=lambda r: (
        ranking.DIGEST_FIRST.index(r.type), -ranking.score(1.0, r.trust, r.state, r.updated,
                                                           usage.get(r.id, (0, None))[0], r.feedback, now)))
    rest = sorted((r for r in rows if r.type not in ranking.DIGEST_FIRST),
                  key=lambda r: (r.updated or r.created or "", r.id), reverse=True)
    return [r.id for r in (first + rest)[:limit]]


def test_digest_reads_sql_with_the_old_rules_and_order(tmp_path: Path) -> None:
    # The digest built every active row to rank a few dozen (most of SessionStart at 10k memories);
    # it now ranks preferences and decisions from five columns and lets SQLite sort the rest.
    root = make_store(tmp_path / "s")
    rng = random.Random(5)
    for n in range(60):
        day = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z"
        fm_file(root, f"m{n}.md", f"# Memory {n}\n\nThe heron service note number {n}.\n",
                type=rng.choice(["preference", "decision", "fact", "episode", "knowledge"]),
                trust=rng.choice(["user-stated", "agent-inferred", "imported"]),
                state=rng.choice(["active", "active", "active", "archived"]),
                feedback=rng.choice(["0", "0", "0.5", "-0.6"]), created=day,
                updated=rng.choice([day, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")]))
    s = Store.open(root)
    s.recall("heron service note")  # recall counts (heat) take part in the rank
    for limit in (1, 5, 20, 40, 100):
        assert [h.id for h in s.digest(limit)] == _digest_by_every_row(s, limit)
    assert len(s.digest(100)) == len(_digest_by_every_row(s, 100)) < 60


def test_tallies_held_back_in_a_transaction_are_dropped_with_its_rollback(tmp_path: Path) -> None:
    """The counts of a transaction are written just before it commits; one that rolls back leaves
    them as they were, and the next commit writes only its own."""
    import pytest

    root = make_store(tmp_path / "s")
    s = Store.open(root)
    s.remember("The heron service retries three times.", type="decision")
    before = _reported(s)
    idx = s.index()
    with pytest.raises(RuntimeError), idx.transaction():
        fm_file(root, "held.md", "# Held\n\nThe plover cache is warm.\n", type="reference")
        s.session.reconcile(idx, False)
        raise RuntimeError("rolled back")
    (root / "memories" / "held.md").unlink()
    assert _reported(s) == before
    s.remember("The ibis queue drains nightly at two.", type="episode")  # a commit after the rollback
    assert _reported(s) == _counted(s)
    assert s.status().counts["by_type"] == {"decision": 1, "episode": 1}


def test_digest_asks_standings_only_until_the_persons_own_fill_it_and_picks_as_a_full_sort(tmp_path: Path) -> None:
    # Asking every candidate's standing was a fifth of a SessionStart at 10k memories: the digest now
    # asks a batch at a time and stops once enough of the person's own are known.
    from memory_mcp.recall import overview
    from memory_mcp.truth.model import State
    from memory_mcp.truth.standing import DROPPED

    root = make_store(tmp_path / "s")
    rng = random.Random(9)
    for n in range(400):
        fm_file(root, f"m{n}.md", f"# Memory {n}\n\nThe osprey ledger note {n}.\n",
                type=rng.choice(["preference", "decision", "fact", "episode"]),
                created=f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z")
    s = Store.open(root)
    s.recall("osprey")
    conn, now = s.index().conn, datetime.now(UTC)
    asked: list[int] = []
    for share_own in (0.0, 0.3, 0.9):
        places = {r.id: (0 if rng.random() < share_own else rng.choice([1, 2, DROPPED])) for r in s.index().rows()}

        def rank(versions: list[tuple[str, str]], places: dict[str, int] = places) -> list[int]:
            asked.append(len(versions))
            return [places[mem_id] for mem_id, _ in versions]

        active = [r for r in s.index().rows() if r.state == State.ACTIVE.value and places[r.id] < DROPPED]
        first = ranking.DIGEST_FIRST
        usage = dict(conn.execute("SELECT id, recall_count FROM usage").fetchall())
        ranked = sorted((first.index(r.type), places[r.id], -ranking.score(
            1.0, r.trust, r.state, r.updated, usage.get(r.id, 0), r.feedback, now), r.rowid)
            for r in active if r.type in first)
        rest = sorted((r for r in active if r.type not in first), key=lambda r: (r.updated or r.created or "", r.id),
                      reverse=True)
        for limit in (5, 40):
            want = [rowid for *_, rowid in ranked[:limit]]
            want += [r.rowid for r in sorted(rest, key=lambda r: places[r.id])][: limit - len(want)]
            asked.clear()
            assert [r.rowid for r in overview.digest(conn, limit, now, rank)] == want
            if share_own == 0.9:
                assert sum(asked) < len(active) / 2
    s.close()
