"""Where the stores are: a project's own store and the user's global store, found from a folder and
the environment without opening either (no git, no SQLite), so the hooks, the CLI and the installers
can find their stores without entering the app layer's router (app/scopes.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from memory_mcp.truth import projects, teams
from memory_mcp.truth.errors import InvalidArgument
from memory_mcp.truth.layout import ROOT_ENV, default_root

PROJECT = "project"
TEAM = "team"
USER = "user"
USER_ROOT_ENV = "MEMORY_MCP_USER_ROOT"
HOME_ENV = "MEMORY_MCP_HOME"
PROJECT_DIR_ENV = "MEMORY_MCP_PROJECT_DIR"
# Commands that may be given a store path that does not exist yet: they are how one is made.
CREATES_NAMED = frozenset({"init", "install"})
# Commands that never open a named store (the demo makes its own temporary one).
NO_NAMED_STORE = frozenset({"demo"})
# Commands that only name a store and never open it: uninstall takes a registration away, and its
# store may be gone already (its .gitignore line then goes too).
NAMES_ONLY = frozenset({"uninstall"})


Located = projects.Located


def memory_home() -> Path:
    """The folder the automatically chosen stores live in: $MEMORY_MCP_HOME, else ~/.memory-mcp."""
    env = os.environ.get(HOME_ENV)
    return (Path(env).expanduser() if env else Path.home() / ".memory-mcp").resolve()


def git_root(folder: Path) -> Path | None:
    """The work tree root of the git repository holding `folder`, without running git (hooks must
    start fast): a linked worktree's main work tree, so paths are relative to one root; the worktree
    itself when its repository is bare (it has no main work tree)."""
    repo = projects.find_repository(folder)
    return repo.root if repo else None


def project_root(folder: Path) -> Path:
    """The project a folder belongs to: its git root, else the folder itself (a folder that is not
    a repository is still a project of its own)."""
    return git_root(folder) or folder.expanduser().resolve()


def working_folder() -> Path | None:
    """The folder whose project a command or a server serves: $MEMORY_MCP_PROJECT_DIR (set from an
    agent's workspace variable, e.g. Cursor's ${workspaceFolder}), else Claude Code's
    $CLAUDE_PROJECT_DIR, else the folder the process runs in (None when that is gone). A variable
    the agent left unexpanded, or naming no folder, is passed over."""
    for name in (PROJECT_DIR_ENV, "CLAUDE_PROJECT_DIR"):
        value = os.environ.get(name)
        if value and "${" not in value and Path(value).expanduser().is_dir():
            return Path(value).expanduser()
    try:
        return Path(os.getcwd())
    except OSError:
        return None


def current_project() -> Path:
    """The project a `file` argument is relative to: the project of the working folder."""
    return project_root(working_folder() or Path.home())


def locate(folder: Path, record: bool = True) -> projects.Located:
    """The store of the project holding `folder`, and why (projects.locate under the memory home)."""
    return projects.locate(folder, memory_home() / "projects", record)


def other_stores(located: projects.Located) -> list[Path]:
    """The other stores of the project `located` is, not used (for `memory-mcp where`)."""
    return projects.related(located, memory_home() / "projects")


def project_store(folder: Path) -> Path:
    """The store of the project holding `folder`: its `.memory/` when the project has one, else the
    one under `<memory home>/projects/` its identity (the repository's common git directory) or its
    remote URL has (projects.py)."""
    return locate(folder).store


def project_key(located: projects.Located) -> str:
    """The key of a project in the person's records: its identity's path, else its folder."""
    return os.fsdecode(located.repository.key if located.repository is not None else located.project)


def team(located: projects.Located) -> teams.Team | None:
    """The team store the pointer file of the project `located` names; None without one."""
    return teams.find(located.project, project_key(located), memory_home())


def team_root(located: projects.Located) -> Path | None:
    """The clone of the project's team store when the person joined it here, else None: a URL read
    from a committed file is never used before `memory-mcp team join`."""
    found = team(located)
    return found.store if found is not None and found.joined else None


def project_scopes(folder: Path) -> ScopeConfig:
    """The stores for a session in `folder`, chosen with no flags: the project's, its team store
    (when joined here) and the user's."""
    located = locate(folder)
    return ScopeConfig(located.store, user_root(), team_root(located))


def named_root() -> Path | None:
    """The store $MEMORY_MCP_ROOT names (None: unset), which overrides the project's on every path."""
    env = os.environ.get(ROOT_ENV)
    return Path(env).expanduser() if env else None


@dataclass(frozen=True)
class Chosen:
    """The stores a command, a server or a hook works on, and why (what `memory-mcp where` prints)."""

    config: ScopeConfig
    why: str
    located: projects.Located | None = None


def chosen_scopes(store: Path | None, user_option: str | bool | None, folder: Path | None) -> Chosen:
    """The one rule every path uses: `--store`, else $MEMORY_MCP_ROOT (one store, and the user
    store only when configured), else, for a folder in a git repository or whose project already
    has a store, the stores the plugin uses there (the project's and the user's), else the default
    store."""
    user = configured_user_root(user_option)
    if store is not None:
        return Chosen(ScopeConfig(store, user), "named by --store")
    if os.environ.get(ROOT_ENV):
        return Chosen(ScopeConfig(None, user), f"named by ${ROOT_ENV}")
    if folder is not None and folder.is_dir():
        located = locate(folder)
        if located.repository is not None or located.store.exists() or located.store.is_symlink():
            return Chosen(ScopeConfig(located.store, user or user_root(), team_root(located)), located.why, located)
        return Chosen(ScopeConfig(None, user), f"{folder.resolve()} is in no git repository and its project has no "
                                               "store yet, so the default store")
    return Chosen(ScopeConfig(None, user), "no working folder, so the default store")


def check_named_store(store: Path | None, command: str, user_option: str | bool | None = False) -> None:
    """Refuse a store path a person named that does not exist (--store, else $MEMORY_MCP_ROOT; the
    user store's --user-store PATH, else $MEMORY_MCP_USER_ROOT), for every command but those that
    create stores: a typo must not quietly start an empty store. `user_option` is the command's
    --user-store value (None: not given); False for a command that serves no user store."""
    if command in NO_NAMED_STORE and store is not None:
        raise InvalidArgument(f"`{command}` runs on a new temporary store only, so it never writes into a real "
                              "one; run it without --store.")
    if command in CREATES_NAMED | NO_NAMED_STORE | NAMES_ONLY:
        return
    for named, by in _named_stores(store, user_option):
        if not named.expanduser().exists():
            shown = named.expanduser().resolve()
            raise InvalidArgument(f"no memory store at {shown} (named by {by}); create it with "
                                  f"`memory-mcp init {shown}`, or name an existing store.")


def _named_stores(store: Path | None, user_option: str | bool | None) -> list[tuple[Path, str]]:
    """The store paths a person named, each with what named it."""
    named: list[tuple[Path, str]] = []
    env = os.environ.get("MEMORY_MCP_ROOT")
    if store is not None or env:
        named.append((store, "--store") if store is not None else (Path(str(env)), "MEMORY_MCP_ROOT"))
    user_env = os.environ.get(USER_ROOT_ENV)
    user: tuple[Path, str] | None = None
    if isinstance(user_option, str):
        user = (Path(user_option), "--user-store")
    elif user_env and user_option is not False:
        user = (Path(user_env), USER_ROOT_ENV)
    # The default user store is created on its own even when spelled out: `install` writes its path
    # into the client's registration, and the server must start on a fresh machine.
    if user is not None and user[0].expanduser().resolve() != _default_user_root():
        named.append(user)
    return named


def _default_user_root() -> Path:
    return (Path.home() / ".memory-mcp" / "default").resolve()


def user_root(path: Path | None = None) -> Path:
    """The user's global store: `path`, else $MEMORY_MCP_USER_ROOT, else ~/.memory-mcp/default
    (the same folder a single-store server uses when nothing else is configured)."""
    if path is not None:
        return path.expanduser().resolve()
    env = os.environ.get(USER_ROOT_ENV)
    # Resolved like the project store is, or the same-folder check misses a HOME behind a symlink.
    return Path(env).expanduser().resolve() if env else _default_user_root()


def configured_user_root(option: str | bool | None) -> Path | None:
    """The user store a command was given: `--user-store PATH`, a bare `--user-store` (True: the
    default user store) or, without the option, $MEMORY_MCP_USER_ROOT. None: one store, no scopes."""
    if option is None:
        return user_root() if os.environ.get(USER_ROOT_ENV) else None
    return user_root(None if option is True else Path(str(option)))


@dataclass(frozen=True)
class ScopeConfig:
    """Where the stores are. `user` None means one store and no scopes; `team`, the project's team
    store (served only beside the user store)."""

    project: Path | None = None
    user: Path | None = None
    team: Path | None = None

    def check(self) -> None:
        """Refuse a project store that is the user store: one folder cannot be both scopes."""
        if self.user is not None and (self.project or default_root()).expanduser().resolve() == self.user:
            raise InvalidArgument(
                f"the project store and the user store are the same folder ({self.user}); "
                "give --store a folder of the project's own (e.g. PROJECT/.memory).")
        if self.team is not None and self.team.resolve() in ((self.project or default_root()).expanduser().resolve(),
                                                             self.user):
            raise InvalidArgument(f"the team store {self.team} is also the project or the user store; name another "
                                  "store with --store.")
