"""Finding the memory files: the walk of memories/ (with the stat gate applied as it goes) and
the gathering of paths a watcher named. Nothing here reads a file's content or the index."""

from __future__ import annotations

import operator
import os
import stat as stat_mod
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from memory_mcp.index.schema import FileStat
from memory_mcp.truth.layout import MEMORIES
from memory_mcp.truth.paths import SYMLINK_REASON, shown

_TEMP_SUFFIXES = (".tmp", ".swp", ".swx", "~", ".bak", ".orig")
_HARD_LINK = "hard link: not indexed (the same file has another name, which may be outside the store)"
_NOT_UTF8 = "name is not UTF-8 (shown with \\x escapes): not indexed; rename it"
_BY_REL = operator.attrgetter("rel")
_FILE_TYPE = 0o170000  # the S_IFMT bits of st_mode


@dataclass
class Unindexed:
    path: str
    reason: str


@dataclass(slots=True)
class Seen:
    """A file a walk found. The stat gate's numbers, not the `stat_result`: a walk keeps one per
    file, and 10,000 stat results were 6 MB of a reindex's peak heap, a share that grows with the store."""

    rel: str
    abs: str
    mtime_ns: int
    size: int
    ctime_ns: int
    ino: int


@dataclass(slots=True)
class Gate:
    """The stat gate applied as a walk goes, for a reconcile that neither forces nor has watcher
    paths: a file it passes is only named in `clean` (for the deletion sweep), not returned to be
    looked at. A no-op call is then one stat and one dict lookup per file, as close to `find`
    as Python gets."""

    known: dict[str, tuple[FileStat, str | None]]
    horizon: int  # files modified at or after this (ns) may be racily clean: not passed
    clean: list[str] = field(default_factory=list)


def skipped(name: str) -> bool:
    """Names no walk looks at: hidden files and folders, editor and backup leftovers."""
    return name.startswith((".", "#")) or name.endswith(_TEMP_SUFFIXES)


def _regular(rel: str, full: str, st: os.stat_result, seen: list[Seen], refused: list[Unindexed]) -> None:
    """A regular .md file found at `rel`: a candidate, unless another name shares it (a hard link)."""
    if st.st_nlink > 1:
        refused.append(Unindexed(rel, _HARD_LINK))
    else:
        seen.append(Seen(rel, full, st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino))


def walkable(rel: str) -> bool:
    """Whether a walk would index a file at store-relative `rel`: a `.md` under memories/ whose
    every folder and name the walk looks at. A memory written anywhere else vanishes on reindex."""
    parts = rel.split("/")
    return (len(parts) > 1 and parts[0] == MEMORIES and rel.endswith(".md")
            and not any(part in ("", "..") or skipped(part) for part in parts[1:]))


def walk_tree(root: Path, start: str | None = None, gate: Gate | None = None,
          folders: list[str] | None = None) -> tuple[list[Seen], list[Unindexed], str | None]:
    """Every candidate memory file under memories/ (or under `start`, a folder inside it), the
    links refused, and an abort reason. With a `gate`, the files it passes are left out of the
    candidates and named in `gate.clean`. `folders`, when given, gets each folder listed
    (store-relative).

    Plain strings rather than pathlib, and the least work per name: this runs on every tool call
    over every file, and is measured against `find` over the same tree (benchmarks/perf.py)."""
    seen: list[Seen] = []
    refused: list[Unindexed] = []
    aborted: str | None = None
    prefix = len(str(root)) + 1
    if start is None and os.path.islink(os.path.join(root, MEMORIES)):
        return seen, refused, f"the memories/ folder is a {SYMLINK_REASON}"
    stack = [start or os.path.join(root, MEMORIES)]
    known, horizon = (gate.known, gate.horizon) if gate else ({}, 0)
    clean = gate.clean if gate else []
    while stack:
        folder = stack.pop()
        if folders is not None:
            folders.append(folder[prefix:].replace(os.sep, "/"))
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            if folder[prefix:] == MEMORIES:
                return seen, refused, "the memories/ folder is missing"
            continue
        except OSError as e:
            # Keep walking: edits elsewhere must still be seen. Only the deletion sweep is unsafe now.
            aborted = aborted or f"cannot read {folder[prefix:]}: {e.strerror}"
            continue
        _take(entries, folder[prefix:].replace(os.sep, "/") + "/", stack, seen, refused, clean, known, horizon)
    seen.sort(key=_BY_REL)
    return seen, refused, aborted


def _take(entries: list[os.DirEntry[str]], base: str, stack: list[str], seen: list[Seen], refused: list[Unindexed],
          clean: list[str], known: dict[str, tuple[FileStat, str | None]], horizon: int) -> None:
    """One folder's entries, `base` its store-relative path with a trailing slash: subfolders onto
    `stack`, candidates into `seen` (or `clean` when the gate passes them), the refused into
    `refused`. Folders with a name that is not UTF-8 are refused here, so every name under a folder
    is shown as it is once the folder's own name is (os.sep is / wherever a walk runs on POSIX)."""
    for entry in entries:
        name = entry.name
        if name[0] in ".#":
            continue
        if entry.is_dir(follow_symlinks=False):
            if name.endswith(_TEMP_SUFFIXES):
                continue
            if name.isascii() or shown(name) == name:
                stack.append(entry.path)
            else:
                refused.append(Unindexed(shown(base + name), _NOT_UTF8))
            continue
        if not name.endswith(".md"):  # which no editor leftover (_TEMP_SUFFIXES) does
            continue
        if not name.isascii() and shown(name) != name:
            refused.append(Unindexed(shown(base + name), _NOT_UTF8))
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            continue
        mode, rel = st.st_mode, base + name
        if mode & _FILE_TYPE == stat_mod.S_IFREG and st.st_nlink == 1:
            mtime, prev = st.st_mtime_ns, known.get(rel)
            # FileStat by position (mtime_ns, size, sha, ctime_ns, ino): this runs once per file
            # on every call.
            if prev is not None and mtime < horizon and prev[1] is None and prev[0][0] == mtime \
                    and prev[0][1] == st.st_size and prev[0][3] == st.st_ctime_ns and prev[0][4] == st.st_ino:
                clean.append(rel)
            else:
                seen.append(Seen(rel, entry.path, mtime, st.st_size, st.st_ctime_ns, st.st_ino))
        elif stat_mod.S_ISLNK(mode):
            refused.append(Unindexed(rel, SYMLINK_REASON))
        elif stat_mod.S_ISREG(mode):
            refused.append(Unindexed(rel, _HARD_LINK))


def gather(root: Path, paths: Collection[str]) -> tuple[list[Seen], list[Unindexed], str | None, list[str]]:
    """What a walk would find at `paths` (store-relative; a folder stands for all below it), and
    which of them were folders.

    Paths outside memories/, under a skipped name, or below a link or a non-folder are nothing a
    walk would reach, so they count as absent."""
    found: list[Seen] = []
    refused: list[Unindexed] = []
    aborted: str | None = None
    folders: list[str] = []
    for rel in sorted(set(paths)):
        parts = rel.split("/")
        if shown(rel) != rel:
            if os.path.lexists(os.path.join(root, *parts)):
                refused.append(Unindexed(shown(rel), _NOT_UTF8))
            continue
        if parts[0] != MEMORIES or any(skipped(p) for p in parts[1:]) or not _plain_folders(root, parts[:-1]):
            continue
        full = os.path.join(root, *parts)
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            continue
        except OSError as e:
            aborted = aborted or f"cannot read {rel}: {e.strerror}"
            continue
        if stat_mod.S_ISDIR(st.st_mode):
            folders.append(rel)
            below, links, why = walk_tree(root, full)
            found += below
            refused += links
            aborted = aborted or why
        elif not rel.endswith(".md") or len(parts) < 2:
            continue
        elif stat_mod.S_ISLNK(st.st_mode):
            refused.append(Unindexed(rel, SYMLINK_REASON))
        elif stat_mod.S_ISREG(st.st_mode):
            _regular(rel, full, st, found, refused)
    seen = {s.rel: s for s in found}  # a file and its folder may both have been named
    return sorted(seen.values(), key=lambda s: s.rel), refused, aborted, folders


def _plain_folders(root: Path, parts: list[str]) -> bool:
    """Whether each of these nested path parts is a real folder (the walk follows no links)."""
    path = str(root)
    for part in parts:
        path = os.path.join(path, part)
        try:
            if not stat_mod.S_ISDIR(os.lstat(path).st_mode):
                return False
        except OSError:
            return False
    return True
