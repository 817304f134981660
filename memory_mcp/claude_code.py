"""Registering the server with Claude Code, and the SessionStart hook payload."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from .errors import InvalidArgument

SERVER_NAME = "memory"


def server_command() -> str:
    """The `memory-mcp` executable of this installation (beside the running python when it is there)."""
    beside = Path(sys.executable).parent / "memory-mcp"
    return str(beside) if beside.exists() else (shutil.which("memory-mcp") or "memory-mcp")


def server_entry(store: Path) -> dict[str, object]:
    return {"type": "stdio", "command": server_command(), "args": ["serve"],
            "env": {"MEMORY_MCP_ROOT": str(store)}}


def write_project_config(project: Path, store: Path) -> Path:
    """Add (or replace) the server in `project/.mcp.json`, keeping every other server there."""
    path = project / ".mcp.json"
    config: dict[str, object] = {}
    if path.exists():
        try:
            config = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise InvalidArgument(f"{path} is not valid JSON ({e}); fix or remove it first.") from None
        if not isinstance(config, dict):
            raise InvalidArgument(f"{path} does not hold a JSON object; fix or remove it first.")
    servers = config.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidArgument(f"{path}: mcpServers is not an object; fix it first.")
    servers[SERVER_NAME] = server_entry(store)
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


def register(scope: str, store: Path, project: Path) -> str:
    """Register the server for `scope` (project writes .mcp.json; local/user use the `claude` CLI)."""
    if scope == "project":
        return f"wrote {write_project_config(project, store)}"
    claude = shutil.which("claude")
    entry = server_entry(store)
    command = ["claude", "mcp", "add", SERVER_NAME, "--scope", scope, "-e",
               f"MEMORY_MCP_ROOT={store}", "--", str(entry["command"]), "serve"]
    if claude is None:
        return "the claude CLI is not on PATH; run:\n  " + " ".join(command)
    done = subprocess.run([claude, *command[1:]], capture_output=True, text=True, cwd=project)
    if done.returncode != 0:
        raise InvalidArgument(f"claude mcp add failed: {(done.stderr or done.stdout).strip()[:300]}")
    return done.stdout.strip() or f"registered {SERVER_NAME} ({scope} scope)"


def hook_payload(digest: str) -> str:
    """The JSON a Claude Code SessionStart hook prints to add the digest to the session's context."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": digest}})
