"""Issue 2 end to end: a real `memory-mcp serve` subprocess driven by the mcp SDK client over stdio,
a real git store on disk, hand edits between calls."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import (
    Session,
    commit_count,
    fm_file,
    git,
    new_id,
    open_server,
    subjects,
)

pytestmark = pytest.mark.anyio

TOOLS = {"memory_remember", "memory_recall", "memory_read", "memory_update", "memory_forget",
         "memory_resolve", "memory_feedback", "memory_status", "memory_reindex", "memory_share"}


def last_message(store: Path) -> str:
    return git(store, "log", "-1", "--format=%B")


def clean(store: Path) -> bool:
    return git(store, "status", "--porcelain").strip() == ""


# ------------------------------------------------------------------ surface
async def test_tools_schemas_annotations_and_instructions(s: Session) -> None:
    tools = {t.name: t for t in (await s.client.list_tools()).tools}
    assert set(tools) >= TOOLS
    for name in TOOLS:
        assert tools[name].output_schema, f"{name} has no output schema"
        assert tools[name].description
    for name in ("memory_recall", "memory_read", "memory_status"):
        assert tools[name].annotations.read_only_hint is True, name
    assert tools["memory_forget"].annotations.destructive_hint is True
    for name in ("memory_remember", "memory_update", "memory_forget", "memory_resolve", "memory_feedback"):
        assert tools[name].annotations.read_only_hint is False, name
    rprops = tools["memory_recall"].output_schema["properties"]
    assert {"results", "coverage", "pending_conflicts"} <= set(rprops)
    mprops = tools["memory_remember"].output_schema["properties"]
    assert {"id", "path", "state", "duplicate", "superseded", "conflicts", "unknown_entities", "warnings"} <= set(mprops)
    sprops = tools["memory_status"].output_schema["properties"]
    assert {"counts", "coverage", "unindexed", "pending_conflicts", "review_due", "distill_candidates",
            "withheld", "git"} <= set(sprops)
    # the approval resolver of memory_forget is not an argument the model sees
    assert set(tools["memory_forget"].input_schema["properties"]) == {"id", "mode", "reason", "confirm"}
    ins = s.client.instructions or ""
    assert 0 < len(ins.encode()) <= 2048
    head = ins[:700].lower()
    assert "memory_recall" in head and "remember" in head


def _null_alternatives(node: object) -> list[object]:
    if isinstance(node, list):
        return [x for item in node for x in _null_alternatives(item)]
    if not isinstance(node, dict):
        return []
    own = [node] if isinstance(node.get("anyOf"), list) and {"type": "null"} in node["anyOf"] else []
    return own + [x for v in node.values() for x in _null_alternatives(v)]


async def test_output_schemas_write_nullable_fields_as_type_lists(s: Session) -> None:
    # The client validates each result against these (the SDK does on every call_tool, as in every
    # test here); `T | None` as anyOf cost it a third more than type lists.
    tools = (await s.client.list_tools()).tools
    for tool in tools:
        assert _null_alternatives(tool.output_schema) == [], tool.name
    recall = next(t for t in tools if t.name == "memory_recall").output_schema
    assert recall["$defs"]["Hit"]["properties"]["updated"]["type"] == ["string", "null"]


async def test_digest_resource_and_prompt(s: Session) -> None:
    await s.call("memory_remember", content="Always run the linter with --fix before committing in the kestrel repo.",
                 type="preference", trust="user-stated", entities=["kestrel"])
    res = await s.client.read_resource("memory://digest")
    assert "kestrel" in res.contents[0].text.lower()
    prompts = {p.name for p in (await s.client.list_prompts()).prompts}
    assert "memory" in prompts  # the name issue 7 gives it: /mcp__memory__memory in Claude Code
    p = await s.client.get_prompt("memory", {"topic": "kestrel"})
    assert "kestrel" in p.messages[0].content.text.lower()


# ------------------------------------------------------------------ remember / recall
async def test_remember_recall_round_trip(s: Session, store: Path) -> None:
    before = commit_count(store)
    a = await s.call("memory_remember", content="The web workspace uses pnpm workspaces; never run npm install there.",
                     title="Use pnpm, never npm, in the web workspace", type="preference",
                     entities=["pnpm", "web-workspace"], trust="user-stated", source="session 2026-08-24")
    assert a["duplicate"] is False and a["state"] == "active" and a["conflicts"] == []
    assert a["path"].startswith("memories/") and a["path"].endswith(".md") and a["id"][:8] in a["path"]
    path = store / a["path"]
    text = path.read_text()
    assert text.startswith(f"---\nid: {a['id']}\ntype: preference\nstate: active\ntrust: user-stated\n")
    assert "entities: [pnpm, web-workspace]" in text
    assert "# Use pnpm, never npm, in the web workspace" in text
    r = await s.call("memory_recall", query="pnpm")
    hit = next(h for h in r["results"] if h["id"] == a["id"])
    assert {"id", "path", "title", "excerpt", "type", "state", "trust", "entities", "updated", "score"} <= set(hit)
    assert hit["path"] == a["path"] and hit["title"] == "Use pnpm, never npm, in the web workspace"
    assert hit["excerpt"].startswith("The web workspace uses pnpm")
    assert (hit["type"], hit["state"], hit["trust"]) == ("preference", "active", "user-stated")
    assert hit["entities"] == ["pnpm", "web-workspace"] and hit["score"] > 0
    assert {"indexed", "unindexed", "changed"} <= set(r["coverage"])
    # exactly one commit, readable message, Memory-Id trailer, committed before the call returned
    assert commit_count(store) == before + 1
    msg = last_message(store)
    assert msg.startswith("remember: Use pnpm, never npm, in the web workspace")
    assert f"Memory-Id: {a['id']}" in msg
    assert git(store, "log", "-1", "--name-only", "--format=").split() == [a["path"]]
    assert clean(store)
    rd = await s.call("memory_read", id=a["id"])
    assert rd["path"] == a["path"] and "never run npm install" in rd["body"]
    assert rd["frontmatter"]["entities"] == ["pnpm", "web-workspace"]
    assert rd["frontmatter"]["source"] == "session 2026-08-24"
    assert rd["history"] and rd["history"][0]["message"].startswith("remember:")
    by_path = await s.call("memory_read", path=a["path"])
    assert by_path["id"] == a["id"]
    by_abs = await s.call("memory_read", path=str(path))
    assert by_abs["id"] == a["id"]


async def test_fallback_identity_without_git_config(s: Session, store: Path) -> None:
    """HOME is an empty folder and GIT_CONFIG_NOSYSTEM=1: the commit still happens."""
    await s.call("memory_remember", content="The nightly job for the ocelot service runs at 03:00 UTC.")
    assert git(store, "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip() == (
        "memory-mcp <memory-mcp@localhost>|memory-mcp <memory-mcp@localhost>")


async def test_duplicate_remember_writes_nothing(s: Session, store: Path) -> None:
    a = await s.call("memory_remember", content="Feature flags live in config/flags.yaml of the heron repo.")
    files_before = sorted(p.name for p in (store / "memories").rglob("*.md"))
    commits = commit_count(store)
    d = await s.call("memory_remember", content="  Feature flags live in   config/flags.yaml of the heron repo.\n")
    assert d["duplicate"] is True and d["id"] == a["id"] and d["path"] == a["path"]
    assert sorted(p.name for p in (store / "memories").rglob("*.md")) == files_before
    assert commit_count(store) == commits


async def test_the_same_content_without_a_title_is_a_duplicate_of_a_titled_memory(s: Session, store: Path) -> None:
    """Written again with no title, the content of a titled memory got a derived heading, so its body
    differed and it was written a second time with no duplicate notice."""
    a = await s.call("memory_remember", title="Egret flags",
                     content="Feature flags live in config/flags.yaml of the egret repo.")
    commits = commit_count(store)
    d = await s.call("memory_remember", content="Feature flags live in config/flags.yaml of the egret repo.")
    assert d["duplicate"] is True and d["id"] == a["id"]
    assert commit_count(store) == commits
    # A title of its own makes it another memory, as before.
    t = await s.call("memory_remember", title="Flags of egret",
                     content="Feature flags live in config/flags.yaml of the egret repo.")
    assert t["duplicate"] is False


async def test_archiving_or_deprecating_a_memory_closes_its_open_pairs(s: Session, store: Path) -> None:
    """`forget --mode archive` left the archived memory's pair listed as pending."""
    pairs = []
    for topic in ("osprey", "kestrel"):
        old = await s.call("memory_remember", content=f"The {topic} cache is 2 GB and lives on the local disk.",
                           entities=[topic])
        new = await s.call("memory_remember", content=f"The {topic} cache is 8 GB now, after the upgrade.",
                           entities=[topic])
        assert [c["id"] for c in new["conflicts"]] == [old["id"]]
        pairs.append((old["id"], new["id"]))
    assert len((await s.call("memory_status"))["pending_conflicts"]) == 2
    await s.call("memory_forget", id=pairs[0][0], mode="archive")
    await s.call("memory_forget", id=pairs[1][1], mode="deprecate", reason="written by mistake")
    assert (await s.call("memory_status"))["pending_conflicts"] == []
    assert (await s.call("memory_recall", query="osprey cache"))["pending_conflicts"] == 0
    # Restored, the memory contradicts its pair again.
    await s.call("memory_forget", id=pairs[0][0], mode="restore")
    listed = (await s.call("memory_status"))["pending_conflicts"]
    assert [{p["id"], p["other_id"]} for p in listed] == [set(pairs[0])]


async def test_one_commit_per_write_over_several_writes(s: Session, store: Path) -> None:
    before = commit_count(store)
    ids = [(await s.call("memory_remember", content=f"Gannet fact number {n}: the gannet queue has {n} shards."))["id"]
           for n in range(3)]
    await s.call("memory_update", id=ids[0], source="gannet runbook")
    await s.call("memory_feedback", id=ids[1], helpful=True)
    await s.call("memory_forget", id=ids[2], mode="archive")
    assert commit_count(store) == before + 6
    subj = subjects(store, 6)
    assert [x.split(":")[0] for x in subj] == ["forget", "feedback", "update", "remember", "remember", "remember"]
    trailers = git(store, "log", "-6", "--format=%(trailers:key=Memory-Id,valueonly)").split()
    assert trailers == [ids[2], ids[1], ids[0], ids[2], ids[1], ids[0]]
    assert clean(store)


# ------------------------------------------------------------------ hand edits
async def test_hand_edited_body_visible_to_next_recall(s: Session, store: Path) -> None:
    a = await s.call("memory_remember", content="The build cache of the puffin repo lives on the shared volume.")
    path = store / a["path"]
    path.write_text(path.read_text() + "\nAlso: the zebracorn cache must be warmed first.\n")
    assert a["id"] in await s.recall_ids("zebracorn")
    assert subjects(store, 1)[0].startswith("reconcile:")
    msg = last_message(store)
    assert f"Memory-Id: {a['id']}" in msg and a["path"] in msg
    assert clean(store)


async def test_hand_added_file_visible_to_next_recall(s: Session, store: Path) -> None:
    nid = new_id()
    fm_file(store, "team/hand-added.md", "# Quokkaship release train\n\nThe quokkaship release train leaves every Tuesday.\n",
            id=nid, type="fact", state="active", trust="user-stated", entities=[],
            created="2026-01-01T10:00:00Z", updated="2026-01-01T10:00:00Z")
    r = await s.call("memory_recall", query="quokkaship")
    assert nid in [h["id"] for h in r["results"]]
    assert r["coverage"]["changed"] >= 1
    hit = next(h for h in r["results"] if h["id"] == nid)
    assert hit["path"] == "memories/team/hand-added.md" and hit["title"] == "Quokkaship release train"
    assert subjects(store, 1)[0].startswith("reconcile:") and f"Memory-Id: {nid}" in last_message(store)
    assert "memories/team/hand-added.md" in git(store, "ls-files")


async def test_hand_deleted_file_gone_from_next_recall(s: Session, store: Path) -> None:
    a = await s.call("memory_remember", content="The lemming cluster is decommissioned at the end of the quarter.")
    assert a["id"] in await s.recall_ids("lemming")
    (store / a["path"]).unlink()
    assert a["id"] not in await s.recall_ids("lemming")
    assert subjects(store, 1)[0].startswith("reconcile:")
    assert a["path"] not in git(store, "ls-files")
    assert clean(store)
    assert "not_found" in await s.error("memory_read", id=a["id"])


async def test_hand_deletion_commit_names_the_memory(s: Session, store: Path) -> None:
    a = await s.call("memory_remember", content="The marmot dashboard was moved to grafana two.")
    (store / a["path"]).unlink()
    await s.call("memory_status")
    assert f"Memory-Id: {a['id']}" in last_message(store)


async def test_derived_deleted_while_running_rebuilds(s: Session, store: Path) -> None:
    a = await s.call("memory_remember", content="Session tokens of the tapir API expire after 1800 seconds.",
                     entities=["tapir"])
    before = await s.recall_ids("tapir session tokens")
    status_before = await s.call("memory_status")
    shutil.rmtree(store / ".derived")
    after = await s.recall_ids("tapir session tokens")
    assert a["id"] in after and after == before
    status_after = await s.call("memory_status")
    assert status_after["counts"]["total"] == status_before["counts"]["total"]
    assert (store / ".derived").is_dir()
    assert clean(store)


async def test_broken_yaml_listed_unindexed_and_untouched(s: Session, store: Path) -> None:
    good = await s.call("memory_remember", content="Schema changes in the walrus repo go through alembic revisions.")
    broken = store / "memories" / "broken.md"
    raw = b"---\nid: [unclosed\ntype: fact\n---\n# Broken\n\nwombatfold text\n"
    broken.write_bytes(raw)
    try:
        st = await s.call("memory_status")
        reasons = {u["path"]: u["reason"] for u in st["unindexed"]}
        assert "memories/broken.md" in reasons and "YAML" in reasons["memories/broken.md"]
        assert st["coverage"]["unindexed"] >= 1 and st["coverage"]["complete"] is False
        r = await s.call("memory_recall", query="alembic walrus")
        assert good["id"] in [h["id"] for h in r["results"]]
        assert r["coverage"]["unindexed"] >= 1
        assert await s.recall_ids("wombatfold") == []
        err = await s.error("memory_read", path="memories/broken.md")
        assert "not_found" in err and "YAML" in err
        await s.call("memory_reindex")
        assert broken.read_bytes() == raw
        assert "memories/broken.md" not in git(store, "ls-files")  # a person's broken file is not committed
    finally:
        broken.unlink()
    st = await s.call("memory_status")
    assert all(u["path"] != "memories/broken.md" for u in st["unindexed"])


async def test_fixing_a_broken_file_indexes_it(s: Session, store: Path) -> None:
    nid = new_id()
    path = store / "memories" / "fixme.md"
    path.write_text(f"---\nid: {nid}\nentities: [oops\n---\n# Yak shaving notes\n\nyakfold text\n")
    assert await s.recall_ids("yakfold") == []
    path.write_text(f"---\nid: {nid}\nentities: [oops]\n---\n# Yak shaving notes\n\nyakfold text\n")
    assert await s.recall_ids("yakfold") == [nid]


# ------------------------------------------------------------------ hostile files
HOSTILE = {
    "alias-bomb.md": (b"---\nid: 01JD2K3A9FZQ4W8XVBH5T6N7RM\na: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a]\n"
                      b"c: &c [*b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c]\n---\nbombtext\n"),
    "python-tag.md": None,  # filled in per test: needs the marker path
    "binary.md": b"---\nid: x\n---\n\x00\x01\x02\xff binarytext",
    "latin1.md": "---\ntype: fact\n---\n# Caf\u00e9 latintext\n".encode("latin-1"),
    "huge.md": b"---\ntype: fact\n---\n# Huge\n\n" + b"hugetext " * 130_000,
}


async def test_hostile_files_are_listed_and_nothing_runs(s: Session, store: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    hostile = dict(HOSTILE)
    hostile["python-tag.md"] = (f"---\nid: 01JD2K3A9FZQ4W8XVBH5T6N7RN\nx: !!python/object/apply:os.system "
                                f"[\"touch {marker}\"]\n---\npythontext\n").encode()
    outside = tmp_path / "secret.md"
    outside.write_text("---\ntype: fact\n---\n# Outside\n\noutsidetext lives outside the store\n")
    folder = store / "memories" / "hostile"
    folder.mkdir()
    for name, raw in hostile.items():
        (folder / name).write_bytes(raw)
    (folder / "link.md").symlink_to(outside)
    (folder / "crlf.md").write_bytes(b"---\r\ntype: fact\r\n---\r\n# Windows note\r\n\r\ncrlftext from a windows editor\r\n")
    try:
        st = await s.call("memory_status")
        reasons = {u["path"].rsplit("/", 1)[-1]: u["reason"] for u in st["unindexed"]}
        assert set(reasons) >= {*hostile, "link.md"}, reasons
        assert "alias" in reasons["alias-bomb.md"]
        assert "binary" in reasons["binary.md"]
        assert "UTF-8" in reasons["latin1.md"]
        assert "bytes" in reasons["huge.md"]
        assert "link" in reasons["link.md"]
        assert not marker.exists()
        for word in ("bombtext", "pythontext", "binarytext", "latintext", "hugetext", "outsidetext"):
            assert await s.recall_ids(word) == [], word
        r = await s.call("memory_recall", query="crlftext")
        assert len(r["results"]) == 1 and r["results"][0]["title"] == "Windows note"
        assert "outside_store" in await s.error("memory_read", path=str(folder / "link.md"))
        for name, raw in hostile.items():
            assert (folder / name).read_bytes() == raw, name
        assert outside.read_text().startswith("---\ntype: fact")
        assert (await s.call("memory_status"))["counts"]["total"] > 0  # the server is alive
    finally:
        # Untracked (unindexed) files first, the committed crlf.md after.
        for p in folder.iterdir():
            if p.name != "crlf.md":
                p.unlink()
        await s.call("memory_status")
        shutil.rmtree(folder)
    assert all("hostile/" not in u["path"] for u in (await s.call("memory_status"))["unindexed"])
    assert clean(store)


async def test_deleting_a_broken_and_a_committed_file_together(s: Session, store: Path) -> None:
    a = await s.call("memory_remember", content="The bison importer retries three times.")
    broken = store / "memories" / "bison-broken.md"
    broken.write_text("---\nid: [\n---\nbroken\n")
    await s.call("memory_status")
    broken.unlink()
    (store / a["path"]).unlink()
    try:
        await s.call("memory_status")
        assert a["path"] not in git(store, "ls-files"), "the hand deletion was not committed"
    finally:
        git(store, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "test cleanup",
            "--", a["path"], check=False)


# ------------------------------------------------------------------ refused arguments
@pytest.mark.parametrize("path", ["../../../etc/passwd", "/etc/passwd", "memories/../../outside.md",
                                  "memories/../.git/config"])
async def test_path_traversal_refused(s: Session, path: str) -> None:
    err = await s.error("memory_read", path=path)
    assert ("outside_store" in err) or ("not_found" in err and ".git" in path), err


@pytest.mark.parametrize(("tool", "args"), [
    ("memory_read", {"id": "../../etc/passwd"}),
    ("memory_read", {"id": "not-an-id"}),
    ("memory_update", {"id": "x' OR 1=1 --", "source": "s"}),
    ("memory_forget", {"id": "01JD2K3A9FZQ4W8XVBH5T6N7R"}),  # 25 characters
    ("memory_forget", {"id": "01JD2K3A9FZQ4W8XVBH5T6N7RU"}),  # U is not Crockford base32
    ("memory_feedback", {"id": "", "helpful": True}),
    ("memory_resolve", {"id": "abc", "other_id": "01JD2K3A9FZQ4W8XVBH5T6N7RM", "decision": "keep_both"}),
    ("memory_remember", {"content": "x remember", "supersedes": ["nope"]}),
])
async def test_non_ulid_ids_refused_with_stable_code(s: Session, tool: str, args: dict) -> None:
    err = await s.error(tool, **args)
    assert "[invalid_id]" in err and "ULID" in err


async def test_unknown_ulid_is_not_found(s: Session) -> None:
    unknown = new_id()
    for tool, args in (("memory_read", {"id": unknown}), ("memory_forget", {"id": unknown}),
                       ("memory_feedback", {"id": unknown, "helpful": False})):
        err = await s.error(tool, **args)
        assert "[not_found]" in err and "memory_recall" in err, err


async def test_argument_errors_have_codes_and_say_what_to_do(s: Session) -> None:
    assert "[invalid_argument]" in await s.error("memory_remember", content="   \n ")
    assert "[invalid_argument]" in await s.error("memory_read")
    assert "[invalid_argument]" in await s.error("memory_remember", content="review date test",
                                                 review_after="next tuesday")
    err = await s.error("memory_remember", content="x" * 64_001)
    assert "[too_large]" in err and "64,000" in err
    assert "[too_large]" in await s.error("memory_remember", content="big title", title="t" * 201)
    assert "[too_large]" in await s.error("memory_remember", content="many entities",
                                          entities=[f"e{i}" for i in range(33)])
    # schema validation (enum) is also reported as a tool error, not a crash
    r = await s.raw("memory_remember", content="bad type", type="rumour")
    assert r.is_error
    r = await s.raw("memory_recall", query="x", limit=999)
    assert r.is_error


# ------------------------------------------------------------------ update, provisional ids, reindex
async def test_update_changes_text_in_one_commit(s: Session, store: Path) -> None:
    a = await s.call("memory_remember", content="The ibis deploy uses blue-green slots.", entities=["ibis"],
                     title="Ibis deploy strategy")
    before = commit_count(store)
    u = await s.call("memory_update", id=a["id"], content="The ibis deploy uses canary releases now.",
                     entities=["ibis", "canary"], review_after="2030-01-01")
    assert u["path"] == a["path"] and "canary releases" in u["body"]
    assert u["frontmatter"]["entities"] == ["ibis", "canary"] and u["frontmatter"]["review_after"] == "2030-01-01"
    assert commit_count(store) == before + 1 and subjects(store, 1)[0].startswith("update:")
    assert a["id"] in await s.recall_ids("canary ibis")
    assert a["id"] not in await s.recall_ids("blue-green")
    assert "[invalid_argument]" in await s.error("memory_update", id=a["id"])


async def test_file_without_id_is_provisional_until_updated(s: Session, store: Path) -> None:
    path = store / "memories" / "plain-note.md"
    path.write_text("# Okapi build notes\n\nThe okapi build needs 8 GB of RAM.\n")
    r = await s.call("memory_recall", query="okapi")
    assert len(r["results"]) == 1
    pid = r["results"][0]["id"]
    assert pid.startswith("P")
    st = await s.call("memory_status")
    assert any(p["path"] == "memories/plain-note.md" for p in st["provisional"])
    rd = await s.call("memory_read", id=pid)
    assert rd["warnings"]
    u = await s.call("memory_update", id=pid, entities=["okapi"])
    assert len(u["id"]) == 26 and u["path"] == "memories/plain-note.md"
    assert path.read_text().startswith(f"---\nid: {u['id']}\n")
    assert await s.recall_ids("okapi") == [u["id"]]


async def test_reindex_and_verify(s: Session, store: Path) -> None:
    a = await s.call("memory_remember", content="The condor cron runs every fifteen minutes.")
    before = await s.recall_ids("condor cron")
    rx = await s.call("memory_reindex")
    assert rx["mode"] == "rebuild" and rx["indexed"] >= 1
    assert await s.recall_ids("condor cron") == before and a["id"] in before
    v = await s.call("memory_reindex", verify=True)
    assert v["mode"] == "verify" and v["drift"] == []
    assert clean(store)


# ------------------------------------------------------------------ other stores
async def test_configured_git_identity_is_used(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Ada Lovelace\n\temail = ada@example.org\n")
    store = tmp_path / "store"
    async with open_server(store, home=home) as s2:
        await s2.call("memory_remember", content="The analytical engine uses punched cards.")
    assert git(store, "log", "-1", "--format=%an <%ae>").strip() == "Ada Lovelace <ada@example.org>"


async def test_existing_non_store_folder_is_refused_and_untouched(tmp_path: Path) -> None:
    folder = tmp_path / "my-project"
    folder.mkdir()
    (folder / "notes.txt").write_text("my own notes\n")
    repo = tmp_path / "a-repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "file.txt").write_text("x\n")
    for target in (folder, repo):
        snapshot = sorted((str(p.relative_to(target)), p.is_file() and p.read_bytes())
                          for p in target.rglob("*"))
        async with open_server(target, home=tmp_path / "home") as s2:
            err = await s2.error("memory_status")
            assert "[invalid_store]" in err and str(target.name) in err
            assert "init" in err
            err = await s2.error("memory_remember", content="should not be written")
            assert "[invalid_store]" in err
        assert sorted((str(p.relative_to(target)), p.is_file() and p.read_bytes())
                      for p in target.rglob("*")) == snapshot
    assert not (folder / ".git").exists() and not (folder / "memories").exists()


async def test_plain_git_clone_is_a_store(s: Session, store: Path, tmp_path: Path) -> None:
    a = await s.call("memory_remember", content="The pelican staging database is refreshed every Monday.")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(store), str(clone))
    assert not (clone / ".derived").exists()
    before = commit_count(clone)
    async with open_server(clone, home=tmp_path / "home") as s2:
        assert a["id"] in await s2.recall_ids("pelican staging")
        st = await s2.call("memory_status")
        assert st["unindexed"] == [] and st["counts"]["total"] >= 1
        assert st["git"]["memory_files_dirty"] is False
    assert commit_count(clone) == before  # reading a fresh clone commits nothing
    assert git(clone, "status", "--porcelain").strip() == ""


async def test_new_store_layout(s: Session, store: Path) -> None:
    for name in ("README.md", "dictionary.md", ".gitignore", "memories"):
        assert (store / name).exists(), name
    assert ".derived" in (store / ".gitignore").read_text()
    assert (store / ".derived" / "index.sqlite3").exists()
    assert (Path(git(store, "rev-parse", "--git-dir").strip()) if os.path.isabs(
        git(store, "rev-parse", "--git-dir").strip()) else store / ".git").is_dir()
    first = git(store, "log", "--reverse", "--format=%s").splitlines()[0]
    assert first.startswith("init:")
    tracked = set(git(store, "ls-files").split())
    assert {"README.md", "dictionary.md", ".gitignore"} <= tracked


async def test_hand_file_not_reformatted_and_unknown_keys_kept(s: Session, store: Path) -> None:
    nid = new_id()
    path = store / "memories" / "hand-style.md"
    raw = (f"---\n# a person's comment\nid: {nid}\nentities:\n  - puffin\nproject: {{name: web, tags: [a, b]}}\n"
           f"owner: \"Ada\"\n---\n# Puffin style\n\npuffinstyle text written in an editor\n").encode()
    path.write_bytes(raw)
    assert await s.recall_ids("puffinstyle") == [nid]
    await s.call("memory_read", id=nid)
    assert path.read_bytes() == raw  # read and indexed, never reformatted
    await s.call("memory_feedback", id=nid, helpful=True)  # an operation that writes the file
    rd = await s.call("memory_read", id=nid)
    assert rd["frontmatter"]["project"] == {"name": "web", "tags": ["a", "b"]}
    assert rd["frontmatter"]["owner"] == "Ada" and rd["frontmatter"]["feedback"] == 0.1
    assert rd["frontmatter"]["entities"] == ["puffin"]
    assert "puffinstyle text written in an editor" in path.read_text()
