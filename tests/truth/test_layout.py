"""Month folders: where new memories go, overflow folders, flat stores left alone, and
`memory-mcp reorganize` (a dry run, then one commit of renames git follows). Real git, real stores."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from conftest import EXE, commit_count, fm_file, git, make_store, open_store

from memory_mcp.app.transfer import EXPORT_FORMAT, EXPORT_VERSION
from memory_mcp.truth import layout


def this_month() -> str:
    return time.strftime("%Y/%m", time.gmtime())


def test_a_new_memory_goes_into_the_folder_of_its_creation_month(tmp_path: Path) -> None:
    store = open_store(make_store(tmp_path / "s"))
    r = store.remember("The gannet dataset is refreshed weekly.")
    assert re.fullmatch(rf"memories/{this_month()}/the-gannet-dataset-is-refreshed-weekly-{r.id[:8]}\.md", r.path)
    assert [h.id for h in store.recall("gannet").results] == [r.id]
    assert r.path in git(store.root, "ls-files").split()


def test_a_full_month_opens_an_overflow_folder_and_counts_hand_added_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout, "MONTH_FILES", 3)
    store = open_store(make_store(tmp_path / "s"))
    month = store.root / "memories" / this_month()
    month.mkdir(parents=True)
    fm_file(store.root, f"{this_month()}/by-hand.md", "# By hand\n\nA file a person put in this month's folder.\n")
    paths = [store.remember(f"Fact number {n} about the tern cluster.").path for n in range(6)]
    folders = [p.rsplit("/", 1)[0] for p in paths]
    base = f"memories/{this_month()}"
    assert folders == [base, base, f"{base}-2", f"{base}-2", f"{base}-2", f"{base}-3"]
    assert store.status().counts["total"] == 7  # every folder is read


def test_a_memory_keeps_its_folder_when_it_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(layout, "MONTH_FILES", 1)
    store = open_store(make_store(tmp_path / "s"))
    first = store.remember("The heron service retries three times.")
    store.remember("The ibis queue drains nightly.")
    assert store.update(first.id, content="The heron service retries five times.").path == first.path


def test_an_imported_memory_goes_into_its_own_creation_month(tmp_path: Path) -> None:
    store = open_store(make_store(tmp_path / "s"))
    record = {"id": "01HQ3K8Z9X5V7T2R4M6N8P0QWE", "body": "# Old\n\nThe old plover note.\n",
              "frontmatter": {"id": "01HQ3K8Z9X5V7T2R4M6N8P0QWE", "created": "2024-02-10T09:00:00Z"}}
    doc = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "memories": [record]}
    report = store.import_memories("export", text=json.dumps(doc))
    assert report.refused == []
    assert [p.parent.relative_to(store.root).as_posix() for p in (store.root / "memories").rglob("*.md")] == \
        ["memories/2024/02"]


def test_a_flat_store_keeps_working_and_its_files_stay_where_they_are(tmp_path: Path) -> None:
    root = make_store(tmp_path / "s")
    old = fm_file(root, "old-flat-note.md", "# Old\n\nThe flat puffin note.\n", created="2025-01-05T10:00:00Z")
    store = open_store(root)
    new = store.remember("The new puffin note, written after the layout changed.")
    assert old.exists() and new.path.startswith(f"memories/{this_month()}/")
    assert {h.path for h in store.recall("puffin note").results} == {"memories/old-flat-note.md", new.path}


# ------------------------------------------------------------------ memory-mcp reorganize
def run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, env=env, timeout=60)


def flat_store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An old store: memories written flat in memories/, committed, one of them edited since."""
    root = make_store(tmp_path / "s")
    ids = {"kittiwake": "01HN8W4QK3C6R2V5X7Z9B1D3FG", "skua": "01JB2M6P8R0T2V4X6Z8A0C2E4G"}
    fm_file(root, "kittiwake.md", "# Kittiwake\n\nKittiwake builds run on the arm64 runners.\n",
            id=ids["kittiwake"], created="2024-03-14T08:00:00Z")
    fm_file(root, "skua.md", "# Skua\n\nSkua replaced the kittiwake runner pool.\n", id=ids["skua"],
            created="2025-11-02T08:00:00Z", supersedes=[ids["kittiwake"]])
    fm_file(root, "no-id.md", "# No id\n\nA hand-made note with no id.\n", id=None)
    store = open_store(root)
    store.refresh()
    store.update(ids["skua"], content="# Skua\n\nSkua replaced the kittiwake runner pool in November.\n")
    store.close()
    return root, ids


def test_reorganize_without_yes_moves_nothing(tmp_path: Path) -> None:
    root, _ = flat_store(tmp_path)
    before = commit_count(root)
    r = run("--store", str(root), "reorganize", home=tmp_path / "home")
    assert r.returncode == 0, r.stderr
    assert "would move 2 memories into month folders" in r.stdout
    assert "memories/kittiwake.md -> memories/2024/03/kittiwake.md" in r.stdout
    assert "left in place: memories/no-id.md" in r.stdout
    assert (root / "memories/kittiwake.md").exists() and commit_count(root) == before


def test_reorganize_yes_is_one_commit_of_renames_that_git_log_follow_follows(tmp_path: Path) -> None:
    root, ids = flat_store(tmp_path)
    before = commit_count(root)
    r = run("--store", str(root), "reorganize", "--yes", home=tmp_path / "home")
    assert r.returncode == 0, r.stderr
    assert "moved 2 memories into month folders" in r.stdout
    assert commit_count(root) == before + 1
    changes = git(root, "show", "--format=", "--name-status", "-M", "HEAD").split("\n")
    assert sorted(filter(None, changes)) == ["R100\tmemories/kittiwake.md\tmemories/2024/03/kittiwake.md",
                                             "R100\tmemories/skua.md\tmemories/2025/11/skua.md"]
    followed = git(root, "log", "--follow", "--format=%s", "--", "memories/2025/11/skua.md").splitlines()
    assert followed[0].startswith("reorganize:") and followed[1].startswith("update: Skua")
    assert (root / "memories/no-id.md").exists()
    assert git(root, "status", "--porcelain").strip() == ""
    store = open_store(root)
    read = store.read(id=ids["kittiwake"])
    assert read.path == "memories/2024/03/kittiwake.md"
    assert store.read(id=ids["skua"]).chain.supersedes == [ids["kittiwake"]]  # links are by id
    assert [h.id for h in store.recall("skua runner pool").results][:1] == [ids["skua"]]
    assert store.reorganize().moves == []  # done once, nothing is left to move
