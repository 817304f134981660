"""The Claude Code plugin and its marketplace in this repository: the manifests agree with the
package, and the real `claude` CLI (installed by .ci/install-agent-clis) on a fresh HOME adds the
marketplace from the checkout, installs the plugin, lists it, and connects to its MCP server (the
first start installs the plugin's Python environment under $CLAUDE_PLUGIN_DATA).
Without the CLI the test skips and says so. (No `slow` marker exists on this branch yet.)"""

from __future__ import annotations

import json
import os
import subprocess
import time
import tomllib
from pathlib import Path

import pytest
from conftest import ROOT

import memory_mcp

PLUGIN = ROOT / "plugin"
CLAUDE = ROOT / ".ci" / "node-tools" / "node_modules" / ".bin" / "claude"


def test_manifests_agree_with_the_package() -> None:
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text())
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert [p["name"] for p in market["plugins"]] == ["memory-mcp"] == [manifest["name"]]
    assert (ROOT / market["plugins"][0]["source"]).resolve() == PLUGIN
    assert manifest["version"] == version  # an explicit version pins updates: bump both together
    # --version, the log and the server's initialize answer all say memory_mcp.__version__.
    assert memory_mcp.__version__ == version
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "Stop", "PreToolUse"}
    for groups in hooks.values():
        for h in groups[0]["hooks"]:
            assert h["command"].startswith('"${CLAUDE_PLUGIN_ROOT}/bin/memory-mcp-plugin" hook ')
    assert os.access(PLUGIN / "bin" / "memory-mcp-plugin", os.X_OK)
    # The plugin folder carries the package (symlinks, copied as files when Claude Code caches it).
    assert (PLUGIN / "memory_mcp" / "adapters" / "hooks" / "events.py").is_file() and (PLUGIN / "pyproject.toml").is_file()


def test_real_claude_installs_the_plugin_from_the_checkout_and_connects(tmp_path: Path) -> None:
    if not CLAUDE.exists():
        pytest.skip("the claude CLI is not installed (.ci/install-agent-clis puts it in .ci/node-tools)")
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {**os.environ, "HOME": str(home), "MCP_TIMEOUT": "90000"}
    env.pop("CLAUDE_PLUGIN_DATA", None)

    def claude(*args: str) -> str:
        done = subprocess.run([str(CLAUDE), *args], capture_output=True, text=True, cwd=project, env=env,
                              timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    claude("plugin", "marketplace", "add", str(ROOT))
    claude("plugin", "install", "memory-mcp@memory-mcp")
    listed = claude("plugin", "list")
    assert "memory-mcp@memory-mcp" in listed and "enabled" in listed
    servers = claude("mcp", "list")
    data = next((home / ".claude" / "plugins" / "data").iterdir())
    # The first connection is answered by the first-start step while the environment installs; the
    # hooks below need the environment itself, which the launcher names in $DATA/current once ready.
    def ready() -> bool:
        current = data / "current"
        return current.is_file() and (Path(current.read_text().strip()) / ".ready").is_file()

    for _ in range(240):
        if ready() or list(data.glob("venv-*/.ready")):
            break
        time.sleep(1)
    servers = claude("mcp", "list")
    assert "plugin:memory-mcp:memory" in servers and "Connected" in servers, servers
    # The hooks, through the same launcher and environment Claude Code uses.
    hook_env = {**env, "CLAUDE_PLUGIN_ROOT": str(PLUGIN), "CLAUDE_PLUGIN_DATA": str(data)}
    payload = {"session_id": "s", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(project),
               "hook_event_name": "SessionStart", "source": "startup"}
    out = subprocess.run([str(PLUGIN / "bin" / "memory-mcp-plugin"), "hook", "SessionStart"], input=json.dumps(payload),
                         capture_output=True, text=True, env=hook_env, timeout=60)
    assert out.returncode == 0
    assert json.loads(out.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
