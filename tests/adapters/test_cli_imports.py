"""The CLI's commands keep the hooks' import discipline: a one-shot `memory-mcp recall` or
`remember` is a new process, and what it imports is most of its start (bench_cli.py). GitPython
(45 ms), every use case loaded by the facade, python-ulid with importlib.metadata and the
installers were imported by every command before; these tests keep them out so the start cannot
creep back up unseen. Each runs the real CLI in a fresh interpreter and reads its sys.modules (or,
for the git processes a recall starts, git's own trace)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import make_store, server_env

from memory_mcp.truth.layout import DERIVED, INDEX_FILE

# Imported by no command: the git library, the ULID library and the version lookup it made.
NEVER = {"git", "ulid", "importlib.metadata"}
# A recall over a settled store parses no file and writes nothing.
NOT_FOR_RECALL = {"yaml", "memory_mcp.truth.secret_rules", "memory_mcp.app.writes", "memory_mcp.recall.conflicts",
                  "memory_mcp.app.importing", "memory_mcp.app.transfer", "memory_mcp.app.asof", "memory_mcp.vcs.sync",
                  "memory_mcp.app.embedding", "memory_mcp.adapters.install", "memory_mcp.adapters.hooks",
                  "memory_mcp.adapters.cli.commands", "watchfiles", "platform",
                  # what a write, a commit or a sync's merge use (temp files, object names)
                  "tempfile", "random", "secrets",
                  # the options and results of every other use case (40 data classes): a recall's are in
                  # truth/recall.py
                  "memory_mcp.truth.results", "memory_mcp.truth.options", "memory_mcp.truth.writeoptions",
                  "memory_mcp.truth.writeresults",
                  # the file watcher, which only a long-lived process keeps, and the log, loaded when
                  # something is logged (truth/logs.py), with the server's start
                  "memory_mcp.index.watch", "logging", "memory_mcp.adapters.serve",
                  # what the history's reads return (a commit, its changes, the deletions)
                  "memory_mcp.vcs.commits"}
# A remember writes one memory: nothing of import, export, sync, the vectors or the installers; and
# none of what its file, temp file, stamp and credential check once took from the standard library or
# YAML (a value is checked for plain YAML by plainscalar.py, the host name read from uname).
NOT_FOR_REMEMBER = {"memory_mcp.app.importing", "memory_mcp.app.transfer", "memory_mcp.app.asof", "memory_mcp.vcs.sync",
                    "memory_mcp.app.embedding", "memory_mcp.adapters.install", "memory_mcp.adapters.hooks", "watchfiles",
                    "yaml", "tempfile", "random", "socket", "pickle", "base64",
                    # the reads: search and its signals, the digest (a supersede loads the reads' module)
                    "memory_mcp.app.reads", "memory_mcp.recall.search", "memory_mcp.recall.overview",
                    # the options and results of the other use cases (status, sync, team, the page: 35
                    # data classes, about 10 ms to build): a write's are in writeoptions.py, writeresults.py
                    "memory_mcp.truth.results", "memory_mcp.truth.options",
                    # the file watcher, which only a long-lived process keeps, and the log (as above)
                    "memory_mcp.index.watch", "logging", "memory_mcp.adapters.serve",
                    # what the history's reads return (a commit, its changes, the deletions)
                    "memory_mcp.vcs.commits"}

PROBE = """
import json, sys
from memory_mcp.adapters.cli.main import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _modules(store: Path, home: Path, *argv: str, env: dict[str, str] | None = None) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, "--store", str(store), *argv], capture_output=True,
                          text=True, env={**server_env(store, home), **(env or {})}, timeout=60)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, done.stderr
    return set(report["modules"])


def _loaded(modules: set[str], names: set[str]) -> list[str]:
    return sorted(m for m in modules if m in names or any(m.startswith(n + ".") for n in names))


@pytest.mark.slow
def test_recall_and_remember_import_only_what_they_run(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    _modules(store, tmp_path, "remember", "The kestrel rota is kept in the ops wiki.")
    time.sleep(2.1)  # past the racy margin, as a store is between sessions (bench_cli.py)
    _modules(store, tmp_path, "status")  # the remember's file settled; the next recall parses nothing
    recall = _modules(store, tmp_path, "recall", "kestrel", "rota")
    assert not _loaded(recall, NEVER | NOT_FOR_RECALL)
    remember = _modules(store, tmp_path, "remember", "The osprey rota is kept beside it.")
    assert not _loaded(remember, NEVER | NOT_FOR_REMEMBER)


@pytest.mark.slow
def test_a_one_shot_command_that_logs_loads_logging_and_logs_as_configured(tmp_path: Path) -> None:
    """logging is imported when something is first logged (truth/logs.py), configured then as the
    command line said: a recall over a damaged index says so on stderr in the house format, and
    `--log-level error` keeps the warning out."""
    store = make_store(tmp_path / "store")
    _modules(store, tmp_path, "status")  # the index made
    for level, shown in (("info", True), ("error", False)):
        (store / DERIVED / INDEX_FILE).write_bytes(b"not an index, " * 100)
        done = subprocess.run([sys.executable, "-m", "memory_mcp.cli", "--store", str(store), "--log-level", level,
                               "recall", "kestrel"], capture_output=True, text=True,
                              env=server_env(store, tmp_path), timeout=60)
        assert done.returncode == 0, done.stderr
        assert ("memory-mcp WARNING: index " in done.stderr and "unusable" in done.stderr) is shown, done.stderr


@pytest.mark.slow
def test_a_recall_starts_one_git_process(tmp_path: Path) -> None:
    """A recall asks git one thing, `git status` (what a crash left uncommitted), right after a
    remember too: the fallback identity's `git config` is a commit's, and the authors of the
    remember's commit are recorded by the remember (a recall after it ran `git log` and `git var`
    for them). Counted from git's own trace (GIT_TRACE), one line per git started."""
    store = make_store(tmp_path / "store")
    _modules(store, tmp_path, "status")
    _modules(store, tmp_path, "remember", "The kestrel rota is kept in the ops wiki.")
    trace = tmp_path / "git-trace.txt"
    _modules(store, tmp_path, "recall", "kestrel", "rota", env={"GIT_TRACE": str(trace)})
    started = [line.split("trace: built-in: ", 1)[1] for line in trace.read_text().splitlines()
               if "trace: built-in: " in line]
    assert [s.split()[:2] for s in started] == [["git", "status"]], started


@pytest.mark.slow
def test_a_remember_starts_six_git_processes(tmp_path: Path) -> None:
    """A remember after another (a script's loop) asks git: `status` (what a crash left uncommitted),
    `config` (the identity and options a commit depends on), `update-index` (the person's index),
    `cat-file` (HEAD's trees), one `var` (the author, who is the committer when nothing names them
    apart: a second `var` before) and `update-ref`. Counted from git's own trace, as above."""
    store = make_store(tmp_path / "store")
    _modules(store, tmp_path, "remember", "The kestrel rota is kept in the ops wiki.")
    trace = tmp_path / "git-trace.txt"
    _modules(store, tmp_path, "remember", "The osprey rota is kept beside it.", env={"GIT_TRACE": str(trace)})
    started = [line.split("trace: built-in: ", 1)[1].split()[:2] for line in trace.read_text().splitlines()
               if "trace: built-in: " in line]
    assert [s[1] for s in started] == ["status", "config", "update-index", "cat-file", "var", "update-ref"], started


# A hook is a new process on every prompt and file read: it builds a recall's classes only
# (truth/recall.py), not the other 45 result and option classes; it parses no TOML without a team
# pointer file and starts no process when nothing asks git.
NOT_FOR_A_HOOK = {"memory_mcp.truth.results", "memory_mcp.truth.options", "tomllib", "subprocess", "yaml",
                  "memory_mcp.app.store", "memory_mcp.app.writes", "memory_mcp.recall.conflicts"}


@pytest.mark.slow
def test_the_prompt_and_file_hooks_load_only_what_a_recall_needs(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    _modules(store, tmp_path, "remember", "The kestrel rota is kept in the ops wiki.", "--paths", "ops/rota.md")
    time.sleep(2.1)  # past the racy margin: the hooks read a settled store as it is between prompts
    _modules(store, tmp_path, "status")
    events = {"UserPromptSubmit": {"prompt": "where is the kestrel rota kept"},
              "PreToolUse": {"tool_name": "Read", "tool_input": {"file_path": str(tmp_path / "ops" / "rota.md")}}}
    for event, fields in events.items():
        payload = json.dumps({"hook_event_name": event, "session_id": f"s-{event}", "cwd": str(tmp_path), **fields})
        done = subprocess.run([sys.executable, "-c", PROBE, "hook", event, "--store", str(store)], input=payload,
                              capture_output=True, text=True, env=server_env(store, tmp_path), timeout=60)
        report = json.loads(done.stderr.strip().splitlines()[-1])
        assert report["code"] == 0 and "kestrel" in done.stdout, (event, done.stdout, done.stderr[-500:])
        assert not _loaded(set(report["modules"]), NEVER | NOT_FOR_A_HOOK), event
