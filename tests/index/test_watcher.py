"""The file watcher (issue 6): with it on (the default) and off, a real `memory-mcp serve` over stdio
sees every hand edit on the very next call, with no pause between the edit and the call.

The watcher-off server walks the store with the stat gate on every call; the watcher-on server
looks only at the paths its events name, so these tests are what keeps the two honest."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import EXE, Session, fm_file, git, new_id, open_server, server_env, start_watch, subjects
from mcp import Client, StdioServerParameters

from memory_mcp.app.store import Store
from memory_mcp.index import watch as watch_module
from memory_mcp.index.watch import BURST_EVENTS, enabled

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module", params=["on", "off"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, mode: str) -> Path:
    return tmp_path_factory.mktemp(f"watcher-{mode}") / "store"


@pytest.fixture(scope="module")
async def srv(root: Path, mode: str):
    async with open_server(root, extra_env={"MEMORY_MCP_WATCH": "1" if mode == "on" else "0"}) as session:
        await session.call("memory_status")
        yield session


def clean(store: Path) -> bool:
    return git(store, "status", "--porcelain").strip() == ""


def tag(i: int) -> str:
    """A number as letters: search splits digits off a word, and `1` would match every round."""
    return "".join("abcdefghij"[int(d)] for d in str(i))


def hand_file(store: Path, name: str, word: str, mem_id: str | None = None) -> tuple[Path, str]:
    mem_id = mem_id or new_id()
    path = fm_file(store, name, f"# Note about {word}\n\nThe {word} value is in this note.\n", id=mem_id)
    return path, mem_id


async def total(s: Session) -> int:
    return (await s.call("memory_status"))["counts"]["total"]


# ------------------------------------------------------------------ every kind of hand edit
async def test_hand_add_edit_rename_delete_seen_by_the_very_next_call(srv: Session, root: Path) -> None:
    path, mid = hand_file(root, "heron.md", "heronadd")
    assert await srv.recall_ids("heronadd") == [mid]
    # The new word shares no leading letters with the old: recall looks an unmatched word up by them.
    path.write_text(path.read_text().replace("heronadd", "egretedit"))
    assert await srv.recall_ids("egretedit") == [mid]
    assert await srv.recall_ids("heronadd") == []
    moved = root / "memories" / "birds" / "heron-moved.md"
    moved.parent.mkdir()
    path.rename(moved)
    r = await srv.call("memory_recall", query="egretedit")
    assert [(h["id"], h["path"]) for h in r["results"]] == [(mid, "memories/birds/heron-moved.md")]
    moved.unlink()
    assert await srv.recall_ids("egretedit") == []
    assert "not_found" in await srv.error("memory_read", id=mid)
    assert clean(root)


async def test_edits_in_the_instant_before_each_call(srv: Session, root: Path) -> None:
    path, mid = hand_file(root, "ibis.md", f"ibisround{tag(0)}")
    for i in range(1, 25):
        path.write_text(path.read_text().replace(f"ibisround{tag(i - 1)}", f"ibisround{tag(i)}"))
        assert await srv.recall_ids(f"ibisround{tag(i)}") == [mid], i
        extra, extra_id = hand_file(root, f"ibis-extra-{i}.md", f"wrenextra{tag(i)}")
        assert await srv.recall_ids(f"wrenextra{tag(i)}") == [extra_id], i
        extra.unlink()
        assert await srv.recall_ids(f"wrenextra{tag(i)}") == [], i


async def test_folder_moved_in_and_out(srv: Session, root: Path, tmp_path: Path) -> None:
    """A folder moved in is one event for the folder, none for the files inside it."""
    ids = [hand_file(tmp_path, f"batch/deep/kiwi-{i}.md", f"kiwifolder{tag(i)}")[1] for i in range(3)]
    shutil.move(str(tmp_path / "memories" / "batch"), str(root / "memories" / "batch"))
    assert await srv.recall_ids(f"kiwifolder{tag(0)}") == [ids[0]]
    assert await srv.recall_ids(f"kiwifolder{tag(2)}") == [ids[2]]
    shutil.move(str(root / "memories" / "batch"), str(tmp_path / "gone"))
    assert await srv.recall_ids(f"kiwifolder{tag(1)}") == []
    assert clean(root)


async def test_burst_of_many_edits(srv: Session, root: Path) -> None:
    before = await total(srv)
    ids = {i: hand_file(root, f"burst/loon-{i}.md", f"loonburst{tag(i)}")[1] for i in range(300)}
    assert await total(srv) == before + 300
    for i in range(0, 300, 2):
        (root / "memories" / "burst" / f"loon-{i}.md").unlink()
    for i in range(1, 300, 2):
        p = root / "memories" / "burst" / f"loon-{i}.md"
        p.write_text(p.read_text().replace(f"loonburst{tag(i)}", f"loonchanged{tag(i)}"))
    assert await total(srv) == before + 150
    assert await srv.recall_ids(f"loonchanged{tag(299)}") == [ids[299]]
    assert await srv.recall_ids(f"loonburst{tag(299)}") == []
    assert await srv.recall_ids(f"loonburst{tag(2)}") == []
    shutil.rmtree(root / "memories" / "burst")
    assert await total(srv) == before
    assert clean(root)


async def test_broken_file_then_fixed_then_deleted(srv: Session, root: Path) -> None:
    mid = new_id()
    path = root / "memories" / "lark.md"
    path.write_text(f"---\nid: {mid}\nentities: [oops\n---\n# Lark\n\nlarkfixed text\n")
    st = await srv.call("memory_status")
    assert "memories/lark.md" in {u["path"] for u in st["unindexed"]}
    path.write_text(f"---\nid: {mid}\nentities: [oops]\n---\n# Lark\n\nlarkfixed text\n")
    assert await srv.recall_ids("larkfixed") == [mid]
    path.write_text(f"---\nid: {mid}\nentities: [oops\n---\n# Lark\n\nlarkfixed text\n")
    assert await srv.recall_ids("larkfixed") == []
    path.unlink()
    st = await srv.call("memory_status")
    assert "memories/lark.md" not in {u["path"] for u in st["unindexed"]}


async def test_duplicate_becomes_the_memory_when_the_original_goes(srv: Session, root: Path) -> None:
    path, mid = hand_file(root, "myna.md", "mynadup")
    assert await srv.recall_ids("mynadup") == [mid]
    copy = root / "memories" / "myna-copy.md"
    copy.write_bytes(path.read_bytes())
    st = await srv.call("memory_status")
    assert "duplicate id" in {u["path"]: u["reason"] for u in st["unindexed"]}["memories/myna-copy.md"]
    path.unlink()  # the person moved it by copy-then-delete: the copy is the memory now
    r = await srv.call("memory_recall", query="mynadup")
    assert [(h["id"], h["path"]) for h in r["results"]] == [(mid, "memories/myna-copy.md")]
    copy.unlink()


async def test_dictionary_edits_in_place_and_by_replacement(srv: Session, root: Path) -> None:
    r = await srv.call("memory_remember", content="Backups of the nightjar database run at two.",
                       entities=["njdb"])
    dictionary = root / "dictionary.md"
    original = dictionary.read_text()
    with dictionary.open("a") as f:
        f.write("- nightjar-db: the nightjar database (aka: njdb)\n")
    hit = (await srv.call("memory_recall", query="nightjar backups"))["results"][0]
    assert hit["id"] == r["id"] and hit["entities"] == ["nightjar-db"]
    assert subjects(root, 1)[0].startswith("reconcile:") and "dictionary edited" in subjects(root, 1)[0]
    # An editor that saves by writing a new file and renaming it over the old one.
    tmp = root / "dictionary.md.new"
    tmp.write_text(original + "- nightjar-database: the nightjar database (aka: njdb)\n")
    tmp.rename(dictionary)
    hit = (await srv.call("memory_recall", query="nightjar backups"))["results"][0]
    assert hit["entities"] == ["nightjar-database"]
    with dictionary.open("a") as f:  # and the one after that, in place, on the new file
        f.write("- njdb-final: the nightjar database (aka: NJDB)\n")
    dictionary.write_text(dictionary.read_text().replace("- nightjar-database: the nightjar database (aka: njdb)\n",
                                                         ""))
    hit = (await srv.call("memory_recall", query="nightjar backups"))["results"][0]
    assert hit["entities"] == ["njdb-final"]
    dictionary.write_text(original)
    await srv.call("memory_status")
    assert clean(root)


async def test_own_writes_make_no_extra_commits(srv: Session, root: Path) -> None:
    before = int(git(root, "rev-list", "--count", "HEAD"))
    r = await srv.call("memory_remember", content="The osprey feed refreshes every ten minutes.")
    assert await srv.recall_ids("osprey feed") == [r["id"]]
    await srv.call("memory_update", id=r["id"], content="The osprey feed refreshes every five minutes.")
    assert await srv.recall_ids("osprey five") == [r["id"]]
    assert int(git(root, "rev-list", "--count", "HEAD")) == before + 2
    assert clean(root)


async def same_stat_edit(s: Session, store: Path, word: str) -> tuple[str, str]:
    """Index a file an hour old, then change its text keeping its size and mtime, as `touch -d`
    does after an edit: it is not racily clean, so only its ctime tells the stat gate it changed."""
    await s.call("memory_status")  # creates the store
    path, mid = hand_file(store, f"{word}.md", f"{word}bbbbb")
    old = time.time_ns() - 3600 * 10**9
    os.utime(path, ns=(old, old))
    assert await s.recall_ids(f"{word}bbbbb") == [mid]
    before = path.stat()
    path.write_text(path.read_text().replace(f"{word}bbbbb", f"{word}ccccc"))
    os.utime(path, ns=(old, old))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    return mid, f"{word}ccccc"


async def test_edit_keeping_size_and_mtime_is_caught_by_the_watcher(tmp_path: Path) -> None:
    async with open_server(tmp_path / "store", extra_env={"MEMORY_MCP_WATCH": "1"}) as s:
        mid, word = await same_stat_edit(s, tmp_path / "store", "plover")
        assert await s.recall_ids(word) == [mid]


# ------------------------------------------------------------------ several processes, one store
async def test_two_servers_share_a_store(root: Path, mode: str) -> None:
    other = "0" if mode == "on" else "1"
    async with open_server(root, extra_env={"MEMORY_MCP_WATCH": other}) as b, \
            open_server(root, extra_env={"MEMORY_MCP_WATCH": "1"}) as c:
        path, mid = hand_file(root, "puffin.md", "puffinone")
        assert await b.recall_ids("puffinone") == [mid]  # b reconciles and commits the hand edit
        commits = int(git(root, "rev-list", "--count", "HEAD"))
        assert await c.recall_ids("puffinone") == [mid]  # c saw the same events: nothing left to do
        assert int(git(root, "rev-list", "--count", "HEAD")) == commits
        w = await c.call("memory_remember", content="The puffin colony count is published in May.")
        assert await b.recall_ids("puffin colony") == [w["id"]]
        # Not "puffintwo": recall looks an unmatched word up by its leading letters, and the deleted
        # file's word would then find the puffin colony.
        path.write_text(path.read_text().replace("puffinone", "skuatwo"))
        assert await c.recall_ids("skuatwo") == [mid]
        assert await b.recall_ids("skuatwo") == [mid]
        path.unlink()
        assert await b.recall_ids("skuatwo") == []
        assert await c.recall_ids("skuatwo") == []
        assert clean(root)


# ------------------------------------------------------------------ a watcher that dies
async def test_dead_watcher_falls_back_to_the_stat_gate(tmp_path: Path) -> None:
    """A file name that is not UTF-8 stops watchfiles for good: the server goes on walking."""
    store = tmp_path / "store"
    async with open_server(store, extra_env={"MEMORY_MCP_WATCH": "1"}) as s:
        await s.call("memory_status")
        path, mid = hand_file(store, "rail.md", "railone")
        assert await s.recall_ids("railone") == [mid]
        fd = os.open(os.fsencode(store / "memories") + b"/notes-\xff.txt", os.O_CREAT | os.O_WRONLY)
        os.close(fd)
        path.write_text(path.read_text().replace("railone", "railtwo"))
        assert await s.recall_ids("railtwo") == [mid]
        added, added_id = hand_file(store, "rail-added.md", "railadded")
        assert await s.recall_ids("railadded") == [added_id]
        added.unlink()
        assert await s.recall_ids("railadded") == []
        assert subjects(store, 1)[0].startswith("reconcile:")


def test_dead_watcher_in_process_stops_and_the_walk_takes_over(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store", watch=True)
    try:
        r = store.remember("The rook ledger closes on Fridays.")
        assert store.watcher is not None and store.watcher.running
        fd = os.open(os.fsencode(store.root / "memories") + b"/x-\xfe.txt", os.O_CREAT | os.O_WRONLY)
        os.close(fd)
        path = store.root / r.path
        path.write_text(path.read_text().replace("Fridays", "Mondays"))
        assert [h.id for h in store.recall("rook Mondays").results] == [r.id]
        assert not store.watcher.running and store.session.last is not None and store.session.last.walked
        assert "decode" in store.watcher.why_off
    finally:
        store.close()


def test_a_burst_makes_the_next_call_walk(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store", watch=True)
    try:
        store.refresh()
        assert not store.refresh().walked
        folder = store.root / "memories" / "many"
        folder.mkdir()
        # The watch on a new folder is added after the event that announced it: files written before
        # that send no event of their own (a busy machine made this test see fewer than BURST_EVENTS).
        store.refresh()
        store.refresh()
        for i in range(BURST_EVENTS):  # one event each (watchfiles folds the write into the create)
            (folder / f"n{i}.txt").write_text("x")
        assert store.refresh().walked
        assert not store.refresh().walked
    finally:
        store.close()


def test_writes_to_the_index_folder_are_no_watch_events(tmp_path: Path) -> None:
    """The markers live in .derived/watch/, not .derived/ where the index is: every page SQLite
    wrote there was an event for watchfiles' thread to read, and on two cores that stream slowed the
    writer it came from (first call after 10,000 hand-added files, 3 rounds interleaved: 4.73-4.91 s
    with .derived/ watched, 4.26-4.47 s with only the markers' folder)."""
    store = Store.open(tmp_path / "store", watch=True)
    try:
        store.refresh()
        watcher = store.watcher
        assert watcher is not None and watcher.running
        watcher.plan()  # caught up: every event so far is taken

        def taken_by_a_catch_up() -> int:
            before = watcher._events
            watcher.plan()
            return watcher._events - before

        idle = taken_by_a_catch_up()  # the markers' own events
        for i in range(20):
            (store.root / ".derived" / f"scratch-{i}").write_bytes(b"x" * 10_000)
        assert taken_by_a_catch_up() == idle
        assert list((store.root / ".derived" / watch_module.MARKS).iterdir()) == []  # markers go
        store.remember("The skua queue drains nightly.")
        assert [h.path for h in store.recall("skua").results]
    finally:
        store.close()


def test_new_folder_gets_a_second_look(tmp_path: Path) -> None:
    """A file created in a new folder before the watch on it exists has no event: the folder is
    walked again on the call after the one that saw it appear."""
    store = Store.open(tmp_path / "store", watch=True)
    try:
        store.refresh()
        hand_file(store.root, "new-folder/a.md", "egret")
        assert store.refresh().folders == ["memories/new-folder"]
        assert store.refresh().folders == ["memories/new-folder"]
        assert store.refresh().folders == []
        assert [h.path for h in store.recall("egret").results] == ["memories/new-folder/a.md"]
    finally:
        store.close()


def test_lagging_watcher_walks_and_stays_correct(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No time at all to catch up: every call gives up on the events, restarts the watch and walks."""
    monkeypatch.setattr(watch_module, "CATCH_UP_SECONDS", 0)
    store = Store.open(tmp_path / "store", watch=True)
    try:
        r = store.remember("The teal pipeline deploys at noon.")
        path = store.root / r.path
        for word in ("dusk", "dawn"):
            path.write_text(path.read_text().replace("noon" if word == "dusk" else "dusk", word))
            assert [h.id for h in store.recall(f"teal {word}").results] == [r.id]
            assert store.session.last is not None and store.session.last.walked
    finally:
        store.close()


def test_safety_sweep_walks_when_due(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store.open(tmp_path / "store", watch=True)
    try:
        store.refresh()
        assert not store.refresh().walked
        monkeypatch.setattr(watch_module, "SWEEP_SECONDS", 0)
        assert store.refresh().walked
    finally:
        store.close()


def test_unchanged_store_does_not_walk_with_the_watcher(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store", watch=True)
    try:
        assert store.refresh().walked  # the watch just started: changes made before it are no events
        # The first memory makes this month's folder, which the next two calls look into (a new
        # folder's watch may come after its first files): then the folder is an old one.
        store.remember("The auk cluster has three nodes.")
        store.refresh()
        store.refresh()
        r = store.remember("The gannet dataset is refreshed weekly.")
        report = store.refresh()
        assert not report.walked and report.scanned == 1  # only the file this process wrote
        assert store.refresh().scanned == 0
        shutil.rmtree(store.root / ".derived")  # a watched folder replaced: the watch starts over
        assert store.refresh().walked
        assert [h.id for h in store.recall("gannet").results] == [r.id]
        assert not store.refresh().walked
    finally:
        store.close()


# ------------------------------------------------------------------ switches and the foreground
def test_switch_environment_and_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMORY_MCP_WATCH", raising=False)
    assert enabled() is True
    monkeypatch.setenv("MEMORY_MCP_WATCH", "0")
    assert enabled() is False and enabled(True) is True
    monkeypatch.setenv("MEMORY_MCP_WATCH", "1")
    assert enabled(False) is False


def test_one_shot_commands_keep_no_watcher(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store")  # what `memory-mcp recall`, `status`, ... open
    try:
        store.remember("The grebe survey is in April.")
        assert store.watcher is None and store.refresh().walked
    finally:
        store.close()


async def test_no_watch_flag_serves_with_the_stat_gate(tmp_path: Path) -> None:
    """The flag wins over the environment: with no watcher, the stat gate finds an edit that keeps
    size and mtime (its ctime moved) on the next call."""
    store = tmp_path / "store"
    home = tmp_path / "home"
    home.mkdir()
    params = StdioServerParameters(command=str(EXE), args=["serve", "--no-watch"],
                                   env=server_env(store, home, {"MEMORY_MCP_WATCH": "1"}))
    async with Client(params) as client:
        s = Session(client, store)
        mid, word = await same_stat_edit(s, store, "crake")
        assert await s.recall_ids(word) == [mid]
        assert (await s.call("memory_reindex", verify=True))["drift"] == []


def test_foreground_watch_command_indexes_and_commits_on_save(tmp_path: Path) -> None:
    root = tmp_path / "store"
    r = Store.open(root).remember("The shrike report goes out on Mondays.")
    proc, lines = start_watch(root, tmp_path)
    try:
        path = root / r.path
        path.write_text(path.read_text().replace("Mondays", "Tuesdays"))
        deadline = time.monotonic() + 30
        while not any("1 indexed" in line for line in lines):
            assert time.monotonic() < deadline, lines
            time.sleep(0.05)
        assert subjects(root, 1)[0].startswith("reconcile:")
        assert [h.id for h in Store.open(root).recall("shrike Tuesdays").results] == [r.id]
    finally:
        proc.terminate()
        proc.wait(10)
