"""Storage that fails under the server: a damaged index, a read-only store, a full disk.

The tests run as root, which may write anywhere: the read-only cases run the server without the
capabilities that let root ignore file modes (capsh), and the full disk is a small tmpfs mounted in
a private user and mount namespace (unshare). Each runs a driver script that talks to a real
`memory-mcp serve` over stdio and prints what it saw as JSON."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT, fm_file, git, make_store, new_id, open_server, server_env
from reliability_support import facility, needs_capsh, unprivileged

from memory_mcp.app.store import Store
from memory_mcp.truth.errors import IndexRebuilt

pytestmark = pytest.mark.anyio
TESTS = ROOT / "tests"

DRIVER_HEAD = f"""
import anyio, json, os, shutil, subprocess, sys
from pathlib import Path
sys.path.insert(0, {str(TESTS)!r})
from conftest import open_server

def text(r):
    return "".join(getattr(c, "text", "") for c in r.content)

def listing(folder):
    return sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*"))
"""


def run_driver(body: str, store: Path, wrap: Callable[[list[str]], list[str]], tmp_path: Path) -> dict:
    """Run `body` (async code filling the dict `out`) as `wrap(command)`, with STORE bound; return `out`."""
    script = tmp_path / "driver.py"
    script.write_text(DRIVER_HEAD + f"STORE = Path({str(store)!r})\n" + "async def main(out):\n"
                      + textwrap.indent(textwrap.dedent(body), "    ")
                      + "\nout = {}\nanyio.run(main, out)\nprint(json.dumps(out))\n")
    env = server_env(store, tmp_path / "home")
    (tmp_path / "home").mkdir(exist_ok=True)
    done = subprocess.run(wrap([sys.executable, str(script)]), capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ damaged index
async def test_garbage_index_is_rebuilt_and_reported(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with open_server(store) as s:
        m = await s.call("memory_remember", content="The tern ingest runs hourly.")
    index = store / ".derived" / "index.sqlite3"
    for leftover in index.parent.glob("index.sqlite3-*"):
        leftover.unlink()
    index.write_bytes(b"\x00garbage, not SQLite\xff" * 512)
    async with open_server(store) as s:
        r = await s.call("memory_recall", query="tern ingest")
        assert [h["id"] for h in r["results"]] == [m["id"]]
        assert "was unreadable" in r["coverage"]["note"] and "rebuilt" in r["coverage"]["note"]
        again = await s.call("memory_recall", query="tern ingest")
        assert again["coverage"]["note"] == ""  # reported once, not on every answer
    assert git(store, "status", "--porcelain").strip() == ""


@pytest.mark.parametrize("where", [0.4, 0.7])
async def test_index_with_damaged_pages_is_rebuilt_and_reported(tmp_path: Path, where: float) -> None:
    """Garbage inside an otherwise valid index: found when the file is opened (reported in the
    coverage note) or when a call first reads a damaged page, whichever call that is (reported as
    [index_rebuilt]); that call answers once called again, from a rebuilt index, and nothing is
    reported twice. (The damage at 0.4 lies in pages a recall never reads but memory_status does,
    its counts and partial indexes: it surfaced there, and not at the first call as this test once
    assumed.)"""
    store = tmp_path / "store"
    make_store(store)
    ids = [new_id() for _ in range(25)]
    for i, mem_id in enumerate(ids):
        fm_file(store, f"skua-{i}.md", f"# Skua colony {i}\n\n" + f"Skua colony {i} nests on the skua{i} cliff. " * 8,
                id=mem_id)
    async with open_server(store) as s:
        await s.call("memory_status")
    index = store / ".derived" / "index.sqlite3"
    con = sqlite3.connect(index)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(index.read_bytes())
    start = int(len(data) * where)
    data[start:start + 16384] = bytes((i * 31) % 256 for i in range(len(data[start:start + 16384])))
    index.write_bytes(bytes(data))
    rebuilt = 0
    async with open_server(store) as s:
        answers = {}
        for name, args in (("memory_recall", {"query": "skua7 cliff"}), ("memory_status", {}),
                           ("memory_recall", {"query": "skua7 cliff"}), ("memory_status", {})):
            r = await s.raw(name, **args)
            if r.is_error:
                text = "".join(c.text for c in r.content)
                assert "[index_rebuilt]" in text and "Call again" in text, text
                rebuilt += 1
                r = await s.raw(name, **args)
                assert not r.is_error, r.content
            answers[name] = r.structured_content
        assert rebuilt <= 1
        assert ids[7] in [h["id"] for h in answers["memory_recall"]["results"]]
        assert answers["memory_status"]["counts"]["total"] == 25 and answers["memory_status"]["unindexed"] == []
    assert git(store, "status", "--porcelain").strip() == ""


def test_undecodable_text_in_the_index_counts_as_damage(tmp_path: Path) -> None:
    """Regression: a damaged page that still parsed gave bytes that are not UTF-8, which surfaced as
    `[internal] OperationalError: Could not decode to UTF-8` on every recall instead of a rebuild."""
    core = Store.open(tmp_path / "store")
    m = core.remember("The shag colony moved north.")
    core.close()
    con = sqlite3.connect(core.index_path)
    con.execute("UPDATE memories SET title = CAST(X'C328FFFE' AS TEXT)")
    con.commit()
    con.close()
    again = Store.open(core.root)
    with pytest.raises(IndexRebuilt):
        again.recall("shag colony")
    assert [h.id for h in again.recall("shag colony").results] == [m.id]
    assert again.read(id=m.id).title == "The shag colony moved north."
    again.close()


# ------------------------------------------------------------------ read-only store
READ_ONLY_MEMORIES = """
async with open_server(STORE) as s:
    before = listing(STORE / "memories")
    r = await s.raw("memory_remember", content="The plover cache is warm.")
    out["remember"] = [r.is_error, text(r)]
    r = await s.raw("memory_recall", query="curlew")
    out["recall"] = [r.is_error, [h["id"] for h in (r.structured_content or {}).get("results", [])]]
    out["same_files"] = listing(STORE / "memories") == before
"""

READ_ONLY_STORE = """
async with open_server(STORE) as s:
    r = await s.raw("memory_remember", content="The plover cache is warm.")
    out["remember"] = [r.is_error, text(r)]
    for query in ("curlew", "avocet"):
        r = await s.raw("memory_recall", query=query)
        out[query] = [r.is_error, [h["id"] for h in (r.structured_content or {}).get("results", [])]]
    r = await s.raw("memory_status")
    out["status"] = [r.is_error, text(r)]
exe = Path(sys.executable).parent / "memory-mcp"
for command in (["status"], ["recall", "curlew"], ["digest", "--hook"], ["export"], ["remember", "a plover note"]):
    done = subprocess.run([str(exe), *command], capture_output=True, text=True)
    out["cli " + command[0]] = [done.returncode, done.stdout, done.stderr]
"""


@needs_capsh
async def test_read_only_memories_folder_gives_a_clear_error_and_no_file(tmp_path: Path) -> None:
    store = tmp_path / "store"
    async with open_server(store) as s:
        m = await s.call("memory_remember", content="The curlew importer is idempotent.")
    # Every folder, month folders included: new memories go to memories/YYYY/MM/.
    folders = [store / "memories", *(p for p in (store / "memories").rglob("*") if p.is_dir())]
    for folder in folders:
        folder.chmod(0o555)
    try:
        out = run_driver(READ_ONLY_MEMORIES, store, unprivileged, tmp_path)
    finally:
        for folder in folders:
            folder.chmod(0o755)
    is_error, text = out["remember"]
    assert is_error and "[store_unwritable]" in text and "Permission denied" in text, text
    assert out["recall"] == [False, [m["id"]]]  # reading still works
    assert out["same_files"]
    assert git(store, "status", "--porcelain").strip() == ""


@needs_capsh
async def test_read_only_store_is_read_and_its_writes_refused(tmp_path: Path) -> None:
    # On a store shared read-only (a mounted team store, another user's clone) status, recall,
    # digest and export all failed with [store_unwritable] (Permission denied: memory-mcp.lock), so a
    # SessionStart hook on it failed too. Reads now work; the lock and index live in the cache folder.
    store = tmp_path / "store"
    async with open_server(store) as s:
        m = await s.call("memory_remember", content="The curlew importer is idempotent.")
    edited = store / m["path"]
    edited.write_text(edited.read_text() + "\nThe avocet feed joins it nightly.\n")  # a hand edit, uncommitted
    head = git(store, "rev-parse", "HEAD")
    listing_before = sorted(str(p.relative_to(store)) for p in store.rglob("*"))
    subprocess.run(["chmod", "-R", "a-w", str(store)], check=True)
    try:
        out = run_driver(READ_ONLY_STORE, store, unprivileged, tmp_path)
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(store)], check=True)
    assert out["curlew"] == [False, [m["id"]]] and out["avocet"] == [False, [m["id"]]]  # the edit is indexed
    assert out["status"][0] is False and "1 memory" in out["status"][1]
    for command in ("status", "recall", "digest", "export"):
        code, stdout, stderr = out["cli " + command]
        assert code == 0 and "store_unwritable" not in stderr, (command, stderr)
    assert m["id"] in out["cli recall"][1] and '"hookSpecificOutput"' in out["cli digest"][1]
    for is_error_or_code, text in (out["remember"][:2], out["cli remember"][::2]):
        assert is_error_or_code and "[store_unwritable]" in text and "read-only for you" in text, text
    # Nothing in the store changed, and the hand edit was not committed from there.
    assert git(store, "rev-parse", "HEAD") == head
    assert git(store, "status", "--porcelain").strip() == f"M {m['path']}"
    assert sorted(str(p.relative_to(store)) for p in store.rglob("*")) == listing_before
    assert list((tmp_path / "home" / ".cache" / "memory-mcp" / "stores").glob("store-*/index.sqlite3"))


UNREADABLE_FOLDER = """
(STORE / "memories" / "elsewhere.md").write_text("# Elsewhere\\n\\nThe stilt nests on the lagoon.\\n")
async with open_server(STORE) as s:
    r = await s.call("memory_recall", query="avocet")
    out["recall"] = [h["id"] for h in r["results"]]
    out["coverage"] = r["coverage"]
    out["edit_seen"] = len((await s.call("memory_recall", query="stilt lagoon"))["results"])
"""


@needs_capsh
async def test_unreadable_folder_is_not_read_as_every_file_deleted(tmp_path: Path) -> None:
    """A permission error on a folder must not look like its memories were deleted (peers lost data
    this way): they stay indexed and in git, the note says why the sweep stopped, and edits elsewhere
    are still seen."""
    store = tmp_path / "store"
    make_store(store)
    mem_id = new_id()
    fm_file(store, "sub/avocet.md", "# Avocet\n\nThe avocet colony is on the east bank.\n", id=mem_id)
    async with open_server(store) as s:
        assert await s.recall_ids("avocet") == [mem_id]
    commits = git(store, "rev-list", "--count", "HEAD")
    (store / "memories" / "sub").chmod(0)
    try:
        out = run_driver(UNREADABLE_FOLDER, store, unprivileged, tmp_path)
    finally:
        (store / "memories" / "sub").chmod(0o755)
    assert out["recall"] == [mem_id]
    assert out["coverage"]["complete"] is False and "Permission denied" in out["coverage"]["note"], out
    assert out["edit_seen"] == 1
    assert "deleted" not in git(store, "log", "--format=%s", f"-n{int(commits)}")
    assert (store / "memories" / "sub" / "avocet.md").exists()
    assert "memories/sub/avocet.md" in git(store, "ls-files")


# ------------------------------------------------------------------ full disk
needs_unshare = pytest.mark.skipif(
    not (shutil.which("unshare") and facility(["unshare", "-rm", "sh", "-c", "mount -t tmpfs none /mnt"])),
    reason="unprivileged user and mount namespaces are not available to mount a small tmpfs")

FULL_DISK = """
DISK = STORE.parent
async with open_server(STORE) as s:
    first = await s.call("memory_remember", content="The dunlin service keeps seven days of logs.")
    filler = open(DISK / "filler", "wb", buffering=0)
    try:
        while True:
            filler.write(b"\\0" * 4096)
    except OSError:
        pass
    full = filler.tell()
    # Freed a little at a time, so the disk fills up at a different step of a write each time:
    # the index, the memory file, or git's objects.
    for n, free in enumerate((0, 8192, 32768, 65536, 131072)):
        os.truncate(DISK / "filler", full - free)
        r = await s.raw("memory_remember", content=f"Attempt {n}: " + "The knot pipeline batches writes. " * 600)
        out.setdefault("full", []).append([r.is_error, text(r)])
        out.setdefault("stray", []).extend(p.name for p in (STORE / "memories").rglob(".*.tmp"))
    filler.close()
    os.unlink(DISK / "filler")
    r = await s.raw("memory_remember", content="The knot pipeline batches writes of 500 rows.")
    out["after"] = [r.is_error, text(r)]
    out["recall"] = [h["id"] for h in (await s.call("memory_recall", query="dunlin logs"))["results"]]
    out["first"] = first["id"]
    st = await s.call("memory_status")
    out["count"], out["unindexed"] = st["counts"]["total"], st["unindexed"]
git = ["git", "-C", str(STORE)]
out["fsck"] = subprocess.run([*git, "fsck", "--no-progress"], capture_output=True, text=True).returncode
out["status"] = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True).stdout
out["md"] = [p.stat().st_size for p in (STORE / "memories").rglob("*.md")]
out["stray"] += [p.name for p in (STORE / "memories").rglob(".*.tmp")]
"""


@needs_unshare
async def test_full_disk_gives_a_clear_error_no_partial_file_and_recovers(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    store = disk / "store"
    mount = f"mount -t tmpfs -o size=4m tmpfs {disk} && exec \"$@\""
    out = run_driver(FULL_DISK, store, lambda cmd: ["unshare", "-rm", "sh", "-c", mount, "sh", *cmd], tmp_path)
    refused = [text for is_error, text in out["full"] if is_error]
    assert out["full"][0][0], "a write onto a full disk succeeded"
    for text in refused:
        assert "[store_unwritable]" in text and ("No space left" in text or "disk is full" in text), text
    assert out["after"][0] is False, out["after"]
    assert out["recall"] == [out["first"]]
    # Every memory file is whole and indexed (a write whose commit failed is committed later), and
    # no temp file is left behind.
    assert out["unindexed"] == [] and out["count"] == len(out["md"]) >= 2
    assert all(size > 0 for size in out["md"]) and out["stray"] == []
    assert out["fsck"] == 0 and out["status"].strip() == ""
