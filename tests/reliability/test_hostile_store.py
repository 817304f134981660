"""One hostile file never takes the store down: a memory file whose name is not UTF-8, a frontmatter
number too large for a float, a dictionary.md that is a link (to /dev/zero, to a file outside the
store). Each is listed as unindexed with its reason (the name escaped), never read through a link,
never committed, and every other memory is still served: by the server, the CLI and `memory-mcp watch`."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import EXE, Session, git, make_store, open_server, server_env, start_watch

from memory_mcp.app.store import Store

pytestmark = pytest.mark.anyio

BAD_NAME = b"caf\xe9.md"  # Latin-1 bytes: not UTF-8
SHOWN_NAME = "memories/caf\\xe9.md"
HUGE = "9" * 400


def _plant(store: Path, outside: Path) -> None:
    """The three hostile files, the way a person's tools (or a bad sync) leave them."""
    with open(os.path.join(os.fsencode(store / "memories"), BAD_NAME), "wb") as f:
        f.write(b"---\ntype: fact\n---\n# Cafe\n\nlatinnameword\n")
    (store / "memories" / "huge.md").write_text(f"---\nfeedback: {HUGE}\n---\n# Huge\n\nhugenumberword\n")
    outside.write_text("- Outsider: read from outside the store (aka: insideword)\n")
    (store / "dictionary.md").unlink()
    (store / "dictionary.md").symlink_to(outside)


def _reasons(status: dict) -> dict[str, str]:
    return {u["path"]: u["reason"] for u in status["unindexed"]}


async def test_bad_name_huge_number_and_linked_dictionary_are_listed_and_the_rest_served(
        tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    before = git(store, "rev-parse", "HEAD")
    async with open_server(store) as s:
        good = await s.call("memory_remember", content="The heron roost is by the weir.", entities=["insideword"])
        _plant(store, tmp_path / "outside.md")
        reasons = _reasons(await s.call("memory_status"))
        assert "not UTF-8" in reasons[SHOWN_NAME]
        assert "feedback" in reasons["memories/huge.md"] and "400" in reasons["memories/huge.md"]
        assert "symbolic link" in reasons["dictionary.md"]
        assert await s.recall_ids("heron weir") == [good["id"]]
        assert await s.recall_ids("hugenumberword") == []
        # The outside file was not read as the dictionary: the entity is not renamed to its entry.
        assert (await s.call("memory_read", id=good["id"]))["frontmatter"]["entities"] == ["insideword"]
        await _dictionary_to_dev_zero(s, store)
        later = await s.call("memory_remember", content="The kingfisher perch is the willow.")
        assert await s.recall_ids("kingfisher willow") == [later["id"]]
    tracked = git(store, "ls-files", "-s", "dictionary.md")
    assert tracked.startswith("100644"), tracked  # the link was never committed
    assert "huge.md" not in git(store, "ls-files") and "caf" not in git(store, "ls-files")
    assert git(store, "rev-list", "--count", f"{before.strip()}..HEAD").strip() == "2"


async def _dictionary_to_dev_zero(s: Session, store: Path) -> None:
    (store / "dictionary.md").unlink()
    (store / "dictionary.md").symlink_to("/dev/zero")
    reasons = _reasons(await s.call("memory_status"))
    assert "symbolic link" in reasons["dictionary.md"]
    (store / "dictionary.md").unlink()
    os.mkfifo(store / "dictionary.md")  # a pipe must not hang the call either
    assert "named pipe" in _reasons(await s.call("memory_status"))["dictionary.md"]
    (store / "dictionary.md").unlink()
    git(store, "checkout", "--", "dictionary.md")
    assert "dictionary.md" not in _reasons(await s.call("memory_status"))


def test_status_recall_and_sync_print_no_traceback_over_hostile_files(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    Store.open(store).remember("The otter holt is under the alder roots.")
    _plant(store, tmp_path / "outside.md")
    subprocess.run(["git", "init", "-q", "--bare", str(tmp_path / "remote.git")], check=True)
    git(store, "remote", "add", "origin", str(tmp_path / "remote.git"))
    env = server_env(store, tmp_path)
    for args, code in ((["status"], 0), (["recall", "otter", "holt"], 0), (["sync"], 0)):
        done = subprocess.run([str(EXE), *args, "--store", str(store)], capture_output=True, text=True,
                              env=env, timeout=60)
        assert "Traceback" not in done.stderr, (args, done.stderr)
        assert done.returncode == code, (args, done.stdout, done.stderr)
        if args[0] == "status":
            assert SHOWN_NAME in done.stdout and "huge.md" in done.stdout and "dictionary.md" in done.stdout
        if args[0] == "recall":
            assert "otter" in done.stdout.lower()


def test_watch_command_survives_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    proc, lines = start_watch(store, tmp_path)
    try:
        _plant(store, tmp_path / "outside.md")
        deadline = time.monotonic() + 30
        while not any("huge.md" in line for line in lines):  # the watch itself met the bad files
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, lines
            time.sleep(0.05)
        (store / "memories" / "after.md").write_text("# After\n\nwrittenafterword\n")
        while not any("after.md" in line or "1 indexed" in line for line in lines[1:]):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, lines
            time.sleep(0.05)
        assert proc.poll() is None
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "Traceback" not in err, err


def test_a_hard_link_to_a_file_outside_and_a_linked_memories_folder_are_not_read(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nhardlinkword lives outside the store\n")
    os.link(outside, store / "memories" / "linked.md")
    core = Store.open(store)
    reasons = {u.path: u.reason for u in core.status().unindexed}
    assert "hard link" in reasons["memories/linked.md"]
    assert core.recall("hardlinkword").results == []
    assert "linked.md" not in git(store, "ls-files")
    (store / "memories" / "linked.md").unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "far.md").write_text("# Far\n\nfarawayword is outside the store\n")
    (store / "memories").rename(tmp_path / "memories-was")  # .gitkeep and all
    (store / "memories").symlink_to(elsewhere)
    recall = Store.open(store).recall("farawayword")
    assert recall.results == [] and "symbolic link" in recall.coverage.note
    core.close()
