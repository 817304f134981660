"""Issue 3: the conflict gate and memory_resolve over stdio; decided pairs stay decided because they
live in the files, open pairs stay open for the same reason."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import Session, commit_count, fm_file, fm_value, git, new_id

from memory_mcp.recall.conflicts import pair_hash

pytestmark = pytest.mark.anyio


def pairs(status: dict) -> set[frozenset[str]]:
    return {frozenset((p["id"], p["other_id"])) for p in status["pending_conflicts"]}


async def test_conflict_surfaced_with_decision_material(s: Session, store: Path) -> None:
    a = await s.call("memory_remember", content="Deploys of the falcon service use helm charts from the infra repo.",
                     entities=["falcon", "helm"])
    raw_a = (store / a["path"]).read_bytes()
    b = await s.call("memory_remember", content="Deploys of the falcon service use kustomize overlays now.",
                     entities=["falcon", "kustomize"])
    assert b["duplicate"] is False and (store / b["path"]).exists()  # the write happens
    assert (store / a["path"]).read_bytes() == raw_a  # nothing is overwritten
    c = next(x for x in b["conflicts"] if x["id"] == a["id"])
    assert c["shared_entities"] == ["falcon"]
    assert c["title"] and c["excerpt"].startswith("Deploys of the falcon service use helm")
    assert 0 <= c["age_days"] < 1 and c["latest_wins_eligible"] is False
    assert b["warnings"] and "memory_resolve" in b["warnings"][0]
    assert fm_value(store / b["path"], "conflicts_with") == f"[{a['id']}]"
    st = await s.call("memory_status")
    assert frozenset((a["id"], b["id"])) in pairs(st)
    p = next(p for p in st["pending_conflicts"] if {p["id"], p["other_id"]} == {a["id"], b["id"]})
    assert p["pair"] == pair_hash(a["id"], b["id"])
    r = await s.call("memory_recall", query="falcon deploys")
    assert r["pending_conflicts"] >= 1


async def test_old_neighbour_is_latest_wins_eligible(s: Session, store: Path) -> None:
    old = datetime.now(UTC) - timedelta(days=60)
    stamp = old.strftime("%Y-%m-%dT%H:%M:%SZ")
    oid = new_id()
    fm_file(store, "osprey-old.md", "# Osprey cache size\n\nThe osprey cache is 2 GB.\n", id=oid,
            entities=["osprey"], created=stamp, updated=stamp)
    b = await s.call("memory_remember", content="The osprey cache is 8 GB since the upgrade.", entities=["osprey"])
    c = next(x for x in b["conflicts"] if x["id"] == oid)
    assert 59 <= c["age_days"] <= 61 and c["latest_wins_eligible"] is True


async def test_at_most_three_conflicts_and_retired_ones_skipped(s: Session) -> None:
    ids = [(await s.call("memory_remember", content=f"The gull pipeline stage {n} writes parquet files.",
                         entities=["gull"]))["id"] for n in range(5)]
    await s.call("memory_forget", id=ids[0], mode="deprecate", reason="wrong")
    await s.call("memory_forget", id=ids[1], mode="archive")
    new = await s.call("memory_remember", content="The gull pipeline writes avro files, not parquet.",
                       entities=["gull"])
    found = [c["id"] for c in new["conflicts"]]
    assert 1 <= len(found) <= 3
    assert ids[0] not in found  # deprecated memories are not raised
    superseder = await s.call("memory_remember", content="gull pipeline stage summary", supersedes=[ids[2]])
    again = await s.call("memory_remember", content="The gull pipeline writes orc files nowadays.", entities=["gull"])
    assert ids[2] not in [c["id"] for c in again["conflicts"]]  # superseded memories are not raised
    assert superseder["superseded"] == [ids[2]]


async def test_keep_both_settles_the_pair_for_good(s: Session, store: Path) -> None:
    a = await s.call("memory_remember", content="The heron API paginates with cursors.", entities=["heron-api"])
    # The gate raises a pair that says what changed (issue 13): here "instead of".
    b = await s.call("memory_remember", content="The heron API paginates with page numbers instead of cursors on v1.",
                     entities=["heron-api"])
    assert a["id"] in [c["id"] for c in b["conflicts"]]
    # an open pair elsewhere, to check it survives what the settled one does not
    x = await s.call("memory_remember", content="The ibex worker pool has 4 workers.", entities=["ibex"])
    y = await s.call("memory_remember", content="The ibex worker pool has 16 workers now.", entities=["ibex"])
    assert x["id"] in [c["id"] for c in y["conflicts"]]
    commits = commit_count(store)
    r = await s.call("memory_resolve", id=b["id"], other_id=a["id"], decision="keep_both")
    assert r["decision"] == "keep_both"
    assert commit_count(store) == commits + 1
    assert set(git(store, "log", "-1", "--name-only", "--format=").split()) == {a["path"], b["path"]}
    assert fm_value(store / a["path"], "distinct_from") == f"[{b['id']}]"
    assert fm_value(store / b["path"], "distinct_from") == f"[{a['id']}]"
    assert fm_value(store / b["path"], "conflicts_with") is None
    settled, open_pair = frozenset((a["id"], b["id"])), frozenset((x["id"], y["id"]))
    st = await s.call("memory_status")
    assert settled not in pairs(st) and open_pair in pairs(st)
    shutil.rmtree(store / ".derived")
    st = await s.call("memory_status")
    assert settled not in pairs(st) and open_pair in pairs(st)
    await s.call("memory_reindex")
    st = await s.call("memory_status")
    assert settled not in pairs(st) and open_pair in pairs(st)
    # writing a third memory on the same subject raises the new pairs, never the settled one
    c = await s.call("memory_remember", content="The heron API paginates with cursors on v2.",
                     entities=["heron-api"])
    assert set(x["id"] for x in c["conflicts"]) <= {a["id"], b["id"]}
    assert settled not in pairs(await s.call("memory_status"))
    # resolving the same way twice is harmless
    await s.call("memory_resolve", id=a["id"], other_id=b["id"], decision="keep_both")
    assert fm_value(store / a["path"], "distinct_from") == f"[{b['id']}]"


async def test_settled_pair_not_raised_when_written_again(s: Session, store: Path) -> None:
    """A memory whose frontmatter says distinct_from a neighbour does not raise that neighbour."""
    a = await s.call("memory_remember", content="The jackal build uses gradle 8.", entities=["jackal"])
    b = await s.call("memory_remember", content="The jackal build uses gradle 7 on the release branch.",
                     entities=["jackal"])
    await s.call("memory_resolve", id=a["id"], other_id=b["id"], decision="keep_both")
    await s.call("memory_update", id=b["id"], content="The jackal build uses gradle 7.6 on the release branch.")
    assert frozenset((a["id"], b["id"])) not in pairs(await s.call("memory_status"))


async def test_resolve_supersede_settles_the_pair(s: Session, store: Path) -> None:
    a = await s.call("memory_remember", content="The koala queue retries five times.", entities=["koala"])
    b = await s.call("memory_remember", content="The koala queue now retries twice, then dead-letters.",
                     entities=["koala"])
    assert frozenset((a["id"], b["id"])) in pairs(await s.call("memory_status"))
    await s.call("memory_resolve", id=b["id"], other_id=a["id"], decision="supersede")
    assert fm_value(store / b["path"], "conflicts_with") is None
    shutil.rmtree(store / ".derived")
    assert frozenset((a["id"], b["id"])) not in pairs(await s.call("memory_status"))
    assert await s.recall_ids("koala queue") == [b["id"]]


async def test_resolve_refuses_bad_decisions(s: Session) -> None:
    a = await s.call("memory_remember", content="The lynx cache is warmed at boot.")
    b = await s.call("memory_remember", content="The lynx cache is warmed lazily.")
    r = await s.raw("memory_resolve", id=a["id"], other_id=b["id"], decision="merge")
    assert r.is_error
    assert "[invalid_supersede]" in await s.error("memory_resolve", id=a["id"], other_id=a["id"],
                                                  decision="supersede")
