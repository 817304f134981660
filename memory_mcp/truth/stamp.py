"""Who wrote a memory's version, and where: the `written_by` frontmatter field.

Set by the process that writes, never by a tool's caller: the MCP server (the client's `clientInfo`
name and a session id it mints for each connection), the CLI (`cli`, an id per command), the hooks
(`claude-code`, Claude Code's own session id) and `memory-mcp ui` (`ui`, an id per run). Where is the host and the project the session serves:
its name, branch and HEAD commit at that moment (`vcs/project.py` reads them from git's files).

A store is shared with a team through sync, so the field holds names, never paths: the host's short
name (no domain), the project as its remote's host and path (`github.com/org/app`, no user or
password) or, without a network remote, its folder's name. `source` stays what the caller gave.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path

from memory_mcp.truth.ulids import new_ulid

# The keys of `written_by`, in the order files write them.
KEYS = ("client", "session", "host", "project", "branch", "commit")
VALUE_MAX = 120
CLI = "cli"
HOOK = "claude-code"
UI = "ui"
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


@dataclass(frozen=True)
class Writer:
    """Who is writing: the client and its session, and the folder the session works in (whose
    project, branch and commit the stamp records; None: no project)."""

    client: str
    session: str
    folder: Path | None = None


def new_session() -> str:
    """A session id for a connection or a command: a ULID, so ids sort by when sessions began."""
    return new_ulid()


def clean(value: object) -> str:
    """A value as the field holds it: one line of UTF-8 without control characters, at most VALUE_MAX
    long. A folder name that is not UTF-8 (its bytes as surrogates) keeps them as \\xNN escapes, as
    the index's origin claim writes such a path: the index and the file hold only UTF-8."""
    text = str(value)
    try:
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file name decodes to
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return _UNSAFE.sub(" ", text).strip()[:VALUE_MAX]


@functools.lru_cache(maxsize=1)
def host() -> str:
    """This machine's short host name (the part before the first dot); "" when it has none."""
    try:
        if hasattr(os, "uname"):
            # The name gethostname(2) gives, without importing socket (2 ms of a one-shot `remember`).
            name = os.uname().nodename
        else:  # Windows
            import socket

            name = socket.gethostname()
        return clean(name.split(".")[0])
    except OSError:
        return ""


@dataclass(frozen=True)
class Place:
    """Where a session writes: the project's shared name, its branch ("" when HEAD is detached) and
    its HEAD commit ("" outside git or before the first commit)."""

    project: str = ""
    branch: str = ""
    commit: str = ""


def stamp(writer: Writer, place: Place) -> dict[str, str]:
    """The `written_by` value for a write by `writer` at `place`, empty values left out."""
    values = (writer.client, writer.session, host(), place.project, place.branch, place.commit)
    return {key: text for key, value in zip(KEYS, values, strict=True) if (text := clean(value))}
