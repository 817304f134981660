"""Several processes writing one store at once, as several agent sessions do."""

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from conftest import ToolFailed, git, make_store, open_server
from reliability_support import index_tables, rebuilt_tables

from memory_mcp.app.store import Store

pytestmark = pytest.mark.slow  # several processes writing one store at once

WRITER = """
import sys
from pathlib import Path
from memory_mcp.app.store import Store
s = Store.open(Path(sys.argv[1]))
for i in range(int(sys.argv[3])):
    r = s.remember(f"Process {sys.argv[2]} wrote fact {i}: the kestrel{sys.argv[2]}x{i} switch is off.")
    print(r.id)
"""


def test_concurrent_processes_each_write_one_file_and_one_commit(tmp_path: Path) -> None:
    root = tmp_path / "store"
    Store.open(root).close()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(w), "8"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(3)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-500:] for _, err in outs]
    ids = [line for out, _ in outs for line in out.split()]
    assert len(ids) == 24 and len(set(ids)) == 24
    assert len(list((root / "memories").rglob("*.md"))) == 24
    log = subprocess.run(["git", "-C", str(root), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert sum(line.startswith("remember:") for line in log.splitlines()) == 24
    fsck = subprocess.run(["git", "-C", str(root), "fsck", "--no-progress"], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout.strip() == ""
    store = Store.open(root)
    assert {h.id for h in store.recall("kestrel switch", limit=50).results} == set(ids)


# ------------------------------------------------------------------ four servers and a person
EDITOR = """
import sys, time
from pathlib import Path
from memory_mcp.truth.ulids import new_ulid
store, rounds = Path(sys.argv[1]), int(sys.argv[2])
hand = store / "memories" / "hand"
hand.mkdir(exist_ok=True)
mine = []
for i in range(rounds):
    # A new file, as an editor saves it (in place, not atomically).
    path = hand / f"hand-note-{i}.md"
    path.write_text(f"---\\nid: {new_ulid()}\\ntype: fact\\n---\\n# Hand note {i}\\n\\nThe redshank{i} tally is kept by hand.\\n")
    mine.append(path)
    # An edit of one of the person's own files, and of one the servers wrote earlier.
    if i % 3 == 2:
        old = mine[i // 2]
        old.write_text(old.read_text() + f"Edited by hand in round {i}.\\n")
        written = sorted(p for p in (store / "memories").rglob("*.md"))
        if written:
            target = written[i % len(written)]
            target.write_text(target.read_text() + f"\\nA person added this line in round {i}.\\n")
    time.sleep(0.03)
print(len(mine))
"""
SERVERS, EACH, IN_FLIGHT, HAND_ROUNDS = 4, 50, 5, 40


@pytest.mark.anyio
async def test_four_servers_and_a_person_editing_by_hand(tmp_path: Path) -> None:
    """4 `memory-mcp serve` processes each remember 50 memories (5 in flight at a time) while another
    process adds and edits files by hand. Every memory ends up as exactly one file, every write is
    in git log, git fsck is clean, nothing is left uncommitted, the live index equals a fresh
    rebuild, and no call failed."""
    store = make_store(tmp_path / "store")
    acknowledged: dict[str, str] = {}
    failures: list[str] = []

    async def server(w: int) -> None:
        async with open_server(store) as s:
            limiter = anyio.Semaphore(IN_FLIGHT)

            async def remember(i: int) -> None:
                async with limiter:
                    try:
                        r = await s.call("memory_remember", content=f"Server {w} memory {i}: the "
                                         f"turnstone{w}x{i} feeder is refilled on day {i}.",
                                         entities=[f"feeder{i % 4}"], trust="user-stated")
                    except ToolFailed as e:
                        failures.append(e.text)
                        return
                    assert not r["duplicate"]
                    acknowledged[r["id"]] = r["path"]

            async with anyio.create_task_group() as tg:
                for i in range(EACH):
                    tg.start_soon(remember, i)

    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(store), str(HAND_ROUNDS)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    async with anyio.create_task_group() as tg:
        for w in range(SERVERS):
            tg.start_soon(server, w)
    out, err = editor.communicate(timeout=120)
    assert editor.returncode == 0, err[-2000:]

    async with open_server(store) as s:  # one more call sees the person's last edits
        st = await s.call("memory_status")
    assert failures == []
    assert len(acknowledged) == SERVERS * EACH
    assert st["unindexed"] == [] and st["counts"]["total"] == SERVERS * EACH + HAND_ROUNDS
    files = list((store / "memories").rglob("*.md"))
    ids = [p.read_text().split("\n", 2)[1].removeprefix("id: ") for p in files]
    assert len(ids) == len(set(ids)) == SERVERS * EACH + HAND_ROUNDS  # each memory exactly one file
    assert all((store / path).is_file() for path in acknowledged.values())
    log = git(store, "log", "--format=%B")
    assert sum(line.startswith("remember:") for line in log.splitlines()) == SERVERS * EACH
    assert all(f"Memory-Id: {i}" in log for i in acknowledged)
    assert git(store, "status", "--porcelain").strip() == ""  # hand edits committed too
    assert "hand-note-0.md" in git(store, "log", "--name-only", "--format=")
    fsck = subprocess.run(["git", "-C", str(store), "fsck", "--no-progress"], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    assert index_tables(store / ".derived" / "index.sqlite3") == rebuilt_tables(store, tmp_path)
