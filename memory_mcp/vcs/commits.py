"""What the history reads return: a commit, the files it changed and the commits that deleted files
(`ReadOps`). Apart from readops.py, which every process that opens a store imports, because Python
3.11 spends about 0.35 ms building each of these frozen data classes and a write or a recall, a new
process at the command line, builds none of them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Commit:
    commit: str
    date: str
    message: str


@dataclass(frozen=True)
class Change:
    """One file a commit changed: its blob before and after (None where the file was absent)."""

    path: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class Deletion:
    """One commit that deleted files: its sha, its committer date (ISO 8601) and the deleted paths."""

    commit: str
    date: str
    paths: tuple[str, ...]
