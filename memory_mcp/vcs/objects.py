"""git objects written from Python: loose blobs and trees, and a commit's tree rebuilt along a few paths.

A write changes one file, so its commit needs new trees only for that file's folder and the folders
above it; every other tree is the parent commit's, by id. Building those few trees here, from the
parent's trees read once and kept, saves the git processes that copying HEAD into an index and
writing its whole tree would start. No git runs here (history.py reads the trees it lacks)."""

from __future__ import annotations

import hashlib
import os
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import BinaryIO

TREE_MODE = b"40000"
FILE_MODE = b"100644"
# Folders of one commit kept between writes: every folder a store's writes touch, in practice (a
# month folder a write, and its parents); past this many the cache starts again from what one needs.
MAX_FOLDERS = 256
# git writes loose objects at zlib's fastest level (core.looseCompression's default).
LOOSE_LEVEL = 1

Entry = tuple[bytes, bytes]  # (mode, raw object id)
Folder = dict[bytes, Entry]  # name -> entry


class Unsupported(Exception):
    """A change this writer leaves to git's own index: a path that is not a plain file or gone, a file
    where a folder is (or the reverse), a name git would refuse."""


@dataclass(frozen=True)
class ObjectFormat:
    """The repository's hash: sha1, or sha256 (`extensions.objectFormat`)."""

    name: str

    @property
    def raw_length(self) -> int:
        return hashlib.new(self.name).digest_size

    def object_id(self, kind: bytes, body: bytes) -> bytes:
        """The raw id git gives an object of `kind` with this `body`."""
        return hashlib.new(self.name, _framed(kind, body)).digest()


def _framed(kind: bytes, body: bytes) -> bytes:
    return kind + b" " + str(len(body)).encode() + b"\0" + body


@dataclass(frozen=True)
class ObjectWriter:
    """Writes loose objects into `objects` as git does: zlib of "kind size\\0body" at
    objects/xx/yyyy..., through a temporary file renamed into place, read-only."""

    objects: Path
    fmt: ObjectFormat

    def write(self, kind: bytes, body: bytes) -> bytes:
        """Store the object (unless its loose file exists) and return its raw id."""
        data = _framed(kind, body)
        oid = hashlib.new(self.fmt.name, data).digest()
        hexid = oid.hex()
        path = self.objects / hexid[:2] / hexid[2:]
        if path.exists():
            return oid
        tmp = path.parent / f"tmp_obj_memory_mcp_{os.getpid()}_{os.urandom(4).hex()}"
        try:
            with _create(tmp) as out:
                out.write(zlib.compress(data, LOOSE_LEVEL))
            os.chmod(tmp, 0o444)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        return oid


_PACK_TYPES = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}


def pack(objects: list[tuple[bytes, bytes]], fmt: ObjectFormat) -> bytes:
    """A version 2 pack of `objects` ((kind, body), none deltified), for `git index-pack --stdin`.

    One file for a batch instead of a loose file each: creating, chmod-ing and renaming 10,000
    small files in 256 folders took 2.8 s in a plain loop on the ext4 of these machines, and each
    loose object is a file more for the background repack to gather."""
    out = [b"PACK", (2).to_bytes(4, "big"), len(objects).to_bytes(4, "big")]
    for kind, body in objects:
        size = len(body)
        head = bytearray([(_PACK_TYPES[kind] << 4) | (size & 0x0F)])
        size >>= 4
        while size:
            head[-1] |= 0x80
            head.append(size & 0x7F)
            size >>= 7
        out += [bytes(head), zlib.compress(body, LOOSE_LEVEL)]
    data = b"".join(out)
    return data + hashlib.new(fmt.name, data).digest()


def _create(tmp: Path, attempts: int = 5) -> BinaryIO:
    """`tmp` opened for writing, new, its fan-out folder made when missing.

    The background `git repack -d` ends in `git prune-packed`, which removes every fan-out folder it
    empties: one can vanish between our mkdir and our open (a 10,000-memory agent build failed so,
    FileNotFoundError on objects/37/tmp_obj_...). Git's own object writer makes the folder again and
    retries; so does this. Once the temporary file is in it, the folder is not empty and stays."""
    for _ in range(attempts - 1):
        try:
            return open(tmp, "xb")
        except FileNotFoundError:
            tmp.parent.mkdir(exist_ok=True)
    return open(tmp, "xb")


def parse_tree(body: bytes, raw_length: int) -> Folder:
    """A tree object's entries by name."""
    entries: Folder = {}
    at, end = 0, len(body)
    while at < end:
        space = body.index(b" ", at)
        nul = body.index(b"\0", space)
        entries[body[space + 1:nul]] = (body[at:space], body[nul + 1:nul + 1 + raw_length])
        at = nul + 1 + raw_length
    return entries


def tree_body(entries: Folder) -> bytes:
    """A tree object's body, its entries in git's order (a folder sorts as if its name ended in /)."""
    def key(name: bytes) -> bytes:
        return name + b"/" if entries[name][0] == TREE_MODE else name
    return b"".join(entries[n][0] + b" " + n + b"\0" + entries[n][1] for n in sorted(entries, key=key))


def folders_above(path: str) -> list[str]:
    """The folders holding `path`, innermost first, ending with the root ("")."""
    parts = path.split("/")
    if any(p in ("", ".", "..") or p.lower() == ".git" or "\n" in p or "\0" in p for p in parts):
        raise Unsupported(f"a path git would refuse: {path!r}")
    return ["/".join(parts[:k]) for k in range(len(parts) - 1, -1, -1)]


@dataclass
class Snapshot:
    """One commit's root tree id and the folders of it read so far, by path ("" is the root)."""

    commit: str | None
    root: bytes
    folders: dict[str, Folder] = field(default_factory=dict)

    def missing(self, paths: list[str]) -> list[str]:
        """The folders a change to `paths` needs that are not read yet, outermost first."""
        wanted = {d for p in paths for d in folders_above(p)} - self.folders.keys()
        return sorted(wanted, key=lambda d: (d.count("/") + bool(d), d))

    def entry(self, path: str) -> Entry | None:
        """The entry at `path` in the folders read (None when its folder holds nothing of that name)."""
        folder, _, name = path.rpartition("/")
        return self.folders.get(folder, {}).get(name.encode())

    def changed(self, changes: dict[str, Entry | None], writer: ObjectWriter) -> Snapshot:
        """The snapshot of a commit with `changes` (path -> new entry, or None for a deletion) applied:
        new trees written for the changed folders and their parents, the rest shared. Every folder the
        paths need must be read (`missing`). Its `commit` is None until the commit is made."""
        new: dict[str, Folder] = {}

        def folder(d: str) -> Folder:
            if d not in new:
                new[d] = dict(self.folders[d])
            return new[d]

        for path, entry in changes.items():
            above = folders_above(path)
            name = path.rpartition("/")[2].encode()
            held = folder(above[0])
            old = held.get(name)
            if old is not None and old[0] == TREE_MODE:
                raise Unsupported(f"{path} is a folder in the commit")
            if entry is None:
                held.pop(name, None)
            else:
                held[name] = entry
            for d in above[1:]:
                folder(d)
        for d in sorted(new, key=lambda d: d.count("/") + bool(d), reverse=True):
            if not d:
                continue
            parent_dir, _, base = d.rpartition("/")
            parent, name = new[parent_dir], base.encode()
            old = parent.get(name)
            if old is not None and old[0] != TREE_MODE:
                raise Unsupported(f"{d} is a file in the commit, not a folder")
            if new[d]:
                parent[name] = (TREE_MODE, writer.write(b"tree", tree_body(new[d])))
            else:
                parent.pop(name, None)  # git keeps no empty folder
        root = writer.write(b"tree", tree_body(new[""]))
        kept = self.folders if len(self.folders) + len(new) <= MAX_FOLDERS else {}
        return Snapshot(None, root, {**kept, **new})


def empty_snapshot(fmt: ObjectFormat) -> Snapshot:
    """The snapshot of a branch with no commit yet: an empty root."""
    return Snapshot(None, fmt.object_id(b"tree", b""), {"": {}})


def commit_body(tree: str, parent: str | None, author: str, committer: str, when: float, message: str) -> bytes:
    """A commit object's body as `git commit-tree` writes it: `author` and `committer` are
    "Name <email>", dated `when` (seconds) in the local time zone, the message kept verbatim."""
    seconds = int(when)
    offset = _offset_minutes(seconds)
    stamp = f"{seconds} {'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    lines = [f"tree {tree}"] + ([f"parent {parent}"] if parent else []) + [
        f"author {author} {stamp}", f"committer {committer} {stamp}"]
    return ("\n".join(lines) + "\n\n" + message).encode()


def _offset_minutes(seconds: int) -> int:
    """The local time zone's offset from UTC at `seconds`, in minutes, as git writes it."""
    return time.localtime(seconds).tm_gmtoff // 60


def author_date(when: float) -> str:
    """The author date of a `commit_body` dated `when`, as `git log --format=%aI` prints it."""
    seconds = int(when)
    return datetime.fromtimestamp(seconds, timezone(timedelta(minutes=_offset_minutes(seconds)))).isoformat()


def subject(message: str) -> str:
    """A commit message's subject as `git log --format=%s` prints it: its first paragraph (blank
    lines before it skipped), each line's trailing white space dropped, the lines joined by a space."""
    lines: list[str] = []
    for line in message.split("\n"):
        kept = line.rstrip()
        if kept:
            lines.append(kept)
        elif lines:
            break
    return " ".join(lines)


@dataclass(frozen=True)
class Authored:
    """A commit made here from Python: what `git log` would say wrote the memory file versions in it
    (`ReadOps.blob_authors`), known without asking it."""

    parent: str | None
    commit: str
    name: str
    email: str
    date: str  # as %aI
    blobs: tuple[str, ...]  # the new versions of files under memories/, as hex ids
    subject: str = ""  # as %s (`subject`)
