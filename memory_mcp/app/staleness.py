"""File memories that know they are stale: a memory with `paths:` written (or updated) through the
server, the CLI or a hook carries the project's HEAD commit of that moment in `written_by`; the
commits since then that touched its file are counted, and the PreToolUse hook, `recall --file`
(memory_recall's `file`) and status say so: "src/billing/tax.py changed in 3 commits since".

A count is one `git rev-list --count` in the project (vcs/project.py), kept in the store's derived
folder per HEAD: the answer for a commit and a file cannot change until HEAD moves, and the file hook
runs on every file read. Memories of the user store, memories without a commit and projects without
git get no mark; nor does a commit this clone does not have (a teammate's not fetched yet).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from memory_mcp.index.db import Index
from memory_mcp.index.schema import Row
from memory_mcp.truth.layout import index_path
from memory_mcp.truth.recall import Hit, Recall
from memory_mcp.truth.roots import user_root, working_folder

if TYPE_CHECKING:
    from memory_mcp.truth.results import Listed
    from memory_mcp.vcs.project import Project

CACHE_FILE = "changes.json"
# At most this many counts not kept yet are made by one call (a git process each); the others wait
# for the next call, so a status over many file memories never stalls on a new HEAD.
NEW_COUNTS_PER_CALL = 50


def note(what: str, commits: int) -> str:
    """The mark: what changed and in how many commits since the memory was written."""
    return f"{what} changed in {commits} commit{'' if commits == 1 else 's'} since"


class Counts:
    """The commits since a memory's commit that touched its files, in the project of `folder`, kept
    per HEAD in `<derived folder>/changes.json` (rewritten whole when HEAD moves)."""

    def __init__(self, store_root: Path, folder: Path | None) -> None:
        # Loaded here, not with the module: the file hook imports this module on every read, and
        # needs git (a subprocess) only for a memory that carries a commit.
        from memory_mcp.vcs import project

        user = store_root.expanduser().resolve() == user_root()
        self._count = project.commits_since
        self.project: Project | None = project.find(folder) if folder is not None and not user else None
        self._path = index_path(store_root).with_name(CACHE_FILE)
        self._kept: dict[str, int] = {}
        self._new = 0
        self._loaded = False

    def _load(self) -> None:
        self._loaded = True
        with contextlib.suppress(OSError, ValueError):
            data = json.loads(self._path.read_text(encoding="utf-8"))
            if self.project and data.get("head") == self.project.head and data.get("repo") == str(self.project.common_dir):
                self._kept = {k: v for k, v in data.get("counts", {}).items() if isinstance(v, int)}

    def since(self, row: Row, pathspecs: list[str]) -> int | None:
        """How many commits since `row` was written touched `pathspecs`; None when it cannot be told."""
        commit = row.written_by.get("commit", "")
        if self.project is None or not commit or not pathspecs:
            return None
        if not self._loaded:
            self._load()
        key = "\t".join([commit, *pathspecs])
        if key not in self._kept:
            if self._new >= NEW_COUNTS_PER_CALL:
                return None
            self._new += 1
            found = self._count(self.project.root, commit, pathspecs)
            self._kept[key] = -1 if found is None else found
        count = self._kept[key]
        return None if count < 0 else count

    def save(self) -> None:
        """Keep the counts made by this call (a store that cannot be written keeps none)."""
        if not self._new or self.project is None:
            return
        data = {"repo": str(self.project.common_dir), "head": self.project.head, "counts": self._kept}
        tmp = self._path.with_name(f".{CACHE_FILE}.{os.getpid()}.tmp")
        with contextlib.suppress(OSError):
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, self._path)


def mark_hits(store_root: Path, index: Index, hits: list[Hit], opts: Recall) -> list[Hit]:
    """`hits` of a file recall (`opts.file`, relative to the root of the project `opts.project`,
    else the working folder's), each whose file changed since it was written marked in `changed`."""
    file = opts.file
    if not hits or not file:
        return hits
    rows = {h.id: index.get(h.id) for h in hits}
    if not any(row is not None and row.written_by.get("commit") for row in rows.values()):
        return hits  # no git process, no file read: the common case
    counts = Counts(store_root, Path(opts.project) if opts.project else working_folder())
    out = []
    for h in hits:
        row = rows[h.id]
        n = counts.since(row, [f":(literal){file}"]) if row is not None else None
        out.append(replace(h, changed=note(file, n)) if n else h)
    counts.save()
    return out


def changed_files(store_root: Path, rows: list[Row], folder: Path | None, limit: int) -> list[Listed]:
    """The file memories of `rows` (active, with `paths`) whose files changed since they were
    written, newest first (memory_status)."""
    stamped = [r for r in rows if r.paths and r.written_by.get("commit")]
    if not stamped:
        return []
    from memory_mcp.truth.results import Listed  # status only: the file hook imports this module

    counts = Counts(store_root, folder)
    out = []
    for row in sorted(stamped, key=lambda r: (r.updated or "", r.id), reverse=True):
        n = counts.since(row, [f":(glob){p}" for p in row.paths])
        if n:
            out.append(Listed(row.id, row.path, row.title, note(", ".join(row.paths), n)))
            if len(out) >= limit:
                break
    counts.save()
    return out
