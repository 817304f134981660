"""What the store may read, and how it names it: a path as printable text (a name that is not UTF-8
shown escaped) and a regular file read without following a link or blocking on a pipe.

The rule for every file the store reads (memory files, dictionary.md, files to import): one hostile
file is refused with its reason, and never reads anything outside the store or hangs a call."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from memory_mcp.truth.errors import ParseError


def shown(rel: str) -> str:
    """A path as text SQLite, git and a terminal take: a name that is not UTF-8 (Python holds its
    bytes as lone surrogates) gets its bytes as \\x escapes."""
    if rel.isascii():
        return rel
    try:
        rel.encode("utf-8")
        return rel
    except UnicodeEncodeError:
        return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


SYMLINK_REASON = "symbolic link: not followed (links may lead out of the store)"


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them; ParseError saying why not
    when it is a link, a folder, a pipe or a device.

    Opened without following a link and without blocking, then checked with fstat: reading a named
    pipe waits for a writer forever, a device such as /dev/zero never ends, and a file swapped for
    either after a stat would still be opened."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise ParseError(SYMLINK_REASON) from None
        raise
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = "a named pipe" if stat.S_ISFIFO(mode) else "a folder" if stat.S_ISDIR(mode) else "a device or socket"
            raise ParseError(f"not a regular file ({what}); not read")
        return f.read(limit)
