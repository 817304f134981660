"""Sync in the loop: the record of each sync (what came, by whom; what was refused), the guard against
a remote that deletes many memories, rescue refs, offline said once, and the detached background
sync the hooks and the server start.

Real git and a bare repository as the remote (tests/reliability/test_remotes.py has real servers)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import delete_all_and_push, git, hook_env, open_server, pair

from memory_mcp.app import autosync, syncrecord
from memory_mcp.app.store import Store
from memory_mcp.truth.errors import SyncFailed, SyncOffline, SyncRefused
from memory_mcp.vcs import rescue

EXE = str(Path(sys.executable).parent / "memory-mcp")


def test_a_sync_records_the_new_memories_by_author_and_tells_them_once(tmp_path: Path) -> None:
    a, b, _ = pair(tmp_path, seed=1)
    b.remember("The staging database is called heron.")
    b.remember("Deploys happen on Tuesdays after the standup.")
    b.sync()
    a.sync()
    last = syncrecord.latest(a.root)
    assert last is not None and last.outcome == syncrecord.OK and last.why == "command"
    assert last.arrived == {"Bob": 2} and last.changed == 0 and last.pulled >= 2
    assert last.head == git(a.root, "rev-parse", "HEAD").strip()
    assert syncrecord.take_news(a.root) == "sync: 2 new memories arrived (by Bob 2)"
    shown = a.status().git["last_sync"]
    assert shown["outcome"] == "ok" and shown["arrived"] == {"Bob": 2} and "2 new memories" in shown["news"]
    assert syncrecord.take_news(a.root) == ""  # told once
    # Bob's own sync pushed and brought nothing: recorded, nothing to tell.
    mine = syncrecord.latest(b.root)
    assert mine is not None and mine.pushed >= 1 and mine.arrived == {} and syncrecord.take_news(b.root) == ""
    # The record is in the git directory, never in the work tree.
    assert (a.root / ".git" / syncrecord.RECORD_FILE).is_file()
    assert git(a.root, "status", "--porcelain") == ""


def test_a_teammates_memory_merged_in_stays_theirs_and_unaccepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each person has a config folder of their own (the record of what they wrote and accepted).
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "ann-config"))
    a, b, _ = pair(tmp_path, seed=1)
    mine = a.remember("Release notes go in CHANGELOG.md, newest first.")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "bob-config"))
    theirs = b.remember("The auk cluster runs Debian 12.")
    b.sync()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "ann-config"))
    a.sync()  # a real merge: both sides moved
    assert len(git(a.root, "log", "-1", "--format=%P").split()) == 2
    hits = {h.id: h for q in ("Debian cluster", "CHANGELOG release notes") for h in a.recall(q).results}
    assert hits[theirs.id].author == "Bob" and hits[theirs.id].standing == "unaccepted"
    assert hits[mine.id].author == "" and hits[mine.id].standing == "own"


def test_a_remote_that_deletes_every_memory_is_refused_and_both_sides_are_kept(tmp_path: Path) -> None:
    a, b, _ = pair(tmp_path, seed=5)
    before = sorted(p.name for p in (a.root / "memories").rglob("*.md"))
    head = git(a.root, "rev-parse", "HEAD").strip()
    delete_all_and_push(b)
    with pytest.raises(SyncRefused, match=r"deletes 5 of the 5 memory files here.*--allow-deletions") as err:
        a.sync()
    assert sorted(p.name for p in (a.root / "memories").rglob("*.md")) == before
    assert git(a.root, "rev-parse", "HEAD").strip() == head
    last = syncrecord.latest(a.root)
    assert last is not None and last.outcome == syncrecord.REFUSED and last.rescue in str(err.value)
    assert git(a.root, "rev-parse", f"{last.rescue}/local").strip() == head
    assert git(a.root, "rev-parse", f"{last.rescue}/remote").strip() == git(b.root, "rev-parse", "HEAD").strip()
    assert "refused what the remote brings" in syncrecord.take_news(a.root)
    # Said and meant: the person allows it, the deletions are merged, told with the rescue ref.
    result = a.sync(allow_deletions=True)
    assert len(result.deleted) == 5 and result.rescue in result.summary()
    assert not list((a.root / "memories").rglob("*.md"))
    git(a.root, "checkout", f"{result.rescue}/local", "--", "memories")  # what the summary says brings them back
    assert sorted(p.name for p in (a.root / "memories").rglob("*.md")) == before


def test_a_remote_that_deletes_a_few_memories_is_merged_with_the_count_and_a_rescue_ref(tmp_path: Path) -> None:
    a, b, _ = pair(tmp_path, seed=12)
    gone = sorted(p for p in (b.root / "memories").rglob("*.md"))[0]
    git(b.root, "rm", "-q", str(gone.relative_to(b.root)))
    git(b.root, "commit", "-q", "-m", "drop one")
    git(b.root, "push", "-q", "origin", "HEAD:main")
    result = a.sync()
    assert len(result.deleted) == 1 and "the remote deleted 1 memory file(s)" in result.summary()
    assert git(a.root, "cat-file", "-t", f"{result.rescue}/local").strip() == "commit"
    last = syncrecord.latest(a.root)
    assert last is not None and last.deleted == 1 and "the remote deleted 1" in last.news()


def test_the_deletion_limit_grows_with_the_store_and_stops_at_twenty() -> None:
    assert not rescue.too_many(1, 1) and rescue.too_many(2, 2) and rescue.too_many(3, 3)
    assert not rescue.too_many(20, 10_000) and rescue.too_many(21, 10_000)
    assert not rescue.too_many(10, 40) and rescue.too_many(11, 40)


def test_a_merge_that_cannot_be_made_keeps_both_sides_in_rescue_refs(tmp_path: Path) -> None:
    a, b, _ = pair(tmp_path, seed=1)
    for s, text in ((a, "ours\n"), (b, "theirs\n")):
        (s.root / "README.md").write_text(text)
        git(s.root, "commit", "-q", "-am", "readme")
    b.sync()
    head = git(a.root, "rev-parse", "HEAD").strip()
    with pytest.raises(SyncFailed, match="README.md changed on both sides") as err:
        a.sync()
    kept = str(err.value).split(" are kept at ")[0]
    refs = git(a.root, "for-each-ref", "--format=%(refname) %(objectname)", rescue.PREFIX).split("\n")
    assert f" {head}" in "\n".join(r for r in refs if r.endswith(head)) and len([r for r in refs if r]) == 2, kept
    assert git(a.root, "rev-parse", "HEAD").strip() == head


def test_an_unreachable_remote_is_recorded_offline_and_told_once(tmp_path: Path) -> None:
    a = Store.open(tmp_path / "a")
    git(a.root, "remote", "add", "origin", "http://127.0.0.1:9/nothing.git")  # discard port: refused
    for _ in range(2):
        with pytest.raises(SyncOffline, match="could not be reached"):
            a.sync()
        if _ == 0:
            assert "could not be reached" in syncrecord.take_news(a.root)
    assert syncrecord.take_news(a.root) == ""  # still offline: not said again
    assert [r.outcome for r in syncrecord.load(a.root)] == [syncrecord.OFFLINE] * 2


def test_the_background_sync_pulls_records_and_steps_aside_for_a_running_one(tmp_path: Path) -> None:
    a, b, _ = pair(tmp_path, seed=1)
    b.remember("The staging database is called heron.")
    b.sync()
    lock = os.open(a.root / ".git" / autosync.LOCK_FILE, os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        assert autosync.start(a.root, "session start") is None  # one runs: none started
        done = subprocess.run([EXE, "sync", "--background", "session start", "--store", str(a.root)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and done.stdout == "" and len(syncrecord.load(a.root)) == 1  # pair's own
    finally:
        os.close(lock)
    proc = autosync.start(a.root, "session start")
    assert proc is not None and proc.wait(timeout=60) == 0
    last = syncrecord.latest(a.root)
    assert last is not None and last.why == "session start" and last.arrived == {"Bob": 1}
    assert git(a.root, "status", "--porcelain") == ""
    shown = subprocess.run([EXE, "status", "--store", str(a.root)], capture_output=True, text=True, timeout=60).stdout
    assert f"last sync: {last.at} (session start): ok, pulled 1 commit(s), pushed 0; 1 new memory arrived (by Bob 1)" \
        in shown


def test_no_background_sync_without_a_remote_or_when_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a, _, _ = pair(tmp_path)
    lone = Store.open(tmp_path / "lone")
    assert autosync.start(lone.root, "session start") is None
    monkeypatch.setenv("MEMORY_MCP_SYNC", "off")
    assert autosync.start(a.root, "session start") is None


def wait_for(check, seconds: float = 30):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_session_start_pulls_in_the_background_and_the_next_prompt_says_what_came(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = hook_env(tmp_path, monkeypatch)
    a, b, bare = pair(tmp_path, seed=1)
    b.remember("The staging database is called heron.")
    b.sync()
    a.remember("Written here while no sync ran: the gate code is 4.")  # a push not done yet

    def hook(event: str, payload: dict) -> str:
        done = subprocess.run([EXE, "hook", event, "--store", str(a.root)], input=json.dumps(payload),
                              capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    hook("SessionStart", {"session_id": "s1", "cwd": env["PROJECT"], "source": "startup"})
    wait_for(lambda: len(syncrecord.load(a.root)) == 2)
    last = syncrecord.load(a.root)[-1]
    assert last.why == "session start" and last.arrived == {"Bob": 1} and last.pushed == 2  # ours and the merge
    assert git(a.root, "ls-remote", str(bare), "main").split()[0] == git(a.root, "rev-parse", "HEAD").strip()
    said = hook("UserPromptSubmit", {"session_id": "s1", "cwd": env["PROJECT"], "prompt": "thanks!"})
    assert "the project store: sync: 1 new memory arrived (by Bob 1)" in said
    assert hook("UserPromptSubmit", {"session_id": "s1", "cwd": env["PROJECT"], "prompt": "thanks!"}) == ""
    # Stop pushes what this machine wrote since; nothing written, nothing started.
    hook("Stop", {"session_id": "s1", "cwd": env["PROJECT"]})
    time.sleep(0.5)
    assert len(syncrecord.load(a.root)) == 2
    a.remember("The heron database is backed up nightly.")
    hook("Stop", {"session_id": "s1", "cwd": env["PROJECT"]})
    wait_for(lambda: len(syncrecord.load(a.root)) == 3)
    assert git(b.root, "ls-remote", "origin", "main").split()[0] == git(a.root, "rev-parse", "HEAD").strip()


def test_an_untrusted_project_store_is_never_synced_by_a_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = hook_env(tmp_path, monkeypatch)
    a, _, bare = pair(tmp_path, seed=1)
    project = Path(env["PROJECT"])
    subprocess.run(["git", "clone", "-q", str(bare), str(project / ".memory")], check=True)  # came with a clone
    done = subprocess.run([EXE, "hook", "SessionStart"], capture_output=True, text=True, env=env, timeout=60,
                          input=json.dumps({"session_id": "s", "cwd": str(project), "source": "startup"}))
    assert done.returncode == 0 and "not made or trusted on this machine" in done.stdout
    time.sleep(1.0)
    assert syncrecord.latest(project / ".memory") is None
    assert not (project / ".memory" / ".git" / autosync.LOCK_FILE).exists()


@pytest.mark.anyio
async def test_the_server_pushes_after_writes_once_quiet(tmp_path: Path) -> None:
    a, b, bare = pair(tmp_path, seed=1)
    a.close()
    async with open_server(a.root, extra_env={"MEMORY_MCP_SYNC_DELAY": "0.3"}) as s:
        for i in range(3):
            await s.call("memory_remember", content=f"Burst fact {i}: the auk cluster's rack is {i}.")
        head = git(a.root, "rev-parse", "HEAD").strip()
        pushed = wait_for(lambda: git(a.root, "ls-remote", str(bare), "main").split()[:1] == [head])
    assert pushed
    records = syncrecord.load(a.root)
    assert [r.why for r in records[-1:]] == ["after writes"] and records[-1].pushed >= 1


@pytest.mark.anyio
async def test_a_push_pending_when_the_server_exits_is_done_by_a_process_that_outlives_it(tmp_path: Path) -> None:
    a, _, bare = pair(tmp_path, seed=1)
    a.close()
    async with open_server(a.root, extra_env={"MEMORY_MCP_SYNC_DELAY": "600"}) as s:
        await s.call("memory_remember", content="Written just before the agent closed: the heron queue is paused.")
        head = git(a.root, "rev-parse", "HEAD").strip()
    # The server is gone; its pending push was handed to a detached sync, which finishes on its own.
    assert wait_for(lambda: git(a.root, "ls-remote", str(bare), "main").split()[:1] == [head])
    assert syncrecord.load(a.root)[-1].why == "after writes"
