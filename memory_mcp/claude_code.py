"""Registering the server with Claude Code, and the SessionStart hook payload."""

from __future__ import annotations

import json
import shlex
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
    config = _read_json_object(path)
    servers = config.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidArgument(f"{path}: mcpServers is not an object; fix it first.")
    servers[SERVER_NAME] = server_entry(store)
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


def _read_json_object(path: Path) -> dict[str, object]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise InvalidArgument(f"{path} is not valid JSON ({e}); fix or remove it first.") from None
    if not isinstance(data, dict):
        raise InvalidArgument(f"{path} does not hold a JSON object; fix or remove it first.")
    return data


def settings_path(scope: str, project: Path, home: Path) -> Path:
    """Where Claude Code reads hooks for `scope`."""
    return {"user": home / ".claude" / "settings.json", "project": project / ".claude" / "settings.json",
            "local": project / ".claude" / "settings.local.json"}[scope]


def write_session_hook(path: Path, store: Path) -> bool:
    """Add a SessionStart hook printing the digest to the settings file at `path` (kept otherwise).

    Returns False when an identical hook is already there."""
    command = f"{shlex.quote(server_command())} digest --hook --store {shlex.quote(str(store))}"
    settings = _read_json_object(path)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict) or not isinstance(hooks.setdefault("SessionStart", []), list):
        raise InvalidArgument(f"{path}: hooks.SessionStart is not a list; fix it first.")
    groups = hooks["SessionStart"]
    if any(isinstance(g, dict) and any(isinstance(h, dict) and h.get("command") == command
                                       for h in g.get("hooks", [])) for g in groups):
        return False
    groups.append({"hooks": [{"type": "command", "command": command}]})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return True


def register(scope: str, store: Path, project: Path, home: Path) -> str:
    """Register the server for `scope` (project writes .mcp.json; local/user use the `claude` CLI)
    and the SessionStart digest hook in that scope's settings file."""
    hook_file = settings_path(scope, project, home)
    hook = (f"added the SessionStart digest hook to {hook_file}" if write_session_hook(hook_file, store)
            else f"the SessionStart digest hook is already in {hook_file}")
    return f"{_register_server(scope, store, project)}\n{hook}"


def _register_server(scope: str, store: Path, project: Path) -> str:
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
