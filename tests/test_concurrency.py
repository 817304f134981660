"""Several processes writing one store at once, as several agent sessions do."""

import subprocess
import sys
from pathlib import Path

from memory_mcp.store import Store

WRITER = """
import sys
from pathlib import Path
from memory_mcp.store import Store
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
    assert len(list((root / "memories").glob("*.md"))) == 24
    log = subprocess.run(["git", "-C", str(root), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert sum(line.startswith("remember:") for line in log.splitlines()) == 24
    fsck = subprocess.run(["git", "-C", str(root), "fsck", "--no-progress"], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout.strip() == ""
    store = Store.open(root)
    assert {h.id for h in store.recall("kestrel switch", limit=50).results} == set(ids)
