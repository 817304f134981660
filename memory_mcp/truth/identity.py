"""A project's own store (`PROJECT/.memory`) is checked before anything opens it.

Whatever a repository commits arrives with a plain `git clone`, so a `.memory` can be made to be the
project itself: a link `.memory -> .` makes every file of the code repository a memory, puts the
index into its work tree and the agent's memory commits into its history under the person's name.
So a `.memory` is refused when it is a symbolic link, resolves to the project root or outside it,
has no git repository of its own or shares the project's, and when it is a gitlink that was never
checked out (someone committed the store into the code repository as a submodule or an embedded
repository): a new empty store must not quietly take its place.

Files only, no git process: the hooks check this on every call.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

PROJECT_FOLDER = ".memory"
GITLINK_MODE = 0o160000


def git_dir(root: Path) -> Path | None:
    """The git directory of the work tree at `root`, resolved: its `.git` folder, or the folder a
    `.git` file names (a submodule, a linked worktree); None when it has neither."""
    dot = root / ".git"
    if dot.is_dir():
        return dot.resolve()
    try:
        line = dot.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not line.startswith("gitdir:"):
        return None
    return (root / line.removeprefix("gitdir:").strip()).resolve()


def common_dir(gitdir: Path) -> Path:
    """The common git directory of a linked worktree's git directory (itself for a main one)."""
    try:
        return (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
    except (OSError, UnicodeDecodeError):
        return gitdir


def refusal(store: Path) -> str | None:
    """Why the store at `store` must not be opened, or None. Only a project's own folder
    (`PROJECT_FOLDER`) is checked: a store a person names elsewhere is theirs to choose."""
    store = Path(os.path.abspath(store.expanduser()))
    if store.name != PROJECT_FOLDER:
        return None
    project = store.parent.resolve()
    fix = ("A project's store is a git repository of its own in that folder: remove what is there and clone "
           f"the store into it (`git clone URL {store}`), or run `memory-mcp init {store}`.")
    if store.is_symlink():
        return (f"{store} is a symbolic link (to {os.readlink(store)}), not a store of the project's own; nothing "
                f"was read from it or written to it. {fix}")
    if not store.is_dir():
        return None
    real = store.resolve()
    if real == project or not real.is_relative_to(project):
        where = "the project itself" if real == project else "a folder outside the project"
        return f"{store} resolves to {real}, {where}; nothing was read from it or written to it. {fix}"
    if not os.path.lexists(store / ".git"):
        try:
            empty = not any(store.iterdir())
        except OSError:
            return None
        if empty:
            return _unchecked_out(project, store)
        return (f"{store} has no git repository of its own, so its memories would be committed into the "
                f"project's history; nothing was read from it or written to it. {fix}")
    own = git_dir(store)
    theirs = git_dir(project)
    if own is not None and theirs is not None and own in (theirs, common_dir(theirs)):
        return (f"{store} uses the project's own git directory ({own}), so its memories would be committed "
                f"into the project's history; nothing was read from it or written to it. {fix}")
    return None


def _unchecked_out(project: Path, store: Path) -> str | None:
    """The refusal of an empty `.memory` that the project's git holds as a gitlink (a submodule or
    an embedded repository someone committed), or None for an empty folder a person made."""
    name = store.name
    try:
        modules = (project / ".gitmodules").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        modules = ""
    submodule = re.search(rf"^\s*path\s*=\s*{re.escape(name)}/?\s*$", modules, re.M) is not None
    if submodule:
        return (f"{store} is a git submodule that was not checked out (the project was cloned without "
                f"--recurse-submodules): run `git -C {project} submodule update --init {name}` to fetch the "
                "store; no new empty store is made in its place.")
    gitdir = git_dir(project)
    if gitdir is not None and _gitlink_in_index(gitdir / "index", name):
        return (f"{store} is a store someone committed into the project as a gitlink, with no checkout and no "
                f"entry in .gitmodules to fetch it from; no new empty store is made in its place. To share a store "
                f"with the team, remove the link (`git -C {project} rm --cached {name}`), then run `memory-mcp team "
                f"init --remote URL` with the store's remote: it commits a pointer file teammates join.")
    return None


def _gitlink_in_index(index: Path, name: str) -> bool:
    """Whether git's index (versions 2 and 3) holds `name` as a gitlink (mode 160000). Read from the
    file rather than through `git ls-files`: only an empty `.memory` ever gets here, but a hook
    that starts git costs more than it has."""
    import struct  # only an empty `.memory` gets here

    try:
        data = index.read_bytes()
    except OSError:
        return False
    if data[:4] != b"DIRC":
        return False
    key = name.encode("utf-8") + b"\0"
    at = data.find(key)
    while at != -1:
        # An entry: 40 bytes of stat data (mode at 24), 20 of object id, 2 of flags (the name's length
        # in the low 12 bits), 2 more when the extended flag (0x4000) is set, then the name.
        for start, extended in ((at - 62, False), (at - 64, True)):
            if start >= 12:
                (mode,) = struct.unpack_from(">I", data, start + 24)
                (flags,) = struct.unpack_from(">H", data, start + 60)
                if mode == GITLINK_MODE and flags & 0xFFF == len(name) and bool(flags & 0x4000) == extended:
                    return True
        at = data.find(key, at + 1)
    return False
