"""Issue 3: the state machine, supersede chains and purge, driven over stdio through the MCP client."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from conftest import Session, commit_count, fm_file, fm_value, git, new_id, subjects

from memory_mcp.truth import lifecycle
from memory_mcp.truth.model import State

pytestmark = pytest.mark.anyio

STATES = ["active", "archived", "deprecated"]
MODE_TO = {"archive": "archived", "deprecate": "deprecated", "restore": "active"}
EXPECTED_ALLOWED = {
    ("active", "archived"), ("active", "deprecated"),
    ("archived", "active"), ("archived", "deprecated"),
    ("deprecated", "active"),
}
_counter = itertools.count()


async def make(s: Session, state: str = "active", word: str | None = None, **kw) -> dict:
    """A fresh memory in `state`, with a unique word in its text."""
    n = next(_counter)
    word = word or f"lifeword{n}"
    m = await s.call("memory_remember", content=f"The {word} setting of build {n} is documented here.", **kw)
    if state == "archived":
        await s.call("memory_forget", id=m["id"], mode="archive")
    elif state == "deprecated":
        await s.call("memory_forget", id=m["id"], mode="deprecate", reason="made up for the test")
    m["word"] = word
    return m


def test_transition_table_is_the_designed_one() -> None:
    table = {(a.value, b.value) for a, tos in lifecycle.ALLOWED.items() for b in tos}
    assert table == EXPECTED_ALLOWED
    assert {State.ARCHIVED, State.DEPRECATED} == lifecycle.PURGEABLE


@pytest.mark.parametrize(("start", "mode"), list(itertools.product(STATES, MODE_TO)))
async def test_every_transition(s: Session, store: Path, start: str, mode: str) -> None:
    m = await make(s, start)
    path = store / m["path"]
    raw = path.read_bytes()
    commits = commit_count(store)
    target = MODE_TO[mode]
    args = {"reason": "superseded by reality"} if mode == "deprecate" else {}
    if (start, target) in EXPECTED_ALLOWED:
        r = await s.call("memory_forget", id=m["id"], mode=mode, **args)
        assert r["state"] == target and r["purged"] is False
        assert fm_value(path, "state") == target
        assert commit_count(store) == commits + 1
        assert subjects(store, 1)[0].startswith(f"forget: {mode}")
        assert f"Memory-Id: {m['id']}" in git(store, "log", "-1", "--format=%B")
        rd = await s.call("memory_read", id=m["id"])
        assert rd["state"] == target
    else:
        err = await s.error("memory_forget", id=m["id"], mode=mode, **args)
        assert "[invalid_transition]" in err
        allowed = sorted(b for a, b in EXPECTED_ALLOWED if a == start)
        assert all(name in err for name in allowed), err  # names the allowed moves
        assert path.read_bytes() == raw and commit_count(store) == commits


async def test_hidden_states_and_include_flags(s: Session) -> None:
    act = await make(s, "active", word="stateword")
    arc = await make(s, "archived", word="stateword")
    dep = await make(s, "deprecated", word="stateword")
    # three texts are the same words but differ in the memory, so they are not duplicates
    assert len({act["id"], arc["id"], dep["id"]}) == 3
    assert await s.recall_ids("stateword") == [act["id"]]
    r = await s.call("memory_recall", query="stateword", include_archived=True, include_deprecated=True)
    by_id = {h["id"]: h for h in r["results"]}
    assert set(by_id) == {act["id"], arc["id"], dep["id"]}
    assert [h["id"] for h in r["results"]] == [act["id"], arc["id"], dep["id"]]  # state weights 1 > 0.5 > 0.25
    assert by_id[arc["id"]]["state"] == "archived"
    assert set(await s.recall_ids("stateword", include_archived=True)) == {act["id"], arc["id"]}


async def test_deprecate_needs_a_reason_stored_and_cleared_on_restore(s: Session, store: Path) -> None:
    m = await make(s)
    path = store / m["path"]
    for reason in ("", "   \n\t"):
        err = await s.error("memory_forget", id=m["id"], mode="deprecate", reason=reason)
        assert "[reason_required]" in err
    assert fm_value(path, "state") == "active"
    await s.call("memory_forget", id=m["id"], mode="deprecate", reason="The team moved to  bazel\nlast spring")
    assert fm_value(path, "deprecated_reason") == "The team moved to bazel last spring"
    assert "reason: The team moved to bazel last spring" in git(store, "log", "-1", "--format=%B")
    rd = await s.call("memory_read", id=m["id"])
    assert rd["frontmatter"]["deprecated_reason"] == "The team moved to bazel last spring"
    r = await s.call("memory_forget", id=m["id"], mode="restore")
    assert r["state"] == "active"
    assert fm_value(store / m["path"], "deprecated_reason") is None
    assert m["id"] in await s.recall_ids(m["word"])


async def test_duplicate_of_a_deprecated_memory_is_written_again(s: Session, store: Path) -> None:
    m = await make(s, "deprecated")
    text = (store / m["path"]).read_text().split("\n---\n", 1)[1].split("\n\n", 1)[1]
    again = await s.call("memory_remember", content=text)
    assert again["duplicate"] is False and again["id"] != m["id"]


# ------------------------------------------------------------------ supersede
async def test_supersede_through_remember_is_one_commit(s: Session, store: Path) -> None:
    old = await make(s, word="kiwiword")
    commits = commit_count(store)
    new = await s.call("memory_remember", content="The kiwiword setting moved to the new config service.",
                       supersedes=[old["id"]])
    assert new["superseded"] == [old["id"]] and new["duplicate"] is False
    assert commit_count(store) == commits + 1
    changed = set(git(store, "log", "-1", "--name-only", "--format=").split())
    assert changed == {old["path"], new["path"]}
    body = git(store, "log", "-1", "--format=%B")
    assert f"Memory-Id: {new['id']}" in body and f"Memory-Id: {old['id']}" in body
    assert fm_value(store / old["path"], "state") == "archived"
    assert fm_value(store / old["path"], "superseded_by") == new["id"]
    assert fm_value(store / new["path"], "supersedes") == f"[{old['id']}]"
    assert await s.recall_ids("kiwiword") == [new["id"]]
    r = await s.call("memory_recall", query="kiwiword", include_archived=True)
    hit = next(h for h in r["results"] if h["id"] == old["id"])
    assert hit["state"] == "archived" and hit["superseded_by"] == new["id"]


async def test_supersede_through_resolve_is_one_commit(s: Session, store: Path) -> None:
    a = await make(s, word="mangoword")
    b = await make(s, word="mangoword2")
    commits = commit_count(store)
    r = await s.call("memory_resolve", id=b["id"], other_id=a["id"], decision="supersede")
    assert r["decision"] == "supersede" and r["id"] == b["id"] and r["other_id"] == a["id"]
    assert commit_count(store) == commits + 1
    assert set(git(store, "log", "-1", "--name-only", "--format=").split()) == {a["path"], b["path"]}
    assert fm_value(store / a["path"], "state") == "archived"
    assert fm_value(store / a["path"], "superseded_by") == b["id"]
    assert fm_value(store / b["path"], "supersedes") == f"[{a['id']}]"
    assert fm_value(store / b["path"], "state") == "active"


async def test_supersede_of_a_deprecated_memory_keeps_it_deprecated(s: Session, store: Path) -> None:
    old = await make(s, "deprecated")
    new = await s.call("memory_remember", content="Replacement for a deprecated memory, tapirword.",
                       supersedes=[old["id"]])
    assert fm_value(store / old["path"], "state") == "deprecated"
    assert fm_value(store / old["path"], "superseded_by") == new["id"]


async def test_restore_of_superseded_memory_says_what_superseded_it(s: Session, store: Path) -> None:
    old = await make(s, word="plumword")
    new = await s.call("memory_remember", content="The plumword setting is gone.", supersedes=[old["id"]])
    r = await s.call("memory_forget", id=old["id"], mode="restore")
    assert r["state"] == "active"
    assert any(new["id"] in w for w in r["warnings"]), r
    assert fm_value(store / old["path"], "superseded_by") is None
    assert fm_value(store / old["path"], "state") == "active"


async def test_chain_walked_both_ways(s: Session) -> None:
    a = await make(s, word="chainword")
    b = await s.call("memory_remember", content="chainword second version", supersedes=[a["id"]])
    c = await s.call("memory_remember", content="chainword third version", supersedes=[b["id"]])
    ra = await s.call("memory_read", id=a["id"])
    rb = await s.call("memory_read", id=b["id"])
    rc = await s.call("memory_read", id=c["id"])
    assert ra["chain"] == {"supersedes": [], "superseded_by": [b["id"], c["id"]]}
    assert rb["chain"] == {"supersedes": [a["id"]], "superseded_by": [c["id"]]}
    assert rc["chain"] == {"supersedes": [b["id"], a["id"]], "superseded_by": []}
    # closing the loop is refused, by either route, and writes nothing
    for call in (
        s.error("memory_resolve", id=a["id"], other_id=c["id"], decision="supersede"),
        s.error("memory_resolve", id=b["id"], other_id=c["id"], decision="supersede"),
        s.error("memory_resolve", id=c["id"], other_id=c["id"], decision="supersede"),
    ):
        assert "[invalid_supersede]" in await call


async def test_supersede_cycle_through_remember_refused(s: Session, store: Path) -> None:
    a = await make(s, word="loopword")
    b = await s.call("memory_remember", content="loopword replacement", supersedes=[a["id"]])
    # b is superseded_by nothing; a new memory superseding both is fine; a self cycle cannot be built
    c = await s.call("memory_remember", content="loopword final", supersedes=[b["id"]])
    commits = commit_count(store)
    err = await s.error("memory_resolve", id=a["id"], other_id=c["id"], decision="supersede")
    assert "[invalid_supersede]" in err and "cycle" in err
    assert commit_count(store) == commits


async def test_supersede_unknown_id_refused_and_nothing_written(s: Session, store: Path) -> None:
    files_before = sorted((store / "memories").rglob("*.md"))
    commits = commit_count(store)
    err = await s.error("memory_remember", content="replaces a memory that does not exist, guavaword",
                        supersedes=[new_id()])
    assert "[not_found]" in err
    assert sorted((store / "memories").rglob("*.md")) == files_before and commit_count(store) == commits
    a = await make(s)
    assert "[not_found]" in await s.error("memory_resolve", id=a["id"], other_id=new_id(), decision="supersede")
    assert "[not_found]" in await s.error("memory_resolve", id=new_id(), other_id=a["id"], decision="keep_both")


async def test_hand_made_chain_cycle_is_walked_safely(s: Session, store: Path) -> None:
    x, y = new_id(), new_id()
    fm_file(store, "cyc-x.md", "# Cyc x\n\ncycleword x\n", id=x, state="archived", supersedes=[y], superseded_by=y)
    fm_file(store, "cyc-y.md", "# Cyc y\n\ncycleword y\n", id=y, state="archived", supersedes=[x], superseded_by=x)
    rx = await s.call("memory_read", id=x)
    assert rx["chain"] == {"supersedes": [y], "superseded_by": [y]}
    assert "[invalid_supersede]" in await s.error("memory_resolve", id=x, other_id=y, decision="supersede")


# ------------------------------------------------------------------ purge
async def test_purge_refused_without_confirm_and_from_active(s: Session, store: Path) -> None:
    act = await make(s)
    arc = await make(s, "archived")
    commits = commit_count(store)
    err = await s.error("memory_forget", id=act["id"], mode="purge", confirm=True)
    assert "[invalid_transition]" in err and "archive" in err
    err = await s.error("memory_forget", id=arc["id"], mode="purge")
    assert "[confirm_required]" in err and "confirm=true" in err
    assert (store / act["path"]).exists() and (store / arc["path"]).exists()
    assert commit_count(store) == commits


@pytest.mark.parametrize("start", ["archived", "deprecated"])
async def test_purge_deletes_and_git_keeps_it(s: Session, store: Path, start: str) -> None:
    m = await make(s, start)
    path = store / m["path"]
    raw = path.read_bytes()
    r = await s.call("memory_forget", id=m["id"], mode="purge", confirm=True, reason="no longer useful")
    assert r["purged"] is True and r["state"] is None
    assert not path.exists()
    assert subjects(store, 1)[0].startswith("forget: purge")
    assert f"Memory-Id: {m['id']}" in git(store, "log", "-1", "--format=%B")
    commit = git(store, "log", "-1", "--format=%H").strip()
    assert git(store, "show", f"{commit}^:{m['path']}").encode() == raw
    assert m["path"] not in git(store, "ls-files")
    assert "[not_found]" in await s.error("memory_read", id=m["id"])
    r = await s.call("memory_recall", query=m["word"], include_archived=True, include_deprecated=True)
    assert m["id"] not in [h["id"] for h in r["results"]]
    assert git(store, "status", "--porcelain").strip() == ""


async def test_unknown_forget_mode_is_refused(s: Session) -> None:
    m = await make(s)
    r = await s.raw("memory_forget", id=m["id"], mode="obliterate")
    assert r.is_error
