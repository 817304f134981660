"""The `paths:` globs of file-aware memories: which memories are about a given file.

Globs are relative to the project root; `**` crosses folders (and matches none), `*` and `?` stay
within one folder name, as in .gitignore and most editors.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from pathlib import Path


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


def memories_for_file(file: str, project: Path, pairs: list[tuple[str, list[str]]]) -> list[str]:
    """The ids of the memories whose `paths` globs match `file` (absolute, or relative to `project`);
    a file outside the project matches nothing."""
    given = Path(file)
    if given.is_absolute():
        try:
            rel = given.resolve().relative_to(project.resolve()).as_posix()
        except ValueError:
            return []
    else:
        rel = given.as_posix()
    return [mem_id for mem_id, globs in pairs if any(glob_match(g, rel) for g in globs)]
