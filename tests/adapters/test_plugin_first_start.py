"""The plugin's first connection while its environment installs (plugin/bin/memory-mcp-first-start):
the launcher started as Claude Code starts the plugin's server, with an install made slow on purpose
(a stand-in for `uv` that sleeps, then installs this checkout's code), spoken to over stdio as raw
JSON-RPC lines, as a client does. And plugin/tools.json, the answers it gives before the real
server runs, kept equal to the real server's.

    python tests/adapters/test_plugin_first_start.py   # rewrites plugin/tools.json from the server
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugin"
TOOLS = PLUGIN / "tools.json"
PROTOCOL = "2025-06-18"

SLOW_UV = f"""#!/bin/sh
set -eu
if [ "$1" = venv ]; then mkdir -p "$5/bin"; exit 0; fi
sleep "${{SLOW_INSTALL_SECONDS:-0}}"
dir=$(dirname "$(dirname "$5")")
mkdir -p "$dir/site" && cp -R "$6/memory_mcp" "$dir/site/"
printf '#!/bin/sh\\nPYTHONPATH=%s exec %s -P "$@"\\n' "$dir/site" {sys.executable} >"$dir/bin/python"
printf '#!/bin/sh\\nPYTHONPATH=%s exec %s -P -m memory_mcp.cli "$@"\\n' "$dir/site" {sys.executable} >"$dir/bin/memory-mcp"
chmod +x "$dir/bin/python" "$dir/bin/memory-mcp"
"""


class Rpc:
    """A JSON-RPC client over a process's stdio, one message a line."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, env=env, bufsize=1)
        self.next_id = 0

    def notify(self, method: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict | None = None, timeout: float = 60) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                          "params": params or {}}) + "\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            message = json.loads(self.proc.stdout.readline() or "null")
            assert message is not None, "the server closed its output"
            if message.get("id") == self.next_id:
                return message
        raise AssertionError(f"no answer to {method} within {timeout} s")

    def start(self) -> dict:
        init = self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                           "clientInfo": {"name": "test", "version": "0"}})
        self.notify("notifications/initialized")
        return init

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def server_env(tmp: Path) -> dict[str, str]:
    home, project = tmp / "home", tmp / "project"
    home.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(project),
            "MEMORY_MCP_AUTO_MEMORY": "off", "GIT_CONFIG_NOSYSTEM": "1"}


def real_answers(tmp: Path) -> dict:
    """What the plugin's real server answers to initialize and tools/list, as plugin/tools.json holds it."""
    rpc = Rpc([sys.executable, "-m", "memory_mcp.plugin"], server_env(tmp))
    try:
        init = rpc.start()["result"]
        tools = rpc.request("tools/list")["result"]["tools"]
    finally:
        rpc.close()
    return {"initialize": init, "protocol_versions": [init["protocolVersion"]], "tools": tools}


def test_the_shipped_tool_list_is_the_real_servers(tmp_path: Path) -> None:
    assert json.loads(TOOLS.read_text()) == real_answers(tmp_path), (
        "plugin/tools.json is not what the server answers: run `python tests/adapters/test_plugin_first_start.py`")


def test_the_first_connection_answers_at_once_while_a_slow_install_runs(tmp_path: Path) -> None:
    """Right after `claude plugin install`, `claude mcp list` timed out at 30 s while the environment
    installed; the install here takes 12 s, and the session must be answered long before."""
    checkout = tmp_path / "checkout"
    shutil.copytree(PLUGIN, checkout, ignore=shutil.ignore_patterns("__pycache__"))
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "uv").write_text(SLOW_UV)
    (fake / "uv").chmod(0o755)
    env = {**server_env(tmp_path), "PATH": f"{fake}:/usr/bin:/bin", "CLAUDE_PLUGIN_ROOT": str(checkout),
           "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"), "SLOW_INSTALL_SECONDS": "12"}
    began = time.monotonic()
    rpc = Rpc([str(checkout / "bin" / "memory-mcp-plugin"), "serve"], env)
    try:
        init = rpc.start()["result"]
        tools = rpc.request("tools/list", timeout=5)["result"]["tools"]
        assert time.monotonic() - began < 5, "initialize and tools/list must not wait for the install"
        assert "installing its Python environment" in init["instructions"]
        assert init["protocolVersion"] == PROTOCOL
        assert {t["name"] for t in tools} == {t["name"] for t in json.loads(TOOLS.read_text())["tools"]}
        early = rpc.request("tools/call", {"name": "memory_status", "arguments": {}}, timeout=5)["result"]
        assert early["isError"] and "installing its Python environment" in early["content"][0]["text"]
        # Once the environment is there, the same connection reaches the real server.
        for _ in range(600):
            if (tmp_path / "data" / "current").exists():
                break
            time.sleep(0.05)
        assert (tmp_path / "data" / "current").exists(), (tmp_path / "data" / "install.log").read_text()
        remembered = rpc.request("tools/call", {"name": "memory_remember", "arguments": {
            "content": "The first session after the plugin install works."}})["result"]
        assert not remembered.get("isError"), remembered
        recalled = rpc.request("tools/call", {"name": "memory_recall", "arguments": {"query": "plugin install"}})
        assert "first session after the plugin install" in json.dumps(recalled)
    finally:
        rpc.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)  # the server must import the installed package, not a checkout in the folder
        TOOLS.write_text(json.dumps(real_answers(Path(work)), indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {TOOLS}")
