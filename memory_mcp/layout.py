"""Where things are in a store: folder names, the template a new store is copied from, the default root.

Plain constants and path functions with no heavy imports, so the watcher and the scopes can name
these paths without loading the index, git or YAML at server start.
"""

from __future__ import annotations

import os
from pathlib import Path

MEMORIES = "memories"
DERIVED = ".derived"
INDEX_FILE = "index.sqlite3"
TEMPLATE = Path(__file__).resolve().parent / "store_template"
ROOT_ENV = "MEMORY_MCP_ROOT"


def default_root() -> Path:
    """$MEMORY_MCP_ROOT, else ~/.memory-mcp/default."""
    env = os.environ.get(ROOT_ENV)
    return Path(env).expanduser() if env else Path.home() / ".memory-mcp" / "default"


def is_store(root: Path) -> bool:
    """Whether `root` is a store: a git work tree with a memories/ folder."""
    return (root / ".git").exists() and (root / MEMORIES).is_dir()


def index_path(root: Path) -> Path:
    """The derived index file of the store at `root`."""
    return root / DERIVED / INDEX_FILE
