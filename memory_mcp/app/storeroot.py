"""A store's folder: made from the template (git-initialised, first commit) or opened, and the
checks that a path may be one: a folder, not a project's `.memory` that must not be opened, not
something else already. Apart from session.py, which holds what happens around each call."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from memory_mcp.app import consent
from memory_mcp.app.lock import StoreLock
from memory_mcp.truth import identity
from memory_mcp.truth.errors import InvalidStore, UnsafeStore
from memory_mcp.truth.layout import MEMORIES, TEMPLATE, default_root, is_store
from memory_mcp.vcs.history import History
from memory_mcp.vcs.repo import read_head


def init_store(root: Path, refused: Callable[[Path], InvalidStore] | None = None) -> Path:
    """Create a store at `root` from the template, git-init it and commit. Refuses to overwrite (with
    `refused(root)` when given), and refuses a project's `.memory` that is not a folder of its own
    (`identity.refusal`). A store another process is making meanwhile is waited for and returned."""
    import tempfile  # here, not at the top: every command's process would pay for it

    check_identity(root)
    root = root.expanduser().resolve()
    check_folder(root)
    root.parent.mkdir(parents=True, exist_ok=True)
    # Two servers started at once on a missing store must not both create it. The store's own lock
    # lives in .git/, which does not exist yet; this one is in the temp folder, keyed by the path, so
    # creating `PROJECT/.memory` leaves no stray file beside the person's code.
    key = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    lock_path = Path(tempfile.gettempdir()) / f"memory-mcp-init-{key}.lock"
    with StoreLock(lock_path).hold():
        if root.exists() and any(root.iterdir()):
            if is_store(root):
                lock_path.unlink(missing_ok=True)
                return root
            raise (refused or _not_empty)(root)
        root.mkdir(parents=True, exist_ok=True)
        shutil.copytree(TEMPLATE, root, dirs_exist_ok=True)
        history = History.init(root)
        consent.record(root, "made on this machine")  # before the commit, which makes the store whole
        history.commit_paths(
            [p.relative_to(root).as_posix() for p in sorted(root.rglob("*"))
             if p.is_file() and ".git" not in p.parts], "init: new memory store", [])
        # Removed once the store is whole (one file per store path was left in the temp folder: the
        # test suite left thousands). A process still waiting on the removed file, or one that makes
        # a new one, then finds the store made and returns; a failed init keeps the file.
        lock_path.unlink(missing_ok=True)
    return root


def check_folder(root: Path) -> None:
    """Refuse a store path that is, or lies under, something other than a folder (a regular file
    named by --store or $MEMORY_MCP_ROOT), before a listing or mkdir fails on it with a traceback."""
    for part in (root, *root.parents):
        # One stat a part: is_dir() then exists() called the folder another process made in between
        # a file (two servers opening a missing store at once).
        try:
            if stat.S_ISDIR(part.stat().st_mode):
                return
        except (FileNotFoundError, NotADirectoryError):
            if not part.is_symlink():  # missing, or under a file a part further up names
                continue
        what = "is" if part == root else f"is inside {part}, which is"
        raise InvalidStore(f"{root} {what} a file, not a folder; a memory store is a folder: name a "
                           "new or existing store folder.")


def open_root(root: Path | None, create: bool) -> Path:
    """The resolved root of a store (default: $MEMORY_MCP_ROOT or ~/.memory-mcp/default).

    A missing or empty folder is created from the template when `create`; a folder that is not a
    store is refused, never overwritten, and so is a project's `.memory` that is not a store of its
    own (`identity.refusal`), before anything in it is read."""
    root = root or default_root()
    check_identity(root)
    root = root.expanduser().resolve()
    if is_store(root) and (_born(root) or not create):
        return root
    check_folder(root)
    if create:
        # Decided under the maker's lock: a folder seen half made (the template copied, no commit
        # yet) while another process makes the store is waited for, not refused or used unborn.
        return init_store(root, _not_a_store)
    raise _not_a_store(root)


def _not_empty(root: Path) -> InvalidStore:
    return InvalidStore(f"{root} exists and is not a memory store (a git work tree with a memories/ folder); "
                        "choose an empty or new folder.")


def _not_a_store(root: Path) -> InvalidStore:
    if (root / ".git").exists() and not (root / MEMORIES).exists():
        return InvalidStore(f"{root} is a git repository without a memories/ folder; "
                            "run `memory-mcp init` on a new folder instead.")
    return InvalidStore(f"{root} is not a memory store (a git work tree with a memories/ folder); "
                        "run `memory-mcp init PATH` on a new folder, or point MEMORY_MCP_ROOT at a store.")


def _born(root: Path) -> bool:
    """Whether the store's HEAD names a commit (read from git's files, no git process)."""
    own = identity.git_dir(root)
    return own is not None and bool(read_head(own, identity.common_dir(own)))


def check_identity(root: Path) -> None:
    """UnsafeStore when `root` is a project's `.memory` that must not be opened (checked on the path
    as given: resolving it first would hide a link)."""
    reason = identity.refusal(root)
    if reason:
        raise UnsafeStore(reason)
