"""Registering the server with Claude Code, and the SessionStart hook payload."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_mcp.adapters.install.portable import Naming
from memory_mcp.truth.errors import InvalidArgument
from memory_mcp.truth.roots import ScopeConfig

SERVER_NAME = "memory"


def server_command() -> str:
    """The `memory-mcp` executable of this installation (beside the running python when it is there)."""
    beside = Path(sys.executable).parent / "memory-mcp"
    return str(beside) if beside.exists() else (shutil.which("memory-mcp") or "memory-mcp")


def _naming(naming: Naming | None) -> Naming:
    return naming or Naming("claude-code", False, Path.cwd(), Path.home())


def server_args(user_store: Path | None, naming: Naming | None = None) -> list[str]:
    """The arguments after the executable: `serve`, and the user store when one is named."""
    return ["serve", *(["--user-store", _naming(naming).path(user_store)] if user_store else [])]


def server_env(store: Path | None, naming: Naming | None = None) -> dict[str, str]:
    """The server's environment: the store when one is named; else nothing, or what names the
    project for an agent that gives its server no working folder (Cursor), so the server finds the
    project's stores itself."""
    naming = _naming(naming)
    return {"MEMORY_MCP_ROOT": naming.path(store)} if store is not None else naming.project_env()


def server_entry(store: Path | None, user_store: Path | None = None, naming: Naming | None = None) -> dict[str, object]:
    """The `.mcp.json` entry for the server (the shape `claude mcp add --scope project` writes)."""
    naming = _naming(naming)
    return {"type": "stdio", "command": naming.command(server_command()), "args": server_args(user_store, naming),
            "env": server_env(store, naming)}


def write_project_config(project: Path, store: Path | None, user_store: Path | None = None,
                         naming: Naming | None = None) -> Path:
    """Add (or update) the server in `project/.mcp.json`, keeping every other server there.

    An entry of the same name that runs another program is someone else's server: it is refused,
    not replaced."""
    path = project / ".mcp.json"
    config = read_json_object(path)
    servers = config.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidArgument(f"{path}: mcpServers is not an object; fix it first.")
    current = servers.get(SERVER_NAME)
    if isinstance(current, dict) and Path(str(current.get("command", ""))).name != "memory-mcp":
        raise InvalidArgument(f"{path} already has a server named '{SERVER_NAME}' that runs "
                              f"{current.get('command')!r}; rename or remove it first.")
    entry = server_entry(store, user_store, naming)
    if current == entry:
        return path
    servers[SERVER_NAME] = entry
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


def read_json_object(path: Path) -> dict[str, Any]:
    """A client's JSON config file as a mapping ({} when missing); a clear error when it is not one."""
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
    """Where Claude Code reads settings (and so hooks) for `scope`: ~/.claude/settings.json,
    PROJECT/.claude/settings.json (shared, committed) or PROJECT/.claude/settings.local.json (personal)."""
    return {"user": home / ".claude" / "settings.json", "project": project / ".claude" / "settings.json",
            "local": project / ".claude" / "settings.local.json"}[scope]


def hook_command(store: Path | None, user_store: Path | None = None, naming: Naming | None = None) -> str:
    """The shell command of the SessionStart hook: print the digest as hook JSON."""
    return _hook_words(["digest", "--hook"], store, user_store, naming)


def file_hook_command(store: Path | None, user_store: Path | None = None, naming: Naming | None = None) -> str:
    """The shell command of the PreToolUse hook that brings the memories about a file (`paths:`)."""
    return _hook_words(["hook", "PreToolUse"], store, user_store, naming)


def _hook_words(words: list[str], store: Path | None, user_store: Path | None, naming: Naming | None) -> str:
    """A hook's command line; without a store named, the hook finds the session's stores itself."""
    naming = _naming(naming)
    line = [shlex.quote(naming.command(server_command())), *words]
    line += ["--store", naming.shell_path(store)] if store is not None else []
    line += ["--user-store", naming.shell_path(user_store)] if user_store else []
    return " ".join(line)


FILE_TOOLS_MATCHER = "Read|Edit|MultiEdit|Write|NotebookEdit"  # as plugin/hooks/hooks.json has it


def write_hook(path: Path, command: str, event: str = "SessionStart", matcher: str | None = None) -> bool:
    """Add a hook on `event` running `command` to the settings file at `path` (kept otherwise).

    Returns False when an identical hook is already there."""
    from memory_mcp.adapters.hooks.events import EVENTS

    if event not in EVENTS:  # a typo here would be a hook Claude Code runs and `memory-mcp hook` refuses
        raise ValueError(f"{event!r} is not a hook event memory-mcp answers ({', '.join(EVENTS)})")
    settings = read_json_object(path)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict) or not isinstance(hooks.setdefault(event, []), list):
        raise InvalidArgument(f"{path}: hooks.{event} is not a list; fix it first.")
    groups = hooks[event]
    if any(isinstance(g, dict) and any(isinstance(h, dict) and h.get("command") == command
                                       for h in g.get("hooks", [])) for g in groups):
        return False
    # SessionStart has no matcher: the digest is wanted on startup, resume, /clear and after a compaction alike.
    groups.append({**({"matcher": matcher} if matcher else {}), "hooks": [{"type": "command", "command": command}]})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return True


@dataclass(frozen=True)
class Install:
    """What `memory-mcp install claude-code` was asked to do."""

    scope: str  # local | project | user, as Claude Code names them
    store: Path | None  # None: the server and the hooks find the stores from the folder they run in
    project: Path  # the folder Claude Code runs in (local and project scopes belong to it)
    home: Path
    hook: bool = False
    user_store: Path | None = None

    def naming(self) -> Naming:
        """A project-scope registration is committed: it names no path of this machine."""
        return Naming("claude-code", self.scope == "project", self.project, self.home)


PLUGIN_NAME = "memory-mcp"  # the name in plugin/.claude-plugin/plugin.json; its id is NAME@marketplace


def plugin_in_use(project: Path, home: Path) -> str | None:
    """Where Claude Code has the memory-mcp plugin on for sessions in `project` ("ID in FILE"), or
    None. Enabled state is `enabledPlugins` in the user, project and local settings (the later ones
    win); a plugin installed and named in none of them is on (~/.claude/plugins/installed_plugins.json)."""
    config = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    found: str | None = None
    named = False
    for path in (config / "settings.json", project / ".claude" / "settings.json",
                 project / ".claude" / "settings.local.json"):
        with contextlib.suppress(InvalidArgument, OSError):  # a broken settings file enables nothing
            enabled = read_json_object(path).get("enabledPlugins")
            for plugin_id, on in (enabled.items() if isinstance(enabled, dict) else ()):
                if str(plugin_id).split("@")[0] == PLUGIN_NAME:
                    named, found = True, f"{plugin_id} in {path}" if on else None
    if named:
        return found
    installed = config / "plugins" / "installed_plugins.json"
    with contextlib.suppress(InvalidArgument, OSError):
        plugins = read_json_object(installed).get("plugins")
        for plugin_id in plugins if isinstance(plugins, dict) else ():
            if str(plugin_id).split("@")[0] == PLUGIN_NAME:
                return f"{plugin_id} in {installed}"
    return None


def check_no_plugin(project: Path, home: Path) -> None:
    """Refuse to register while the memory-mcp plugin is on: it runs the server and the hooks
    already, so they would run twice."""
    plugin = plugin_in_use(project, home)
    if plugin is not None:
        plugin_id = plugin.split(" in ")[0]
        raise InvalidArgument(
            f"the memory-mcp plugin is on in Claude Code ({plugin}): it already runs the memory server and its "
            "SessionStart, UserPromptSubmit, Stop and PreToolUse hooks, so this would add a second server and run "
            f"every hook twice. Nothing was changed. Keep the plugin, or run `claude plugin disable {plugin_id}` "
            "(or uninstall it) and then this again.")


def register(job: Install) -> str:
    """Register the server for `job.scope`: through `claude mcp add` when the claude CLI is on PATH,
    else (project scope) by writing .mcp.json; and, when asked, the SessionStart digest hook in that
    scope's settings file. Returns what was done, one line each. Refused while the memory-mcp plugin
    is on (check_no_plugin)."""
    if job.store is not None:
        ScopeConfig(job.store, job.user_store).check()
    check_no_plugin(job.project, job.home)
    naming = job.naming()
    done = [_register_server(job, naming)]
    if job.hook:
        path = settings_path(job.scope, job.project, job.home)
        added = write_hook(path, hook_command(job.store, job.user_store, naming))
        done.append(f"added the SessionStart digest hook to {path}" if added
                    else f"the SessionStart digest hook is already in {path}")
        added = write_hook(path, file_hook_command(job.store, job.user_store, naming), "PreToolUse",
                           FILE_TOOLS_MATCHER)
        done.append(f"added the PreToolUse hook of file-aware memories (paths:) to {path}" if added
                    else f"the PreToolUse hook of file-aware memories is already in {path}")
    return "\n".join(done + [f"note: {n}" for n in dict.fromkeys(naming.notes)])


def add_command(job: Install, naming: Naming | None = None) -> list[str]:
    """The `claude mcp add` command line that registers the server for `job`."""
    naming = naming or job.naming()
    env = [word for key, value in server_env(job.store, naming).items() for word in ("-e", f"{key}={value}")]
    return ["claude", "mcp", "add", SERVER_NAME, "--scope", job.scope, *env,
            "--", naming.command(server_command()), *server_args(job.user_store, naming)]


def _register_server(job: Install, naming: Naming) -> str:
    claude = shutil.which("claude")
    command = add_command(job, naming)
    if claude is None:
        if job.scope == "project":
            return f"wrote {write_project_config(job.project, job.store, job.user_store, naming)}"
        raise InvalidArgument(f"the claude CLI is not on PATH, and {job.scope} scope lives in Claude Code's own "
                              f"config; install Claude Code and run `{shlex.join(command)}`, or use "
                              "--scope project to write .mcp.json here.")
    done = subprocess.run([claude, *command[1:]], capture_output=True, text=True, cwd=job.project)
    if done.returncode != 0:
        current = registered_entry(job)
        if current is not None and _same_entry(current, server_entry(job.store, job.user_store, naming)):
            return f"'{SERVER_NAME}' is already registered in Claude Code ({job.scope} scope) with this store; " \
                   "nothing changed"
        raise InvalidArgument(f"claude mcp add failed: {(done.stderr or done.stdout).strip()[:300]} (to replace "
                              f"the existing '{SERVER_NAME}' server, run `memory-mcp uninstall claude-code --scope "
                              f"{job.scope}` or `claude mcp remove {SERVER_NAME} --scope {job.scope}` first)")
    return done.stdout.strip() or f"registered {SERVER_NAME} ({job.scope} scope) with claude mcp add"


def registered_entry(job: Install) -> dict[str, object] | None:
    """The `memory` server Claude Code already has in `job.scope`: user and local scopes live in
    ~/.claude.json (top level, or under the project's path), project scope in .mcp.json."""
    if job.scope == "project":
        path, keys = job.project / ".mcp.json", ["mcpServers", SERVER_NAME]
    else:
        path = job.home / ".claude.json"
        keys = (["mcpServers", SERVER_NAME] if job.scope == "user"
                else ["projects", str(job.project), "mcpServers", SERVER_NAME])
    try:
        node: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def _same_entry(a: dict[str, object], b: dict[str, object]) -> bool:
    # An entry with no environment may be written without its "env" key.
    return all(a.get(k) == b.get(k) for k in ("command", "args")) and (a.get("env") or {}) == (b.get("env") or {})


def hook_payload(digest: str) -> str:
    """The JSON a Claude Code SessionStart hook prints to add the digest to the session's context."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": digest}})
