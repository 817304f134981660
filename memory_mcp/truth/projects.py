"""A project's identity and the store it gets under the memory home, found from files alone (no git
process: every hook finds its stores this way).

The identity is the repository's common git directory, so every worktree of one repository, those of
a bare repository included, is one project. Its store is `<memory home>/projects/<name>-<hash8>`, the
hash taken over the bytes of the identity's path: the main work tree when the common directory is
its `.git` (the name every earlier version gave, so those stores keep their place), else the common
directory itself (a bare repository, a submodule's git directory).

Two records, small JSON files under `projects/`, let a store be found by more than its name:
`.by-remote/` maps the repository's remote URL to the store it had (a re-clone at another path, or a
second clone, finds the same store), `.by-repository/` maps an identity to a store an earlier version
made for one of its work trees (adopted, not moved: a running process may still have it open).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from memory_mcp.truth.identity import PROJECT_FOLDER

BY_REMOTE = ".by-remote"
BY_REPOSITORY = ".by-repository"


@dataclass(frozen=True)
class Repository:
    """The git repository a folder is in, read from its `.git` and the files it names."""

    work_tree: Path  # the work tree holding the folder (a linked worktree is its own)
    common_dir: Path  # the repository's common git directory: the project's identity
    main_tree: Path | None  # the work tree whose `.git` the common directory is; None for a bare one

    @property
    def key(self) -> Path:
        """The path the store's name is hashed from: the main work tree, else the common directory."""
        return self.main_tree or self.common_dir

    @property
    def root(self) -> Path:
        """The folder a project's `.memory` and its relative paths belong to."""
        return self.main_tree or self.work_tree


def find_repository(folder: Path) -> Repository | None:
    """The repository holding `folder`, or None when it is in none."""
    folder = folder.expanduser().resolve()
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return Repository(candidate, dot_git, candidate)
        if dot_git.is_file():
            return _linked(candidate, dot_git)
    return None


def _linked(candidate: Path, dot_git: Path) -> Repository:
    """A work tree whose `.git` is a file: a linked worktree, a submodule, a separate git directory."""
    try:
        line = dot_git.read_text(encoding="utf-8").strip()
        git_dir = (candidate / line.removeprefix("gitdir:").strip()).resolve()
    except (OSError, ValueError):
        return Repository(candidate, dot_git, candidate)  # unreadable: the folder is its own project
    try:
        common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except (OSError, ValueError):
        common = git_dir  # no commondir: a submodule or a separate git directory is its own common one
    return Repository(candidate, common, common.parent if common.name == ".git" else None)


def store_name(key: Path) -> str:
    """`<name>-<hash8>`: the name so a person can tell the project, the hash of the path's bytes
    (os.fsencode: a path that is not UTF-8 gets one too; a UTF-8 path hashes as its text did)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", label(key)).strip("-.") or "root"
    return f"{name[:40]}-{hashlib.sha256(os.fsencode(key)).hexdigest()[:8]}"


def label(key: Path) -> str:
    """The name a person knows a repository by: its folder's (a bare `app.git` is `app`)."""
    return key.name.removesuffix(".git") if key.name != ".git" else key.parent.name


@dataclass(frozen=True)
class Located:
    """The store a folder's project uses, and why."""

    store: Path
    why: str
    project: Path  # the project's root folder (its main work tree, else the work tree, else the folder)
    repository: Repository | None = None
    remote: str = ""


def locate(folder: Path, projects: Path, record: bool = True) -> Located:
    """The store of the project holding `folder`, `projects` being `<memory home>/projects`. In
    order: the project's `.memory`; the store an earlier version made for this work tree (adopted);
    the store named from the identity; the store recorded for the identity, then for the remote URL;
    else a new one named from the identity (created by whoever opens it). `record`: write the remote's
    record when the store exists and its remote has none (a lookup that is cheap when it is there)."""
    repo = find_repository(folder)
    root = repo.root if repo else folder.expanduser().resolve()
    own = root / PROJECT_FOLDER
    # A link, dangling or not, is the project's store too, so that opening it is refused
    # (`identity.refusal`) rather than another store quietly used.
    if own.is_dir() or own.is_symlink():
        return Located(own, "the project's own .memory folder", root, repo)
    remote = remote_url(repo) if repo else ""
    found = _found(repo, root, projects, remote)
    if record and repo is not None and found.store == _legacy(repo, projects):
        _record(projects, BY_REPOSITORY, os.fsdecode(repo.key), found.store)
    if record and remote and found.store.is_dir():
        _record(projects, BY_REMOTE, remote_key(remote, root), found.store, remote)
    return Located(found.store, found.why, root, repo, remote)


def _legacy(repo: Repository, projects: Path) -> Path | None:
    """The store a102c0e and earlier named from the work tree, where that is not the identity."""
    return projects / store_name(repo.work_tree) if repo.work_tree != repo.key else None


def related(located: Located, projects: Path) -> list[Path]:
    """The other stores that exist for the project `located` is (its other names and records): they
    are not used, and `where` lists them so that none is forgotten."""
    repo, seen = located.repository, []
    if repo is not None:
        seen += [projects / store_name(repo.key), _recorded(projects, BY_REPOSITORY, os.fsdecode(repo.key))]
    if located.remote:
        seen.append(_recorded(projects, BY_REMOTE, remote_key(located.remote, located.project)))
    out: list[Path] = []
    for store in seen:
        if store is not None and store.is_dir() and store != located.store and store not in out:
            out.append(store)
    return out


def _found(repo: Repository | None, root: Path, projects: Path, remote: str) -> Located:
    named = projects / store_name(repo.key if repo else root)
    if repo is not None:
        legacy = _legacy(repo, projects)
        if legacy is not None and legacy.is_dir():
            return Located(legacy, f"the store an earlier version named from this work tree ({repo.work_tree}), "
                                   "kept for it", root)
    if named.is_dir():
        return Located(named, _named_why(repo, root), root)
    if repo is not None:
        adopted = _recorded(projects, BY_REPOSITORY, os.fsdecode(repo.key))
        if adopted is not None:
            return Located(adopted, f"recorded for this repository ({repo.common_dir}): a store an earlier "
                                    "version made for one of its work trees", root)
    if remote:
        cloned = _recorded(projects, BY_REMOTE, remote_key(remote, root))
        if cloned is not None:
            return Located(cloned, f"recorded for the remote {remote}: the store of another clone of it", root)
    return Located(named, _named_why(repo, root), root)


def _named_why(repo: Repository | None, root: Path) -> str:
    if repo is None:
        return f"named from the folder {root} (not in a git repository)"
    if repo.main_tree is not None:
        return f"named from the repository's work tree {repo.main_tree} (common git directory {repo.common_dir})"
    return f"named from the repository's common git directory {repo.common_dir}"


# ------------------------------------------------------------------ records
def _record_path(projects: Path, kind: str, key: str) -> Path:
    return projects / kind / f"{hashlib.sha256(os.fsencode(key)).hexdigest()[:16]}.json"


def _recorded(projects: Path, kind: str, key: str) -> Path | None:
    """The store a record names, when the record is there, is for `key` and its store exists."""
    try:
        data = json.loads(_record_path(projects, kind, key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("store"), str):
        return None
    store = projects / Path(data["store"]).name  # a name under projects/, never a path elsewhere
    return store if store.is_dir() else None


def _record(projects: Path, kind: str, key: str, store: Path, shown: str = "") -> None:
    """Write the record of `key` naming `store`, unless it already names a store that exists: the
    first store recorded for a remote or a repository stays its store. A memory home that cannot be
    written only costs the record."""
    if _recorded(projects, kind, key) is not None:
        return
    path = _record_path(projects, kind, key)
    with contextlib.suppress(OSError):
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        # ensure_ascii: a path that is not UTF-8 is kept as escapes and reads back as the same bytes
        tmp.write_text(json.dumps({"key": key, "for": shown or key, "store": store.name}), encoding="ascii")
        os.replace(tmp, path)


# ------------------------------------------------------------------ remotes
def remote_url(repo: Repository) -> str:
    """The repository's `origin` URL (else its first remote's) as its config file holds it; ""
    without one. Read from the file, not through git."""
    try:
        text = (repo.common_dir / "config").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    sections = re.findall(r'^\s*\[remote "([^"]+)"\]\s*$(.*?)(?=^\s*\[|\Z)', text, re.M | re.S)
    for _name, body in sorted(sections, key=lambda s: s[0] != "origin"):
        url = re.search(r"^\s*url\s*=\s*(.+?)\s*$", body, re.M)
        if url:
            return url.group(1).strip('"')
    return ""


# Patterns, not compiled here: every hook imports this module, and only a remote's first record reads them.
_URL = r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?:[^@/]*@)?(?P<host>[^/:]*)(?::\d+)?(?P<path>/.*)?$"
_SCP = r"^(?:[^@/:]+@)?(?P<host>[^/:]+):(?P<path>.*)$"


def remote_key(url: str, base: Path) -> str:
    """One spelling for the URLs that name one repository: ssh, scp-like and https URLs of a host
    become `host/path` (host lower-cased, a trailing `.git` and slashes dropped), a local path its
    absolute form (relative to `base`, the project root)."""
    url = url.strip()
    match = re.match(_URL, url)
    if match and match.group("scheme").lower() != "file":
        return _host_key(match.group("host"), match.group("path") or "")
    if match:
        return "path:" + os.path.normpath(match.group("path") or "/")
    scp = re.match(_SCP, url)
    if scp and "/" not in url.split(":", 1)[0]:
        return _host_key(scp.group("host"), scp.group("path"))
    return "path:" + os.path.normpath(base / os.path.expanduser(url)).removesuffix("/.git")


def _host_key(host: str, path: str) -> str:
    path = path.strip("/").removeprefix("~/")
    path = path.removesuffix("/").removesuffix(".git")
    return f"{host.lower()}/{path}"
