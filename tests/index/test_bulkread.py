"""Large reconciles prepare files in worker processes (memory_mcp/index/bulkread.py): the index they build
is the one a single process builds, bad files included, and the workers neither re-run the
caller's script nor depend on staying alive."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import fm_file, new_id

from memory_mcp.app.store import Store
from memory_mcp.index import bulkread

# Read whole: what recall, filters and the conflict counts are answered from.
_TABLES = {
    "memories": "SELECT id, path, title, excerpt, type, state, entities, body_sha, content_key FROM memories",
    "files": "SELECT path, size, sha, error FROM files",
    "secrets": "SELECT path, kind FROM secret_flags",
    "stems": "SELECT m.path, s.title, s.body FROM fts_stem s JOIN memories m ON m.rowid = s.rowid",
    "words": "SELECT m.path, w.body, w.entities FROM fts_word w JOIN memories m ON m.rowid = w.rowid",
}


def _mixed_store(root: Path) -> Store:
    """Memories written through the core and by hand, with the files a reconcile must refuse."""
    store = Store.open(root)
    for i in range(12):
        store.remember(f"The ingest worker {i} retries webhooks {i + 2} times.", entities=["ingest-service"])
    for i in range(20):
        fm_file(root, f"team/hand-{i}.md", f"# Hand note {i}\n\nпро логи и очереди {i}, 배포 {i}\n",
                type="knowledge", entities=["billing"])
    fm_file(root, "broken.md", "# Broken\n", type="[unclosed")
    (root / "memories" / "binary.md").write_bytes(b"\x00\x01\xff" * 40)
    fm_file(root, "key.md", "# Key\n\nthe deploy token is ghp_" + "a1B2c3D4e5" * 4 + "\n")
    dup = new_id()
    fm_file(root, "one.md", "# One\n\nfirst of two\n", id=dup)
    fm_file(root, "two.md", "# Two\n\nsecond of two\n", id=dup)
    return store


def _dump(root: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(root / ".derived" / "index.sqlite3") as db:
        return {name: sorted(db.execute(sql).fetchall(), key=repr) for name, sql in _TABLES.items()}


def test_workers_build_the_index_one_process_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _mixed_store(tmp_path / "s")
    monkeypatch.setenv("MEMORY_MCP_WORKERS", "0")
    store.reindex()
    alone = _dump(store.root)
    monkeypatch.setattr(bulkread, "PARALLEL_MIN", 1)
    monkeypatch.setattr(bulkread, "CHUNK", 3)  # many chunks, so their order across workers matters
    monkeypatch.setenv("MEMORY_MCP_WORKERS", "2")
    here: list[str] = []  # files this process prepared itself: none, if the workers did their job
    prepare = bulkread.prepare
    monkeypatch.setattr(bulkread, "prepare", lambda w: here.append(w.rel) or prepare(w))
    result = store.reindex()
    assert here == []
    assert _dump(store.root) == alone
    assert result.indexed == len(alone["memories"]) == 12 + 20 + 2  # the key (masked) and one of the pair
    errors = {p: e for p, _, _, e in alone["files"] if e}
    assert set(errors) == {"memories/broken.md", "memories/binary.md", "memories/two.md"} or \
        set(errors) == {"memories/broken.md", "memories/binary.md", "memories/one.md"}
    assert [k for p, k in alone["secrets"] if p == "memories/key.md"]
    store.close()


def test_a_worker_that_dies_leaves_its_files_to_the_caller(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "s"
    store = _mixed_store(root)
    store.close()
    wanted = [bulkread.Wanted(p.relative_to(root).as_posix(), str(p), 0, p.stat().st_size, 0, 0)
              for p in sorted((root / "memories").rglob("*.md"))]
    worker = bulkread._Worker([wanted[:5], wanted[5:10]])
    assert worker.proc is not None
    worker.proc.kill()
    worker.proc.wait()
    got = worker.next_chunk(wanted[:5]) + worker.next_chunk(wanted[5:10])
    assert got == [bulkread.prepare(w) for w in wanted[:10]]
    assert "preparing its files in this process" in caplog.text


def test_workers_do_not_rerun_a_script_without_a_main_guard(tmp_path: Path) -> None:
    """multiprocessing's spawn would import the caller's main script in every worker: a script
    that calls the core at top level, as people write them, would run its work again there."""
    root = tmp_path / "s"
    _mixed_store(root).close()
    runs = tmp_path / "runs.txt"
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(f"""
        from pathlib import Path
        from memory_mcp.index import bulkread
        from memory_mcp.app.store import Store
        with open({str(runs)!r}, "a") as fh:
            fh.write("ran\\n")
        bulkread.PARALLEL_MIN = 1
        store = Store.open(Path({str(root)!r}))
        print(store.reindex().indexed)
        store.close()
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                         env={"MEMORY_MCP_WORKERS": "2", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "34"
    assert runs.read_text() == "ran\n"
