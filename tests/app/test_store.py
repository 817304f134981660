"""Issue 3 through the core and over stdio: dictionary normalisation, feedback and withholding,
trust-aware ranking and filters, status lists (review due, distillation candidates, withheld)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from conftest import Session, commit_count, fm_file, fm_value, git, new_id, open_server

from memory_mcp.app.store import Store
from memory_mcp.truth.errors import InvalidArgument, NotFound

pytestmark = pytest.mark.anyio

DICTIONARY = """# Dictionary

Entity names the memories use.

    - canonical-name: what it is (aka: alias one, alias two)

- PostgreSQL: the main database (aka: postgres, pg, psql)
- web-workspace: the frontend monorepo (aka: frontend, Web WS)
- pnpm: the package manager
"""


@pytest.fixture(scope="module")
async def s(store: Path):
    async with open_server(store) as session:
        await session.call("memory_status")
        (store / "dictionary.md").write_text(DICTIONARY)
        yield session


@pytest.fixture
def core(tmp_path: Path):
    st = Store.open(tmp_path / "store")
    yield st
    st.close()


# ------------------------------------------------------------------ dictionary
async def test_aliases_normalised_on_write(s: Session, store: Path) -> None:
    r = await s.call("memory_remember", content="Use connection pooling for the main database.",
                     entities=["Postgres", "FRONTEND", "pnpm", "redis"])
    assert fm_value(store / r["path"], "entities") == "[PostgreSQL, web-workspace, pnpm, redis]"
    assert r["unknown_entities"] == ["redis"]
    # the dictionary edit was committed by the reconcile that saw it
    assert "dictionary.md" in git(store, "log", "--name-only", "--format=", "-n3")


async def test_aliases_normalised_at_query_time(s: Session) -> None:
    r = await s.call("memory_remember", content="Vacuum the orders table weekly; autovacuum lags there.",
                     entities=["pg"])
    for alias in ("PG", "psql", "PostgreSQL", "postgres"):
        assert r["id"] in await s.recall_ids(entities=[alias]), alias
    assert r["id"] in await s.recall_ids("orders table vacuum", entities=["postgres"])
    assert r["id"] not in await s.recall_ids("orders table vacuum", entities=["pnpm"])


async def test_duplicate_aliases_collapse(s: Session, store: Path) -> None:
    r = await s.call("memory_remember", content="psql prompt shows the replica name.",
                     entities=["pg", "Postgres", "PostgreSQL", "web ws"])
    assert fm_value(store / r["path"], "entities") == "[PostgreSQL, web-workspace]"


async def test_editing_the_dictionary_renormalises_the_index(s: Session, store: Path) -> None:
    r = await s.call("memory_remember", content="The quetzal search cluster has three nodes.",
                     entities=["quetzal-search"])
    assert r["unknown_entities"] == ["quetzal-search"]
    assert r["id"] not in await s.recall_ids(entities=["elastic"])
    (store / "dictionary.md").write_text(DICTIONARY + "- elastic: the search cluster (aka: quetzal-search, es)\n")
    assert r["id"] in await s.recall_ids(entities=["elastic"])
    assert r["id"] in await s.recall_ids(entities=["ES"])
    # the file keeps what was written; the index reads it through the dictionary
    assert fm_value(store / r["path"], "entities") == "[quetzal-search]"
    assert git(store, "status", "--porcelain").strip() == ""


async def test_unknown_entities_only_with_a_non_empty_dictionary(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with open_server(store) as s2:
        r = await s2.call("memory_remember", content="The narwhal bucket is versioned.", entities=["narwhal"])
        assert r["unknown_entities"] == []  # the template dictionary has no entries (only an indented example)
        (store / "dictionary.md").write_text("- narwhal: the bucket\n")
        r = await s2.call("memory_remember", content="The narwhal bucket has lifecycle rules.",
                          entities=["narwhal", "s3"])
        assert r["unknown_entities"] == ["s3"]


# ------------------------------------------------------------------ feedback
async def test_feedback_steps_clamped_and_rounded(s: Session, store: Path) -> None:
    m = await s.call("memory_remember", content="The okra service logs to stdout in JSON.")
    path = store / m["path"]
    values = []
    for _ in range(12):
        values.append((await s.call("memory_feedback", id=m["id"], helpful=True))["feedback"])
    assert values == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0]
    assert fm_value(path, "feedback") == "1.0"
    f = await s.call("memory_feedback", id=m["id"], helpful=False, note="it logs to a file now")
    assert f["feedback"] == 0.8 and f["withheld"] is False
    assert "it logs to a file now" in git(store, "log", "-1", "--format=%B")
    down = [(await s.call("memory_feedback", id=m["id"], helpful=False))["feedback"] for _ in range(10)]
    assert down == [0.6, 0.4, 0.2, 0.0, -0.2, -0.4, -0.6, -0.8, -1.0, -1.0]
    assert fm_value(path, "feedback") == "-1.0"


async def test_three_misleading_reports_withhold(s: Session, store: Path) -> None:
    m = await s.call("memory_remember", content="The pangolin port is 8443 in staging.")
    assert m["id"] in await s.recall_ids("pangolin port")
    r1 = await s.call("memory_feedback", id=m["id"], helpful=False)
    r2 = await s.call("memory_feedback", id=m["id"], helpful=False)
    assert (r1["feedback"], r2["feedback"], r2["withheld"]) == (-0.2, -0.4, False)
    assert m["id"] in await s.recall_ids("pangolin port")
    r3 = await s.call("memory_feedback", id=m["id"], helpful=False)
    assert r3["feedback"] == -0.6 and r3["withheld"] is True
    assert fm_value(store / m["path"], "feedback") == "-0.6"
    assert m["id"] not in await s.recall_ids("pangolin port")
    assert m["id"] not in await s.recall_ids("pangolin port", include_archived=True, include_deprecated=True)
    st = await s.call("memory_status")
    assert m["id"] in [w["id"] for w in st["withheld"]]
    # still readable, and it stays withheld after the index is rebuilt (the score lives in the file)
    assert (await s.call("memory_read", id=m["id"]))["frontmatter"]["feedback"] == -0.6
    await s.call("memory_reindex")
    assert m["id"] not in await s.recall_ids("pangolin port")


async def test_one_helpful_among_them_does_not_save_it_from_a_fourth(s: Session) -> None:
    m = await s.call("memory_remember", content="The quail cron runs hourly on the batch host.")
    seq = [False, True, False, False]
    vals = [(await s.call("memory_feedback", id=m["id"], helpful=h)) for h in seq[:3]]
    assert [v["feedback"] for v in vals] == [-0.2, -0.1, -0.3]
    assert m["id"] in await s.recall_ids("quail cron")
    last = await s.call("memory_feedback", id=m["id"], helpful=False)
    assert last["feedback"] == -0.5 and last["withheld"] is True
    assert m["id"] not in await s.recall_ids("quail cron")
    # a helpful report brings it back above the threshold
    back = await s.call("memory_feedback", id=m["id"], helpful=True)
    assert back["feedback"] == -0.4 and back["withheld"] is False
    assert m["id"] in await s.recall_ids("quail cron")


# ------------------------------------------------------------------ hand edits of state
async def test_archived_memory_edited_by_hand_comes_back_active(s: Session, store: Path) -> None:
    old = await s.call("memory_remember", content="The raven proxy buffers 64 KB.")
    new = await s.call("memory_remember", content="raven proxy buffering replaced", supersedes=[old["id"]])
    path = store / old["path"]
    assert fm_value(path, "state") == "archived"
    assert old["id"] not in await s.recall_ids("raven proxy buffers")
    path.write_text(path.read_text().replace("buffers 64 KB", "buffers 128 KB again since the rollback"))
    assert old["id"] in await s.recall_ids("raven proxy rollback")
    assert fm_value(path, "state") == "active"
    assert fm_value(path, "superseded_by") is None
    last = git(store, "log", "-1", "--format=%B")
    assert last.startswith("reconcile:") and "made active" in last and f"Memory-Id: {old['id']}" in last
    assert git(store, "status", "--porcelain").strip() == ""
    assert new["id"]


async def test_archived_memory_with_only_frontmatter_edited_stays_archived(s: Session, store: Path) -> None:
    m = await s.call("memory_remember", content="The robin job exports CSV nightly.")
    await s.call("memory_forget", id=m["id"], mode="archive")
    path = store / m["path"]
    path.write_text(path.read_text().replace("entities: []", "entities: [robin]"))
    r = await s.call("memory_recall", query="robin CSV", include_archived=True)
    hit = next(h for h in r["results"] if h["id"] == m["id"])
    assert hit["state"] == "archived" and hit["entities"] == ["robin"]


async def test_state_changed_by_hand_is_respected(s: Session, store: Path) -> None:
    m = await s.call("memory_remember", content="The salmon lint rule forbids default exports.")
    path = store / m["path"]
    path.write_text(path.read_text().replace("state: active", "state: deprecated\ndeprecated_reason: by hand"))
    assert m["id"] not in await s.recall_ids("salmon lint")
    assert m["id"] in await s.recall_ids("salmon lint", include_deprecated=True)


# ------------------------------------------------------------------ ranking and filters
async def test_user_stated_outranks_agent_inferred(s: Session) -> None:
    inferred = await s.call("memory_remember", content="The tern service timeout is thirty seconds.",
                            trust="agent-inferred", title="Tern timeout (inferred)")
    stated = await s.call("memory_remember", content="The tern service timeout is thirty seconds.",
                          trust="user-stated", title="Tern timeout (stated)")
    imported = await s.call("memory_remember", content="The tern service timeout is thirty seconds.",
                            trust="imported", title="Tern timeout (imported)")
    r = await s.call("memory_recall", query="tern service timeout")
    order = [h["id"] for h in r["results"]]
    assert order[:3] == [stated["id"], inferred["id"], imported["id"]]
    scores = [h["score"] for h in r["results"][:3]]
    assert scores[0] > scores[1] > scores[2]


async def test_archived_ranks_below_active_when_included(s: Session) -> None:
    a = await s.call("memory_remember", content="The urchin worker drains the upload queue.",
                     title="Urchin worker A", trust="user-stated")
    b = await s.call("memory_remember", content="The urchin worker drains the upload queue.",
                     title="Urchin worker B", trust="agent-inferred")
    await s.call("memory_forget", id=a["id"], mode="archive")
    r = await s.call("memory_recall", query="urchin worker upload queue", include_archived=True)
    ids = [h["id"] for h in r["results"]]
    assert ids.index(b["id"]) < ids.index(a["id"])


async def test_type_and_entity_filters(s: Session) -> None:
    d = await s.call("memory_remember", content="We chose vireo for feature flags.", type="decision",
                     entities=["vireo"])
    p = await s.call("memory_remember", content="The user prefers vireo flags named in kebab case.",
                     type="preference", entities=["vireo", "naming"])
    f = await s.call("memory_remember", content="The vireo SDK caches flags for 60 seconds.", type="fact")
    assert set(await s.recall_ids("vireo")) >= {d["id"], p["id"], f["id"]}
    assert await s.recall_ids("vireo", types=["decision"]) == [d["id"]]
    assert set(await s.recall_ids("vireo", types=["decision", "preference"])) == {d["id"], p["id"]}
    assert set(await s.recall_ids("vireo", entities=["vireo"])) == {d["id"], p["id"]}
    assert await s.recall_ids(entities=["naming"]) == [p["id"]]
    r = await s.call("memory_recall", entities=["no-such-entity-anywhere"])
    assert r["results"] == [] and "coverage" in r


async def test_listing_without_query_is_newest_first(s: Session, store: Path) -> None:
    ids = {}
    for month in (3, 1, 2):
        stamp = f"2026-0{month}-01T10:00:00Z"
        ids[month] = new_id()
        fm_file(store, f"wren-{month}.md", f"# Wren note {month}\n\nwren month {month}\n", id=ids[month],
                entities=["wren"], type="fact", created=stamp, updated=stamp)
    assert await s.recall_ids(entities=["wren"]) == [ids[3], ids[2], ids[1]]
    assert await s.recall_ids(entities=["wren"], types=["fact"], limit=2) == [ids[3], ids[2]]


async def test_limit_and_token_budget(s: Session) -> None:
    for n in range(6):
        await s.call("memory_remember", content=f"The wombat importer batch {n} handles {n * 100} rows.")
    assert len(await s.recall_ids("wombat importer", limit=2)) == 2
    r = await s.call("memory_recall", query="wombat importer", max_tokens=120)
    assert 1 <= len(r["results"]) < 6 and r["truncated"] is True


async def test_heat_from_recall_counts_survives_reindex(s: Session) -> None:
    m = await s.call("memory_remember", content="The xerus cache key includes the tenant id.")
    for _ in range(3):
        await s.recall_ids("xerus cache")
    before = (await s.call("memory_read", id=m["id"]))["recall_count"]
    assert before >= 3
    await s.call("memory_reindex")
    assert (await s.call("memory_read", id=m["id"]))["recall_count"] >= before


# ------------------------------------------------------------------ status
async def test_status_review_due_and_distill_candidates(s: Session, store: Path) -> None:
    yesterday = (date.today() - timedelta(days=1)).isoformat()
    due = await s.call("memory_remember", content="Check whether the yak mirror is still needed.",
                       review_after=yesterday)
    later = await s.call("memory_remember", content="Check the zebu quota next year.",
                         review_after=(date.today() + timedelta(days=300)).isoformat())
    old = (datetime.now(UTC) - timedelta(days=90)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ep = new_id()
    fm_file(store, "episode-old.md", "# Debugging the alpaca outage\n\nWe found the alpaca DNS TTL was wrong.\n",
            id=ep, type="episode", state="active", created=old, updated=old)
    fresh_ep = await s.call("memory_remember", content="Today we paired on the alpaca deploy.", type="episode")
    arch_ep = new_id()
    fm_file(store, "episode-archived.md", "# Old archived episode\n\nbeaver incident.\n", id=arch_ep,
            type="episode", state="archived", created=old, updated=old)
    st = await s.call("memory_status")
    review = [x["id"] for x in st["review_due"]]
    assert due["id"] in review and later["id"] not in review
    distill = {x["id"]: x for x in st["distill_candidates"]}
    assert ep in distill and fresh_ep["id"] not in distill and arch_ep not in distill
    assert "knowledge" in distill[ep]["detail"] and "supersede" in distill[ep]["detail"]
    counts = st["counts"]
    assert counts["total"] == sum(counts["by_state"].values())
    assert {"branch", "head", "memory_files_dirty"} <= set(st["git"])
    assert st["git"]["branch"] == "main" and st["git"]["memory_files_dirty"] is False


async def test_recalled_old_episode_is_not_a_distill_candidate(s: Session, store: Path) -> None:
    old = (datetime.now(UTC) - timedelta(days=90)).strftime("%Y-%m-%dT%H:%M:%SZ")
    ep = new_id()
    fm_file(store, "episode-recalled.md", "# Bison incident\n\nThe bisonfold incident was a full disk.\n",
            id=ep, type="episode", state="active", created=old, updated=old)
    assert ep in await s.recall_ids("bisonfold")
    st = await s.call("memory_status")
    assert ep not in [x["id"] for x in st["distill_candidates"]]


# ------------------------------------------------------------------ the core, in process
def test_core_open_creates_store_and_commits(core: Store) -> None:
    assert (core.root / ".git").is_dir() and (core.root / "memories").is_dir()
    before = commit_count(core.root)
    r = core.remember("The caracal build uses ninja.", entities=["caracal"])
    assert commit_count(core.root) == before + 1
    assert core.recall("caracal ninja").results[0].id == r.id


def test_core_reopen_sees_everything(tmp_path: Path) -> None:
    a = Store.open(tmp_path / "s")
    m = a.remember("The dingo queue is FIFO.")
    a.close()
    b = Store.open(tmp_path / "s")
    assert [h.id for h in b.recall("dingo queue").results] == [m.id]
    b.close()


def test_making_a_store_leaves_no_lock_file_in_the_temp_folder(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock two processes making one store at once share is removed once the store is whole
    (one file per store path stayed in the temp folder: the test suite left thousands), and openers
    racing the maker wait for it: one that saw the folder half made was refused as "not a memory
    store" or opened it before its first commit."""
    import tempfile
    import threading

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    made: list[str] = []
    failed: list[Exception] = []

    def open_once() -> None:
        try:
            s = Store.open(tmp_path / "s")
        except Exception as e:  # a thread's exception is otherwise only a warning
            failed.append(e)
            return
        made.append(git(s.root, "rev-list", "--all").strip())
        s.close()

    threads = [threading.Thread(target=open_once) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    open_once()
    assert failed == [], [str(e) for e in failed]
    assert len(made) == 5 and len(set(made)) == 1 and len(made[0].split()) == 1  # one store, one init commit
    assert list(temp.iterdir()) == []


def test_core_open_refuses_non_store(tmp_path: Path) -> None:
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "a.txt").write_text("a")
    from memory_mcp.truth.errors import InvalidStore

    with pytest.raises(InvalidStore):
        Store.open(folder)
    assert [p.name for p in folder.iterdir()] == ["a.txt"]


def test_core_argument_checks(core: Store) -> None:
    with pytest.raises(InvalidArgument):
        core.recall("x", limit=0)
    with pytest.raises(InvalidArgument):
        core.recall("x", types=["rumour"])
    with pytest.raises(InvalidArgument):
        core.remember("x", trust="gossip")
    with pytest.raises(InvalidArgument):
        core.forget(new_id(), mode="shred")
    with pytest.raises(NotFound):
        core.read(path="memories/nope.md")


def test_recall_with_any_string_never_errors(core: Store) -> None:
    core.remember("The eland parser handles C# and c++ sources.")
    for q in ['"', "'", "AND", "OR NOT", "*", "(", ")", "NEAR(a b)", "a:b", "^x", "-", "C#", "c++", "\\", "\x00",
              "title:eland", "{a b}", "e" * 500, "😀", "эланд", "엘란드는"]:
        core.recall(q)
    assert core.recall("C#").results


def test_review_after_written_as_date(core: Store) -> None:
    r = core.remember("The fossa cert expires soon.", review_after="2030-05-01T10:00:00Z")
    assert fm_value(core.root / r.path, "review_after") == "2030-05-01"
    core.update(r.id, review_after="")
    assert fm_value(core.root / r.path, "review_after") is None


def test_matching_memory_scores_above_zero_in_a_small_store(core: Store) -> None:
    a = core.remember("The web workspace uses pnpm workspaces; never run npm install there.")
    core.remember("Always run the linter with --fix before committing in the kestrel repo.")
    hits = core.recall("pnpm").results
    assert [h.id for h in hits] == [a.id]
    assert hits[0].score > 0


def test_update_with_a_new_heading_takes_its_title(core) -> None:
    r = core.remember("The osprey queue drains hourly.", title="Osprey queue drain")
    read = core.update(r.id, content="# Osprey queue drains every ten minutes\n\nChanged in the ops review.")
    assert read.title == "Osprey queue drains every ten minutes"
    assert read.body.count("\n# ") + read.body.startswith("# ") == 1  # one heading, not the old one stacked on top


def test_update_without_a_heading_keeps_the_title(core) -> None:
    r = core.remember("The heron cache holds ten minutes.", title="Heron cache TTL")
    assert core.update(r.id, content="The heron cache holds twenty minutes.").title == "Heron cache TTL"
