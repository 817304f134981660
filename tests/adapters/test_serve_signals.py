"""Starting and stopping `memory-mcp serve` on stdio as a client does: a call sent the moment
`initialize` is answered (the tools register in a thread meanwhile), and Ctrl-C (SIGINT) and
SIGTERM, before and after the stores are open, ending it at once with no traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import EXE, server_env


def _request(proc: subprocess.Popen[bytes], id: int, method: str, params: dict) -> dict:
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).encode() + b"\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def _started(store: Path, home: Path, first_call: bool) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([str(EXE), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=server_env(store, home))
    answer = _request(proc, 1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                              "clientInfo": {"name": "test", "version": "1"}})
    assert answer["result"]["serverInfo"]["name"] == "memory-mcp"
    assert proc.stdin
    proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    proc.stdin.flush()
    if first_call:  # the stores are open and their file watchers run in threads of their own
        assert not _request(proc, 2, "tools/call", {"name": "memory_status", "arguments": {}})["result"]["isError"]
    return proc


@pytest.mark.parametrize("first_call", [False, True], ids=["before-a-call", "after-a-call"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_and_sigterm_end_the_stdio_server_without_a_traceback(
        tmp_path: Path, sig: signal.Signals, first_call: bool) -> None:
    # The first Ctrl-C was ignored, the second printed a KeyboardInterrupt traceback and hung, the
    # third ended with "Exception ignored in: <module 'threading'>": the stdin reader thread held on.
    proc = _started(tmp_path / "store", tmp_path, first_call)
    os.kill(proc.pid, sig)
    try:
        # stdin stays open, as a client's does: only the signal can end the process.
        code = proc.wait(timeout=10)
    finally:
        proc.kill()
    assert proc.stderr
    err = proc.stderr.read().decode()
    assert code == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err and "KeyboardInterrupt" not in err
    assert f"stopped ({sig.name})" in err


def test_the_server_logs_its_version_and_store_at_start(tmp_path: Path) -> None:
    from memory_mcp import __version__

    store = tmp_path / "store"
    done = subprocess.run([str(EXE), "serve"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          env=server_env(store, tmp_path), timeout=60)
    assert done.returncode == 0 and done.stdout == ""
    assert f"version {__version__}, serving {store.resolve()} over stdio" in done.stderr
    quiet = subprocess.run([str(EXE), "--log-level", "warning", "serve"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, env=server_env(store, tmp_path), timeout=60)
    assert quiet.returncode == 0 and quiet.stderr == ""


def test_a_call_sent_right_after_initialize_waits_for_the_tools_and_succeeds(tmp_path: Path) -> None:
    # `initialize` is answered before the tools have registered (their schemas are most of the
    # start-up cost); what is asked for before they are ready must wait for them, not miss them.
    proc = _started(tmp_path / "store", tmp_path, first_call=False)
    try:
        assert proc.stdin and proc.stdout
        listed = _request(proc, 2, "tools/list", {})
        names = {t["name"] for t in listed["result"]["tools"]}
        assert {"memory_remember", "memory_recall", "memory_status", "memory_reindex"} <= names
        fresh = _started(tmp_path / "store", tmp_path, first_call=False)
        try:
            answer = _request(fresh, 2, "tools/call", {"name": "memory_status", "arguments": {}})
            assert answer["result"]["isError"] is False
        finally:
            fresh.kill()
            fresh.wait()
    finally:
        proc.kill()
        proc.wait()


def test_a_client_that_closes_stdin_at_once_gets_a_clean_exit_every_time(tmp_path: Path) -> None:
    # The tools register in a thread while `initialize` is answered; when stdin closed before that
    # thread was done, the interpreter finalised under it and aborted (exit -6, no output; seen in CI
    # under load). A race, so several starts.
    store = tmp_path / "store"
    codes = [subprocess.run([str(EXE), "--log-level", "warning", "serve"], stdin=subprocess.DEVNULL,
                            capture_output=True, env=server_env(store, tmp_path), timeout=60).returncode
             for _ in range(5)]
    assert codes == [0] * 5
