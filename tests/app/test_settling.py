"""`memory-mcp conflicts`: the open pairs listed a page at a time, with totals in memory_status and
the import report, and settled in bulk as one commit (keep_both, or newer supersedes older)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import EXE, fm_file, git, make_store, new_id, subjects

from memory_mcp.adapters import render
from memory_mcp.app.store import Store
from memory_mcp.app.transfer import EXPORT_FORMAT, EXPORT_VERSION
from memory_mcp.app.upkeep import LIST_LIMIT
from memory_mcp.truth.errors import InvalidArgument


def _star(store: Path, n: int) -> tuple[str, list[str]]:
    """One hub memory listing `n` others in conflicts_with: `n` open pairs, written by hand."""
    others = [new_id() for _ in range(n)]
    for i, other in enumerate(others):
        fm_file(store, f"leaf-{i}.md", f"# Leaf {i}\n\nThe deploy window is slot {i}.\n", id=other,
                created=f"2026-01-{i + 1:02d}T00:00:00Z")
    hub = new_id()
    fm_file(store, "hub.md", "# Hub\n\nThe deploy window is Friday.\n", id=hub, created="2026-06-01T00:00:00Z",
            conflicts_with=others)
    return hub, others


def test_status_gives_the_total_and_how_many_more(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s")
    _star(store, LIST_LIMIT + 5)
    r = Store.open(store).status()
    assert len(r.pending_conflicts) == LIST_LIMIT
    assert r.pending_conflicts_total == LIST_LIMIT + 5
    assert f"{LIST_LIMIT} of {LIST_LIMIT + 5}, 5 more: `memory-mcp conflicts`" in render.status(r)


def test_listing_pages_through_every_pair_once(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s")
    hub, others = _star(store, 7)
    s = Store.open(store)
    pages = [s.conflicts(limit=3, offset=o) for o in (0, 3, 6)]
    assert [p.total for p in pages] == [7, 7, 7]
    seen = [p.other_id if p.id == hub else p.id for page in pages for p in page.pairs]
    assert sorted(seen) == sorted(others)
    assert s.conflicts(id=others[0]).total == 1
    with pytest.raises(InvalidArgument):
        s.conflicts(limit=0)


def test_keep_both_in_bulk_is_one_commit_and_never_raised_again(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s")
    hub, others = _star(store, 6)
    s = Store.open(store)
    s.refresh()  # commits the hand-written files
    before = len(subjects(store))
    dry = s.resolve_all(decision="keep_both")
    assert not dry.applied and len(dry.settled) == 6 and len(subjects(store)) == before
    assert s.conflicts().total == 6  # a dry run changes nothing
    done = s.resolve_all(decision="keep_both", apply=True)
    assert done.applied and len(done.settled) == 6 and done.commit
    assert len(subjects(store)) == before + 1
    assert subjects(store, 1) == ["resolve: keep_both for 6 conflict pairs"]
    assert s.conflicts().total == 0
    hub_file = s.read(id=hub)
    assert sorted(hub_file.frontmatter["distinct_from"]) == sorted(others)
    assert git(store, "status", "--porcelain").strip() == ""


def test_newer_in_bulk_builds_one_chain_through_the_newest_of_each(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s")
    s = Store.open(store)
    ids = [s.remember(f"The payments-service now retries webhooks {i + 2} times instead of once",
                      entities=["payments-service"]).id for i in range(3)]
    assert s.conflicts().total >= 3
    files_before = {p: p.read_bytes() for p in (store / "memories").rglob("*.md")}
    dry = s.resolve_all(decision="newer")
    assert {p: p.read_bytes() for p in (store / "memories").rglob("*.md")} == files_before
    done = s.resolve_all(decision="newer", apply=True)
    assert any("which had replaced" in n for n in done.notes)
    assert done.notes == dry.notes and [p.pair for p in done.settled] == [p.pair for p in dry.settled]
    # The newest stays active; each older one is replaced by the next, so the chain never forks.
    assert s.read(id=ids[-1]).state == "active"
    for older, newer in zip(ids, ids[1:], strict=False):
        read = s.read(id=older)
        assert (read.state, read.frontmatter["superseded_by"]) == ("archived", newer)
        assert not read.frontmatter.get("conflicts_with")
    assert s.conflicts().total == 0


def test_commit_filter_keeps_the_pairs_of_that_commits_memories(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s")
    s = Store.open(store)
    s.remember("The staging database is Postgres 15 on db-stage-1", entities=["staging-db"])
    first = s.remember("The staging database is now Postgres 16 on db-stage-2", entities=["staging-db"])
    s.remember("The billing cron now runs at 02:00 instead of 03:00", entities=["billing-cron"])
    s.remember("The billing cron runs at 04:00 since the move", entities=["billing-cron"])
    assert s.conflicts().total == 2
    head_of_first = git(store, "log", "--format=%H", "-n1", "--grep", "Postgres 16").strip()
    picked = s.conflicts(commit=head_of_first[:10])
    assert picked.total == 1 and first.id in (picked.pairs[0].id, picked.pairs[0].other_id)
    for bad in ("0000000000", "-n1", "no-such-ref"):
        with pytest.raises(InvalidArgument, match="no commit"):
            s.conflicts(commit=bad)


def test_import_report_counts_pairs_and_names_the_bulk_command(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s")
    s = Store.open(store)
    s.remember("The payments-service retries webhooks 3 times", entities=["payments-service"])
    records = [{"id": new_id(), "body": f"# Retries {n}\n\nThe payments-service now retries webhooks {n} "
                "times instead of 3.\n", "frontmatter": {"entities": ["payments-service"]}} for n in range(4, 12)]
    doc = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "memories": records}
    report = s.import_memories("export", text=json.dumps(doc))
    assert len(report.conflicts) > 2 and report.commit
    pairs = sum(len(c.conflicts_with) for c in report.conflicts)
    text = report.summary(limit=2)
    assert f"({pairs} pairs to settle)" in text
    assert f"... and {len(report.conflicts) - 2} more conflicts" in text
    assert f"memory-mcp conflicts --commit {report.commit[:12]} --resolve keep_both" in text
    assert s.conflicts(commit=report.commit).total == s.conflicts().total > 0


def test_cli_conflicts_lists_then_settles(tmp_path: Path) -> None:
    store = make_store(tmp_path / "s")
    _star(store, 3)

    def cli(*args: str) -> str:
        done = subprocess.run([str(EXE), "--store", str(store), "conflicts", *args], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert cli().startswith("3 open conflict pairs")
    assert "... and 2 more (--offset 1)" in cli("--limit", "1")
    assert "would settle 3 pairs with keep_both" in cli("--resolve", "keep_both")
    assert "settled 3 pairs with keep_both (commit " in cli("--resolve", "keep_both", "--yes")
    assert cli().startswith("0 open conflict pairs")
    bad = subprocess.run([str(EXE), "--store", str(store), "conflicts", "--commit", "nope"], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode != 0 and "no commit 'nope'" in bad.stderr
