"""Claude Code registration, the SessionStart digest hook, HTTP serving (git sync: test_sync.py)."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client

from memory_mcp.store import Store

EXE = str(Path(sys.executable).parent / "memory-mcp")
pytestmark = pytest.mark.anyio


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([EXE, *args], capture_output=True, text=True, cwd=cwd, timeout=60)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def test_install_project_scope_merges_into_mcp_json(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    done = run("install", "claude-code", "--scope", "project", "--store", str(tmp_path / "store"), cwd=project)
    assert done.returncode == 0, done.stderr
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["other"] == {"command": "x"}
    assert servers["memory"]["args"] == ["serve"]
    assert servers["memory"]["env"]["MEMORY_MCP_ROOT"] == str((tmp_path / "store").resolve())
    assert Path(servers["memory"]["command"]).name == "memory-mcp"


def test_install_refuses_a_broken_mcp_json_and_leaves_it(tmp_path: Path) -> None:
    (tmp_path / ".mcp.json").write_text("{not json")
    done = run("install", "claude-code", "--scope", "project", "--store", str(tmp_path / "store"), cwd=tmp_path)
    assert done.returncode == 2 and "not valid JSON" in done.stderr
    assert (tmp_path / ".mcp.json").read_text() == "{not json"


def test_digest_hook_is_session_start_json(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store")
    store.remember("Answer in British English spelling.", type="preference", trust="user-stated")
    done = run("digest", "--hook", "--store", str(store.root))
    payload = json.loads(done.stdout)["hookSpecificOutput"]
    assert payload["hookEventName"] == "SessionStart" and "British" in payload["additionalContext"]


async def test_streamable_http_serves_the_tools(tmp_path: Path) -> None:
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    env = {**os.environ, "MEMORY_MCP_ROOT": str(tmp_path / "store")}
    proc = subprocess.Popen([EXE, "serve", "--http", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.1)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            r = await client.call_tool("memory_remember", {"content": "HTTP clients share the same store."})
            assert not r.is_error
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"memory_recall", "memory_remember"} <= names
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_install_adds_the_digest_hook_once_and_keeps_other_settings(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps({"model": "x", "hooks": {"Stop": []}}))
    for _ in range(2):
        done = run("install", "claude-code", "--scope", "project", "--store", str(tmp_path / "store"), cwd=project)
        assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["model"] == "x" and settings["hooks"]["Stop"] == []
    groups = settings["hooks"]["SessionStart"]
    assert len(groups) == 1
    command = groups[0]["hooks"][0]["command"]
    assert "digest --hook --store" in command
    shown = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60)
    assert json.loads(shown.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"


def test_watch_indexes_and_commits_a_hand_edit_when_it_is_saved(tmp_path: Path) -> None:
    import threading

    from memory_mcp.watch import watch

    store = Store.open(tmp_path / "store")
    mem = store.remember("The petrel queue drains nightly.")
    reports = []
    stop = threading.Event()
    seen = threading.Event()

    def on_report(report) -> None:
        reports.append(report)
        if report.reindexed:
            seen.set()

    worker = threading.Thread(target=watch, args=(store, on_report, stop, 50))
    worker.start()
    try:
        time.sleep(0.5)  # let the watcher start
        path = store.root / mem.path
        path.write_text(path.read_text() + "\nIt drains hourly on Fridays.\n")
        assert seen.wait(20), reports
    finally:
        stop.set()
        worker.join(20)
    assert any(r.reindexed == [mem.path] for r in reports)
    assert git(store.root, "log", "-1", "--format=%s").startswith("reconcile:")
