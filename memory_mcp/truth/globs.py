"""The `paths:` globs of file-aware memories: which memories are about a given file.

Globs are relative to the project root; `**` crosses folders (and matches none), `*` and `?` stay
within one folder name, as in .gitignore and most editors.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from pathlib import Path

from memory_mcp.truth.errors import InvalidArgument


def glob_match(pattern: str, path: str) -> bool:
    """Whether a project-relative `path` matches `pattern`: `**` crosses folders (and matches none),
    `*` and `?` stay within one folder name, as in .gitignore and most editors."""
    pattern, path = pattern.strip().lstrip("/"), path.lstrip("/")
    if pattern.endswith("/"):
        pattern += "**"
    return re.fullmatch(_glob_regex(pattern), path) is not None


@functools.lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape("["))
                i += 1
            else:
                out.append(fnmatch.translate(pattern[i:end + 1])[4:-3])  # the class as fnmatch reads it
                i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def matches_any(globs: list[str], rel: str) -> bool:
    """Whether a project-relative path matches one of a memory's globs (an absolute one never does:
    it is outside the project)."""
    return not rel.startswith("/") and any(glob_match(g, rel) for g in globs)


def project_relative(file: str, project: Path) -> str:
    """`file` relative to the project root with / separators, when it is absolute and inside the
    project; a relative one is taken as relative to the root already; one outside stays absolute."""
    given = Path(file)
    if not given.is_absolute():
        return given.as_posix().removeprefix("./")
    try:
        return given.resolve().relative_to(project.resolve()).as_posix()
    except ValueError:
        return given.as_posix()


def check(globs: list[str]) -> list[str]:
    """Globs as a memory keeps them (trimmed, without a leading ./ or /, blank ones dropped); one that
    climbs out of the project (`..`) is refused, since nothing inside the project could match it."""
    out: list[str] = []
    for g in (g.strip().removeprefix("./").lstrip("/") for g in globs):
        if ".." in g.split("/"):
            raise InvalidArgument(f"the glob {g[:80]!r} leaves the project (..); paths are relative to the "
                                  "project root, e.g. src/billing/**.")
        if g and g not in out:
            out.append(g)
    return out
