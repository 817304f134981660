"""Where things are in a store: folder names, the template a new store is copied from, the default root.

Plain constants and path functions with no heavy imports, so the watcher and the scopes can name
these paths without loading the index, git or YAML at server start.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Mapping
from pathlib import Path

from memory_mcp.truth.identity import git_dir

MEMORIES = "memories"
DERIVED = ".derived"
INDEX_FILE = "index.sqlite3"
CLAIM_FILE = "memory-mcp-index"  # see index/origin.py
TEMPLATE = Path(__file__).resolve().parents[1] / "store_template"
ROOT_ENV = "MEMORY_MCP_ROOT"
# Files a month folder takes before the next overflow folder opens. git rewrites a folder's whole
# tree on every commit that touches it, so each stays under about 1,000 entries; the margin is for
# files a person adds by hand, which the count sees only once they are there.
MONTH_FILES = 900
_YEAR_MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])")


def default_root() -> Path:
    """$MEMORY_MCP_ROOT, else ~/.memory-mcp/default."""
    env = os.environ.get(ROOT_ENV)
    return Path(env).expanduser() if env else Path.home() / ".memory-mcp" / "default"


def is_store(root: Path) -> bool:
    """Whether `root` is a store: a git work tree with a memories/ folder."""
    return (root / ".git").exists() and (root / MEMORIES).is_dir()


def index_path(root: Path) -> Path:
    """The derived index file of the store at `root` (in the cache folder for a store this user
    cannot write, where its session keeps it)."""
    return derived_folder(root, root / ".git") / INDEX_FILE


def derived_folder(root: Path, git_dir: Path) -> Path:
    """Where the store's index lives: its `.derived/`, or the cache folder when this user cannot
    write the store (`unwritable_part`)."""
    return cache_folder(root) if unwritable_part(root, git_dir) else root / DERIVED


def claim_path(root: Path) -> Path:
    """Where the claim that the store's index was built here is kept (`index.origin`): beside the
    store's lock, in its git directory, or in the cache folder for a store this user cannot write."""
    gitdir = git_dir(root) or root / ".git"
    return (cache_folder(root) if unwritable_part(root, gitdir) else gitdir) / CLAIM_FILE


def config_dir() -> Path:
    """The user's config folder for memory-mcp: `$XDG_CONFIG_HOME` (else ~/.config)`/memory-mcp`:
    the person's decisions (trust, acceptance, teams joined), never in a store its writers share."""
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "memory-mcp"


def save_config(name: str, data: object) -> None:
    """Write `data` as the JSON file `name` of the config folder, whole or not at all (a temporary
    file renamed over it): the person's decisions are never left half written."""
    import json

    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, folder / name)


def cache_home() -> Path:
    """This user's cache folder for memory-mcp: `$XDG_CACHE_HOME` (else ~/.cache)`/memory-mcp`."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memory-mcp"


def cache_folder(root: Path) -> Path:
    """Where this user keeps the lock and index of a store they cannot write:
    `cache_home()/stores/<name>-<hash8 of the store's path>`."""
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:8]
    return cache_home() / "stores" / f"{root.name[:40] or 'root'}-{digest}"


def unwritable_part(root: Path, git_dir: Path) -> str | None:
    """The part of the store this user cannot write that a write needs (its folder, .git/ or
    .derived/), or None when all can be written."""
    derived = root / DERIVED
    for part, shown in ((root, "its folder"), (git_dir, ".git/"), (derived, f"{DERIVED}/")):
        if part.exists() and not os.access(part, os.W_OK):
            return shown
    return None


def month_folder(root: Path, created: str | None, planned: Mapping[str, int] | None = None) -> str:
    """The store-relative folder a new memory created at `created` (ISO 8601) is written to:
    `memories/YYYY/MM`, or its overflow `MM-2`, `MM-3`... once the one before holds MONTH_FILES.
    `planned` counts files not written yet, by folder (a plan of many moves).

    A memory's folder never changes once written (the count only decides where new files go). The
    cost is one stat per overflow folder and one listing of at most MONTH_FILES names. Writers take
    the store lock, so two of them count one after the other; the count is of the folder itself,
    so files added by hand or by another clone's sync count too."""
    match = _YEAR_MONTH.match(created or "")
    year, month = match.groups() if match else time.strftime("%Y-%m", time.gmtime()).split("-")
    planned = planned or {}
    base = f"{MEMORIES}/{year}"

    def folder(n: int) -> str:
        return f"{base}/{_overflow(month, n)}"

    n = 1
    while folder(n + 1) in planned or os.path.isdir(os.path.join(root, folder(n + 1))):
        n += 1
    try:
        held = len(os.listdir(os.path.join(root, folder(n))))
    except FileNotFoundError:
        held = 0
    return folder(n + 1 if held + planned.get(folder(n), 0) >= MONTH_FILES else n)


def _overflow(month: str, n: int) -> str:
    """The name of a month's n-th folder: `11`, then `11-2`, `11-3`..."""
    return month if n == 1 else f"{month}-{n}"
