"""`memory-mcp install|uninstall CLIENT`: register the server with Claude Code, Codex, Gemini CLI or
Cursor, and take the registration away again.

Every client keeps the server in a config file of its own; each writer here changes only the
`memory` entry and keeps every other entry, so running it twice changes nothing the second time.
Claude Code goes through `claude mcp add` when the CLI is on PATH (Claude Code owns its config),
the others are written directly (their formats are documented and stable; their CLIs' `mcp add`
differ between versions). The stores: `--store` when given, else none is written: the server
finds the project's stores from the folder the agent starts it in, as the plugin does (Cursor,
which gives its servers no documented working folder, passes its `${workspaceFolder}`). A
project-scope file carries no path of this machine (portable.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memory_mcp.adapters.install import claude_code, jsonc
from memory_mcp.adapters.install.portable import Naming
from memory_mcp.truth import roots
from memory_mcp.truth.errors import InvalidArgument

CLIENTS = ("claude-code", "codex", "gemini", "cursor")
SCOPES = {"claude-code": ("local", "project", "user"), "codex": ("user", "project"),
          "gemini": ("user", "project"), "cursor": ("user", "project")}
DEFAULT_SCOPE = {"claude-code": "local", "codex": "user", "gemini": "user", "cursor": "user"}
NAME = claude_code.SERVER_NAME


@dataclass(frozen=True)
class Where:
    """Where one registration goes: the folders it depends on and the stores it serves."""

    client: str
    scope: str
    project: Path  # the project root (git root of the current folder, else the folder)
    cwd: Path
    home: Path
    store: Path | None  # None: the server finds the stores from its working folder
    user_store: Path | None

    def naming(self) -> Naming:
        """A project-scope file is committed: it names no path of this machine."""
        return Naming(self.client, self.scope == "project", self.project, self.home)


def run(args: argparse.Namespace) -> int:
    """Dispatch `install` / `uninstall` (the CLI catches StoreError and exits 2)."""
    where = _where(args)
    print(install(where, getattr(args, "hook", False)) if args.command == "install" else uninstall(where))
    return 0


def _where(args: argparse.Namespace) -> Where:
    scope = args.scope or DEFAULT_SCOPE[args.client]
    if scope not in SCOPES[args.client]:
        raise InvalidArgument(f"{args.client} has no {scope} scope; use one of {', '.join(SCOPES[args.client])}.")
    cwd, home = Path.cwd(), Path.home()
    project = roots.project_root(cwd)
    user_store = roots.configured_user_root(getattr(args, "user_store", None))
    # No store named: none is written, and the server serves the stores of the project it is started
    # in (the project's and the user's), as the plugin does. $MEMORY_MCP_ROOT names one as --store does.
    named = args.store if args.store is not None else roots.named_root()
    store = named.expanduser().resolve() if named is not None else None
    return Where(args.client, scope, project, cwd, home, store, user_store)


# ------------------------------------------------------------------ install
def install(where: Where, hook: bool = False) -> str:
    """Register the server for `where`, creating its store when missing; what was done, one line each."""
    if where.store is not None:
        roots.ScopeConfig(where.store, where.user_store).check()
    if where.client == "claude-code":  # before anything is written
        claude_code.check_no_plugin(where.project if where.scope == "project" else where.cwd, where.home)
    done = ensure_store(where.store) if where.store is not None else []
    # The registration names the user store too; a server must not then refuse it as a typo.
    done += ensure_store(where.user_store) if where.user_store is not None else []
    done += ignore_in_repo(where.store, where.project) if where.store is not None else []
    if where.client == "claude-code":
        job = claude_code.Install(where.scope, where.store, where.project if where.scope == "project" else where.cwd,
                                  where.home, hook=hook, user_store=where.user_store)
        done.append(claude_code.register(job))
    else:
        path, naming = config_path(where), where.naming()
        changed = WRITERS[where.client](path, claude_code.server_entry(where.store, where.user_store, naming))
        done.append({"added": f"added the '{NAME}' server to {path}", "same": f"'{NAME}' is already registered in "
                     f"{path} with this store; nothing changed", "replaced": f"replaced the earlier memory-mcp "
                     f"'{NAME}' entry in {path}"}[changed])
        done += [f"note: {n}" for n in dict.fromkeys(naming.notes)]
    if where.store is None:
        done.append(STARTS_IN[where.client])
    return "\n".join(done)


# Where each agent starts the server, which is how a registration without a store finds the project.
STARTS_IN = {
    "claude-code": "stores: those of the project Claude Code runs in (its store and yours), found by the server as "
                   "the plugin finds them; `memory-mcp where` in a folder shows which",
    "codex": "stores: those of the project Codex runs in (the Codex CLI starts the server in its own folder; an app "
             "that starts it elsewhere needs `cwd` set to the project in the entry); `memory-mcp where` shows which",
    "gemini": "stores: those of the project Gemini CLI runs in (it starts the server in its own folder); "
              "`memory-mcp where` shows which",
    "cursor": "stores: those of the workspace Cursor has open (passed as ${workspaceFolder}; a Cursor that does not "
              "expand it serves the folder it starts the server in); `memory-mcp where` shows which",
}


def ensure_store(root: Path) -> list[str]:
    """Create the store at `root` when it is missing (install may name a new path)."""
    from memory_mcp.app.store import Store
    from memory_mcp.truth.layout import is_store

    if is_store(root):
        return []
    Store.open(root).close()
    return [f"created the memory store {root}"]


def ignore_in_repo(store: Path, project: Path) -> list[str]:
    """A store inside the project's repository is a git repository of its own: the project's
    .gitignore gets a line for it, so the code repository does not see it as an untracked folder."""
    root = roots.git_root(project)
    if root is None or not store.is_relative_to(root) or store == root:
        return []
    line = "/" + store.relative_to(root).as_posix() + "/"
    ignore = root / ".gitignore"
    text = ignore.read_text(encoding="utf-8") if ignore.exists() else ""
    if line in text.splitlines() or line.rstrip("/") in text.splitlines():
        return []
    ignore.write_text(text + ("" if not text or text.endswith("\n") else "\n") + line + "\n", encoding="utf-8")
    return [f"added {line} to {ignore}: the store is its own git repository (share it through its own remote "
            "and `memory-mcp sync`)"]


def config_path(where: Where) -> Path:
    """The config file of Codex, Gemini CLI or Cursor for the scope."""
    base = where.home if where.scope == "user" else where.project
    return base / {"codex": ".codex/config.toml", "gemini": ".gemini/settings.json",
                   "cursor": ".cursor/mcp.json"}[where.client]


def _ours(entry: object) -> bool:
    return isinstance(entry, dict) and Path(str(entry.get("command", ""))).name == "memory-mcp"


def write_json_servers(path: Path, entry: dict[str, object]) -> str:
    """Set mcpServers.memory in a JSON config (Gemini CLI settings.json, Cursor mcp.json), keeping the
    rest byte for byte: read as Gemini CLI reads it, `//` and `/* */` comments allowed and kept.
    Returns added, same or replaced; a `memory` server of another program is refused."""
    text, config = jsonc.load(path)
    servers = config.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidArgument(f"{path}: mcpServers is not an object; fix it first.")
    # Gemini and Cursor know no "type" key for stdio servers: they tell stdio by the command.
    entry = {k: v for k, v in entry.items() if k != "type"}
    current = servers.get(NAME)
    if current is not None and not _ours(current):
        raise InvalidArgument(f"{path} already has a server named '{NAME}' that runs "
                              f"{current.get('command') if isinstance(current, dict) else current!r}; "
                              "rename or remove it first.")
    if current == entry:
        return "same"
    path.parent.mkdir(parents=True, exist_ok=True)
    new = jsonc.set_member(text, ["mcpServers", NAME], entry) if text.strip() else json.dumps(
        {"mcpServers": {NAME: entry}}, indent=2) + "\n"
    path.write_text(new, encoding="utf-8")
    return "replaced" if current is not None else "added"


_TABLE = re.compile(r"^\s*\[\s*mcp_servers\s*\.\s*(?:memory|\"memory\")\s*(?:\.[^\]]*)?\]\s*(?:#.*)?$")
_ANY_TABLE = re.compile(r"^\s*\[")


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def _without_memory_tables(text: str) -> str:
    """The TOML text with the [mcp_servers.memory] table and its sub-tables taken out, every other
    line (comments and formatting included) kept as the person wrote it."""
    out, skipping = [], False
    for line in text.splitlines(keepends=True):
        if _ANY_TABLE.match(line):
            skipping = bool(_TABLE.match(line))
        if not skipping:
            out.append(line)
    return "".join(out)


def write_codex(path: Path, entry: dict[str, object]) -> str:
    """Set [mcp_servers.memory] in Codex's config.toml; the rest of the file is kept byte for byte."""
    import tomllib  # here, not at the top: every hook process imports this module, few run Codex's installer

    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        current = tomllib.loads(text).get("mcp_servers", {}).get(NAME)
    except tomllib.TOMLDecodeError as e:
        raise InvalidArgument(f"{path} is not valid TOML ({e}); fix it first.") from None
    if current is not None and not _ours(current):
        raise InvalidArgument(f"{path} already has [mcp_servers.{NAME}] running {current.get('command')!r}; "
                              "rename or remove it first.")
    env = dict(entry["env"])  # type: ignore[call-overload]
    wanted = {"command": entry["command"], "args": entry["args"], **({"env": env} if env else {})}
    if current == wanted:
        return "same"
    block = (f"[mcp_servers.{NAME}]\ncommand = {_toml_string(str(entry['command']))}\n"
             f"args = [{', '.join(_toml_string(str(a)) for a in entry['args'])}]\n"  # type: ignore[attr-defined]
             + (f"\n[mcp_servers.{NAME}.env]\n" + "".join(f"{k} = {_toml_string(str(v))}\n" for k, v in env.items())
                if env else ""))
    kept = _without_memory_tables(text).rstrip("\n")
    new = (kept + "\n\n" if kept else "") + block
    tomllib.loads(new)  # never leave a file Codex cannot read
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new, encoding="utf-8")
    return "replaced" if current is not None else "added"


WRITERS: dict[str, Callable[[Path, dict[str, object]], str]] = {
    "codex": write_codex, "gemini": write_json_servers, "cursor": write_json_servers}


# ------------------------------------------------------------------ uninstall
def uninstall(where: Where) -> str:
    """Remove the `memory` server this tool registered, and (Claude Code) its hooks. The stores
    themselves are never deleted: they hold memories."""
    store = where.store or (roots.project_store(where.project) if where.scope == "project" else None)
    ignored = unignore_in_repo(store, where.project) if store is not None and where.scope == "project" else []
    if where.client == "claude-code":
        return "\n".join([uninstall_claude_code(where), *ignored])
    return "\n".join([_uninstall_config(where), *ignored])


def _uninstall_config(where: Where) -> str:
    """Take the `memory` server out of the config file of Codex, Gemini CLI or Cursor."""
    path = config_path(where)
    if where.client == "codex":
        import tomllib

        text = path.read_text(encoding="utf-8") if path.exists() else ""
        current = tomllib.loads(text).get("mcp_servers", {}).get(NAME) if text else None
        if current is None:
            return f"no '{NAME}' server in {path}; nothing to remove"
        if not _ours(current):
            raise InvalidArgument(f"the '{NAME}' server in {path} is not memory-mcp's; left as it is.")
        kept = _without_memory_tables(text).rstrip("\n")
        if not kept.strip():
            return _remove_emptied(path, f"removed the '{NAME}' server from {path}")
        path.write_text(kept + "\n", encoding="utf-8")
        return f"removed the '{NAME}' server from {path}"
    return _remove_json_server(path)


def _remove_json_server(path: Path) -> str:
    """Take mcpServers.memory out of a JSON config (comments kept), and mcpServers with it when it
    is left empty; a file left with nothing in it was install's own and goes."""
    text, config = jsonc.load(path)
    servers = config.get("mcpServers")
    if not isinstance(servers, dict) or NAME not in servers:
        return f"no '{NAME}' server in {path}; nothing to remove"
    if not _ours(servers[NAME]):
        raise InvalidArgument(f"the '{NAME}' server in {path} is not memory-mcp's; left as it is.")
    text = jsonc.delete_member(text, ["mcpServers", NAME])
    if len(servers) == 1 and jsonc.is_empty(jsonc.member_text(text, ["mcpServers"])):
        text = jsonc.delete_member(text, ["mcpServers"])
    done = f"removed the '{NAME}' server from {path}"
    if jsonc.is_empty(text):
        return _remove_emptied(path, done)
    path.write_text(text, encoding="utf-8")
    return done


def _remove_emptied(path: Path, done: str) -> str:
    """Delete a config file uninstall left with nothing in it (install made it, or made all that was
    in it), and its folder when that is empty too (.codex/, .gemini/, .cursor/, .claude/)."""
    path.unlink()
    with contextlib.suppress(OSError):  # not empty: the client keeps other files there
        path.parent.rmdir()
    return f"{done}; nothing else was in it, so the file is gone"


def _is_our_hook(command: object) -> bool:
    words = str(command).split()
    return bool(words) and Path(words[0].strip("'\"")).name == "memory-mcp" and (
        words[1:3] == ["digest", "--hook"] or words[1:2] == ["hook"])


def remove_hooks(path: Path) -> int:
    """Take memory-mcp's hooks (digest --hook, hook EVENT) out of a settings file; the rest stays."""
    if not path.exists():
        return 0
    settings = claude_code.read_json_object(path)
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks", []) if isinstance(group, dict) else []
            kept = [h for h in inner if not (isinstance(h, dict) and _is_our_hook(h.get("command")))]
            removed += len(inner) - len(kept)
            if kept or not inner:
                kept_groups.append({**group, "hooks": kept} if isinstance(group, dict) else group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if removed:
        if not hooks:
            del settings["hooks"]
        if settings:
            path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
        else:  # only install's hooks were in it
            _remove_emptied(path, "")
    return removed


def uninstall_claude_code(where: Where) -> str:
    done = []
    project = where.project if where.scope == "project" else where.cwd
    claude = shutil.which("claude")
    if claude is not None:
        gone = subprocess.run([claude, "mcp", "remove", NAME, "--scope", where.scope], capture_output=True,
                              text=True, cwd=project, timeout=120)
        done.append(gone.stdout.strip() or f"removed '{NAME}' ({where.scope} scope) with claude mcp remove"
                    if gone.returncode == 0 else f"no '{NAME}' server in Claude Code's {where.scope} scope")
        mcp_json = project / ".mcp.json"
        if where.scope == "project" and mcp_json.exists() and jsonc.load(mcp_json)[1] == {"mcpServers": {}}:
            done.append(_remove_emptied(mcp_json, f"{mcp_json} held no other server"))
    elif where.scope == "project":
        done.append(_remove_json_server(project / ".mcp.json"))
    else:
        raise InvalidArgument(f"the claude CLI is not on PATH, and {where.scope} scope lives in Claude Code's own "
                              f"config; run `{shlex.join(['claude', 'mcp', 'remove', NAME, '--scope', where.scope])}`.")
    settings = claude_code.settings_path(where.scope, project, where.home)
    removed = remove_hooks(settings)
    done.append(f"removed {removed} memory-mcp hook(s) from {settings}" if removed
                else f"no memory-mcp hooks in {settings}")
    return "\n".join(done)


def unignore_in_repo(store: Path, project: Path) -> list[str]:
    """Undo `ignore_in_repo`: its .gitignore line goes once the store it hides is gone (and the file
    with it when nothing else is in it). While the store is there the line stays: without it the
    code repository would list the store's own repository as untracked, one `git add .` from
    committing it as a broken submodule."""
    root = roots.git_root(project)
    if root is None or not store.is_relative_to(root) or store == root:
        return []
    line = "/" + store.relative_to(root).as_posix() + "/"
    ignore = root / ".gitignore"
    lines = ignore.read_text(encoding="utf-8").splitlines(keepends=True) if ignore.exists() else []
    if line + "\n" not in lines and line not in lines:
        return []
    if store.exists():
        return [f"kept {line} in {ignore}: the store is still there (uninstall never deletes memories); "
                "delete the store, then the line, when you no longer want them"]
    kept = [x for x in lines if x.rstrip("\n") != line]
    if not "".join(kept).strip():
        ignore.unlink()
        return [f"removed {ignore}: install wrote it for the store, which is gone"]
    ignore.write_text("".join(kept), encoding="utf-8")
    return [f"removed {line} from {ignore}: the store it kept out of git is gone"]
