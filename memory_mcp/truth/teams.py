"""A project's team store: the pointer file a code repository commits (`.memory.toml`, its remote
URL and nothing else), where the person's clone of that store lives, and the person's own record of
the team stores they joined and whose memories they accept without asking.

The pointer file arrives with every `git clone` of the project, so whoever can commit to the project
writes it: it is read as hostile input (a size limit, a regular file only, only the key defined here,
only remote URLs git fetches over a network or an absolute path outside the project; never git's
`ext::` transports, an option, a credential or a path into the clone). Nothing is fetched from the
URL it names until the person runs `memory-mcp team join` in that project (or `team init`), which is
recorded here, in their config folder, never in a file a teammate can edit.

The clone lives under the memory home, `teams/<name>-<hash8 of the remote>`, one per remote on a
machine (two clones of the project share it), never inside the code repository (no gitlink to trap).

Standard library only: every hook reads this.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_mcp.truth.errors import InvalidPointer, ParseError
from memory_mcp.truth.layout import config_dir, save_config
from memory_mcp.truth.projects import remote_key

POINTER = ".memory.toml"
POINTER_MAX_BYTES = 4096
URL_MAX_CHARS = 1024
TEAMS_FILE = "teams.json"
TEAMS_FOLDER = "teams"
KEYS = ("remote",)
# Transports git fetches over a network (and file://, checked like a path): never `ext::` and its kin.
SCHEMES = ("https", "http", "ssh", "git", "git+ssh", "ssh+git", "file")
ACCEPT_NONE, ACCEPT_ALL = "none", "all"

_TRANSPORT = re.compile(r"^[A-Za-z0-9+.-]*::")  # git's `<transport>::<address>` (ext::, fd::, a helper)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)(.*)$")
_SCP = re.compile(r"^(?:[^@/:\s]+@)?[^@/:\s]+:")
_UNSAFE_CHARS = re.compile(r"[\s\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Team:
    """The team store a project's pointer file names, as this machine sees it."""

    pointer: Path  # the pointer file
    remote: str = ""  # the URL it names ("" when refused)
    error: str = ""  # why it was refused (then nothing is fetched)
    store: Path | None = None  # where the person's clone of it lives (or would)
    joined: bool = False  # the person joined it for this project and the clone is there

    def unjoined_line(self) -> str:
        """What a session start says once about a pointer file not joined here, or refused."""
        return self.error or (
            f"this project's {self.pointer.name} names a team memory store at {self.remote} that you have not joined "
            "on this machine, so nothing was fetched from it and nothing from it reaches the model. To use it, check "
            f"who committed the pointer (`git log -p -- {self.pointer.name}`), then run `memory-mcp team join` in a "
            "terminal in the project.")


def pointer_text(url: str) -> str:
    """The pointer file `team init` writes (the URL checked by the caller)."""
    return ("# This project's team memory store (memory-mcp). Join it with `memory-mcp team join`;\n"
            "# nothing is fetched from it before you do.\n"
            f"remote = {json.dumps(url)}\n")


def read_pointer(project: Path) -> str | None:
    """The remote URL the pointer file of the project at `project` names; None when there is no
    pointer file; InvalidPointer saying why when it is not one this program wrote or would."""
    path = project / POINTER
    if not os.path.lexists(path):
        return None
    import tomllib  # here, not above: most projects have no pointer file, and every hook asks

    from memory_mcp.truth.paths import read_regular

    try:
        data = read_regular(path, POINTER_MAX_BYTES + 1)
    except ParseError as e:
        raise InvalidPointer(f"{path}: {e.message}; nothing is fetched from it.") from None
    except OSError as e:
        raise InvalidPointer(f"{path} cannot be read ({e.strerror}); nothing is fetched from it.") from None
    if len(data) > POINTER_MAX_BYTES:
        raise InvalidPointer(f"{path} is over {POINTER_MAX_BYTES} bytes, not a team pointer file; nothing is "
                             "fetched from it.")
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise InvalidPointer(f"{path} is not UTF-8 TOML ({e}); nothing is fetched from it.") from None
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise InvalidPointer(f"{path} has keys a team pointer file does not define ({', '.join(unknown[:5])[:200]}); "
                             f"it holds only `remote`. Nothing is fetched from it.")
    url = table.get("remote")
    if not isinstance(url, str):
        raise InvalidPointer(f"{path} names no remote (`remote = \"URL\"`); nothing is fetched from it.")
    return check_url(url, project, f"the remote in {path}")


def check_url(url: str, project: Path, what: str = "the team store's remote") -> str:
    """`url` when it is a remote a team store may have: a URL git fetches over a network (https,
    http, ssh, git), an scp-like `host:path`, or an absolute path (or file:// URL) outside the project;
    InvalidPointer saying why otherwise."""
    def refuse(why: str) -> InvalidPointer:
        return InvalidPointer(f"{what} is refused: {why}. Nothing was fetched.")

    if not url or len(url) > URL_MAX_CHARS:
        raise refuse(f"a URL has 1 to {URL_MAX_CHARS} characters")
    if url.startswith("-"):
        raise refuse("it starts with '-', which git would read as an option")
    if _TRANSPORT.match(url):
        raise refuse("git's `TRANSPORT::ADDRESS` form (such as ext::, which runs a command) is not a remote")
    if _UNSAFE_CHARS.search(url):
        raise refuse("it holds white space or control characters")
    scheme = _SCHEME.match(url)
    if scheme:
        name, authority, rest = scheme.group(1).lower(), scheme.group(2), scheme.group(3)
        if name not in SCHEMES:
            raise refuse(f"the scheme {name!r} is not one of {', '.join(SCHEMES)}")
        if ":" in authority.rpartition("@")[0]:
            raise refuse("it holds a password; a committed file must not, give the URL without it")
        if name == "file":
            _check_path(rest, project, refuse)
        return url
    if _SCP.match(url) and not url.startswith("/"):
        return url  # [user@]host:path, git's ssh shorthand
    _check_path(url, project, refuse)
    return url


def _check_path(path: str, project: Path, refuse: Any) -> None:
    """A local remote: an absolute path that is not the project or inside it."""
    if not path.startswith("/"):
        raise refuse("a local remote must be an absolute path (a relative one depends on the machine and the folder)")
    real = Path(os.path.realpath(path))
    here = project.resolve()
    if real == here or real.is_relative_to(here) or here.is_relative_to(real):
        raise refuse("it is a path into the project's own clone")


def store_path(url: str, project: Path, home: Path) -> Path:
    """Where the person's clone of the team store at `url` lives: `<memory home>/teams/<name>-<hash8>`,
    the hash over the remote's one spelling (`projects.remote_key`), so every clone of the project on
    this machine, and every spelling of the URL, finds the same one."""
    key = remote_key(url, project)
    last = key.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", last).strip("-.") or "team"
    return home / TEAMS_FOLDER / f"{name[:40]}-{hashlib.sha256(key.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


def find(project: Path, project_key: str, home: Path) -> Team | None:
    """The team store the project at `project` points at (None: it has no pointer file), whether the
    person joined it for this project (`project_key`: the project's identity) and where its clone is."""
    pointer = project / POINTER
    try:
        url = read_pointer(project)
    except InvalidPointer as e:
        return Team(pointer, error=e.message)
    if url is None:
        return None
    store = store_path(url, project, home)
    entry = _load()["joined"].get(project_key)
    joined = isinstance(entry, dict) and entry.get("remote") == url and (store / ".git").exists()
    return Team(pointer, url, store=store, joined=joined)


# ------------------------------------------------------------------ the person's record
def _load() -> dict[str, Any]:
    try:
        data = json.loads((config_dir() / TEAMS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    data = data if isinstance(data, dict) else {}
    for key in ("joined", "accept"):
        if not isinstance(data.get(key), dict):
            data[key] = {}
    return data


def _save(data: dict[str, Any]) -> None:
    save_config(TEAMS_FILE, data)


def record_join(project_key: str, url: str, store: Path) -> None:
    """The person joined the team store at `url` for the project `project_key` (its clone at `store`)."""
    data = _load()
    data["joined"][project_key] = {"remote": url, "store": str(store),
                                   "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    _save(data)


def accepts(store: Path) -> str | frozenset[str]:
    """Whose memories in the team store at `store` the person accepts without `memory-mcp accept`:
    ACCEPT_NONE (the default), ACCEPT_ALL, or the authors' e-mails (lower case)."""
    value = _load()["accept"].get(str(store))
    if value == ACCEPT_ALL:
        return ACCEPT_ALL
    if isinstance(value, list):
        return frozenset(str(v).strip().lower() for v in value if isinstance(v, str) and v.strip())
    return ACCEPT_NONE


def set_accepts(store: Path, value: str | list[str]) -> None:
    """Record whose memories in the team store at `store` are accepted without asking."""
    data = _load()
    data["accept"][str(store)] = value if isinstance(value, str) else sorted({v.strip().lower() for v in value})
    _save(data)


def is_team_store(root: Path, home: Path) -> bool:
    """Whether `root` is a team store's clone under the memory home `home`."""
    return Path(os.path.abspath(root)).parent == home / TEAMS_FOLDER
