"""Hostile import sources: each case once crashed `memory-mcp import` with a traceback, aborted the
whole run for one bad record, or hung. The rule: a source with no readable record is one error;
otherwise each bad record is listed as refused and the rest import."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import EXE, commit_count, git

from memory_mcp.app.store import Store

ID_A, ID_B = "01JD2K3A9FZQ4W8XVBH5T6N7RM", "01JD2K3A9FZQ4W8XVBH5T6N7RN"
DEEP = "[" * 100_000 + "]" * 100_000


def run_import(store: Path, kind: str, source: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), "import", kind, str(source), "--store", str(store)], capture_output=True,
                          text=True, timeout=timeout)


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr and "Error:" not in done.stderr.replace("[invalid_argument]", ""), done.stderr


def export_doc(*records: dict, version: str = "1") -> str:
    body = ",".join(json.dumps(r) for r in records)
    return (f'{{"format": "memory-mcp/export", "version": {version}, "exported_at": "2024-05-01T00:00:00Z", '
            f'"memories": [{body}]}}')


def record(mid: str, text: str, **frontmatter: object) -> dict:
    return {"id": mid, "path": f"memories/{mid.lower()}.md",
            "frontmatter": {"id": mid, "type": "fact", "created": "2024-04-01T00:00:00Z",
                            "updated": "2024-04-01T00:00:00Z", **frontmatter},
            "body": f"# {text}\n\n{text}\n"}


def test_json_nested_100k_deep_is_one_error_not_a_recursion_error(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store").root
    commits = commit_count(store)
    (tmp_path / "deep.json").write_text(DEEP)
    for kind in ("export", "mcp-memory"):
        done = run_import(store, kind, tmp_path / "deep.json")
        no_traceback(done)
        assert done.returncode == 2 and "[invalid_argument]" in done.stderr and "nested" in done.stderr, done.stderr
        assert "RecursionError" not in done.stderr
    assert commit_count(store) == commits and git(store, "status", "--porcelain") == ""


def test_400_digit_feedback_in_an_export_refuses_that_record_and_imports_the_rest(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store").root
    good = record(ID_B, "The heron queue drains every night.")
    bad = record(ID_A, "The ibis cache is warmed at boot.", feedback="FEEDBACK")
    (tmp_path / "export.json").write_text(export_doc(bad, good).replace('"FEEDBACK"', "9" * 400))
    done = run_import(store, "export", tmp_path / "export.json")
    no_traceback(done)
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout.startswith("imported 1, skipped 0 (already there), refused 1"), done.stdout
    assert f"refused record 1 ({ID_A}): a 400-digit number" in done.stdout
    assert "9" * 41 not in done.stdout  # the value is described, not echoed
    assert "heron queue" in subprocess.run([str(EXE), "recall", "heron", "--store", str(store)],
                                           capture_output=True, text=True, timeout=60).stdout


def test_5000_digit_export_version_is_a_clear_error(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store").root
    (tmp_path / "export.json").write_text(export_doc(record(ID_A, "The jay job runs hourly."), version="9" * 5000))
    done = run_import(store, "export", tmp_path / "export.json")
    no_traceback(done)
    assert done.returncode == 2 and "is export version a 5,000-digit number" in done.stderr, done.stderr
    assert len(done.stderr) < 500


def test_one_bad_line_of_an_mcp_memory_graph_is_listed_and_the_rest_import(tmp_path: Path) -> None:
    lines = [
        {"type": "entity", "name": "kestrel", "entityType": "service", "observations": ["Runs the nightly build"]},
        "{not json",
        '{"type": "entity", "name": "lapwing", "observations": ' + "[" * 5000 + "]" * 5000 + "}",
        '{"type": "entity", "name": "merlin", "observations": [' + "7" * 5000 + "]}",
        '{"type": "entity", "name": "nightjar", "observations": [NaN, Infinity]}',
        {"type": "entity", "name": "osprey", "entityType": "service", "observations": ["Serves the public API"]},
    ]
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    (tmp_path / "graph.jsonl").write_text(text)
    store = Store.open(tmp_path / "store").root
    done = run_import(store, "mcp-memory", tmp_path / "graph.jsonl")
    no_traceback(done)
    assert done.stdout.startswith("imported 2, skipped 0 (already there), refused 4"), done.stdout + done.stderr
    refused = [line for line in done.stdout.splitlines() if line.startswith("refused line")]
    assert [r.split(":")[0] for r in refused] == ["refused line 2", "refused line 3", "refused line 4",
                                                   "refused line 5"]
    assert "not JSON" in refused[0] and "nested" in refused[1] and "5,000-digit" in refused[2]
    assert "not finite" in refused[3]


def test_named_pipe_in_a_claude_code_folder_does_not_hang_the_import(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "user_role.md").write_text("---\nname: user role\ntype: user\n---\nThe user maintains the puffin "
                                         "service.\n")
    (folder / "MEMORY.md").write_text("- [User role](user_role.md)\n")
    os.mkfifo(folder / "pipe.md")
    (folder / "dir.md").mkdir()
    store = Store.open(tmp_path / "store").root
    done = run_import(store, "claude-code", folder, timeout=60)  # it used to wait for a writer forever
    no_traceback(done)
    assert done.stdout.startswith("imported 1, skipped 0 (already there), refused 1"), done.stdout + done.stderr
    assert "refused pipe.md: not a regular file (a named pipe)" in done.stdout


def test_huge_number_in_a_claude_code_topic_refuses_that_file_only(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("")
    (folder / "a_good.md").write_text("---\nname: good\ntype: project\n---\nThe razorbill repo uses trunk.\n")
    (folder / "b_bad.md").write_text(f"---\nname: bad\ntype: project\nmodified: {'4' * 5000}\n---\nText.\n")
    (folder / "c_deep.md").write_text(f"---\nname: deep\nx: {'[' * 3000}{']' * 3000}\n---\nText.\n")
    report = Store.open(tmp_path / "store").import_memories("claude-code", folder)
    assert len(report.imported) == 1
    assert sorted(r.origin for r in report.refused) == ["b_bad.md", "c_deep.md"], report.refused


def test_a_source_with_no_readable_record_is_one_error(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store").root
    commits = commit_count(store)
    bad = {"id": ID_A, "frontmatter": "not a mapping", "body": 3}
    (tmp_path / "export.json").write_text(export_doc(bad, bad))
    (tmp_path / "graph.jsonl").write_text("{oops\n[1, 2]\n")
    pipes = tmp_path / "pipes"
    pipes.mkdir()
    (pipes / "MEMORY.md").write_text("# Memory index\n")
    os.mkfifo(pipes / "one.md")
    for kind, source in (("export", "export.json"), ("mcp-memory", "graph.jsonl"), ("claude-code", "pipes")):
        done = run_import(store, kind, tmp_path / source)
        no_traceback(done)
        assert done.returncode == 2 and "could be read" in done.stderr and "Nothing was imported" in done.stderr, \
            (kind, done.stderr)
    assert "(and 1 more entry like it)" in run_import(store, "export", tmp_path / "export.json").stderr
    assert commit_count(store) == commits
