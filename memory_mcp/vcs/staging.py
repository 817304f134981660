"""The scratch index and the objects a commit is built from: what changed among a write's paths,
staged into git's index format or written as objects and packs, and the person's index options
(a split index past SPLIT_INDEX_BYTES). A part of `History` (it inherits `StagingOps`), kept apart
so history.py stays about making commits and keeping HEAD."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memory_mcp.truth.logs import log
from memory_mcp.vcs.objects import (
    FILE_MODE,
    Entry,
    ObjectFormat,
    ObjectWriter,
    Snapshot,
    Unsupported,
    empty_snapshot,
    folders_above,
    pack,
    parse_tree,
)
from memory_mcp.vcs.readops import MAX_ARGV_PATHS

# What the .keep file of a pack written for a commit in progress says (`History._write_pack`).
KEEP_REASON = "memory-mcp: commit in progress"
# Objects of one pack written for a bulk commit (a few MB of memory files).
PACK_OBJECTS = 5000
# A person's index from this size on is staged into as a split index (`History._index_options`):
# about 28,000 memories, where rewriting the whole index starts to show in a write's latency.
SPLIT_INDEX_BYTES = 4 << 20
# From this many paths in one commit git only hashes them into the person's index and the objects
# are written here (`commit_paths`); fewer, git writes them as `git add` does.
BULK_STAGE = 100
# The config keys commits depend on (`StagingOps._settings`): the identity (and whether the author and
# the committer are named apart), how objects and the index are written, whether a commit must be
# signed or re-encoded.
SETTINGS = (r"^((user|author|committer)\.(name|email)|core\.(sharedrepository|attributesfile|autocrlf|splitindex)|splitindex\..*"
            r"|extensions\.(objectformat|compatobjectformat)|commit\.gpgsign|i18n\.commitencoding)$")


@dataclass(frozen=True)
class ScratchBase:
    """The commit the scratch index was last made to match, its tree, and the index file's
    (inode, mtime, size) right after, to notice a write by anyone else."""

    head: str | None
    tree: str
    stat: tuple[int, int, int] | None


class StagingOps:
    """Staging and object writing, as methods of `History`."""

    root: Path
    git_dir: Path
    common_dir: Path
    _scratch: Path
    _base: ScratchBase | None
    _tip: Snapshot | None
    _writer: ObjectWriter | None
    _oid_hex: int | None
    _keeps: list[Path]
    _split_logged: bool
    _settings_seen: tuple[object, dict[str, str]] | None
    # History's
    _git: Callable[..., str]
    _git_bytes: Callable[..., bytes]
    _head: Callable[[], str | None]
    head_seen: Callable[[], str]  # ReadOps'
    _process_env: Callable[..., dict[str, str]]

    def _config_texts(self, env: dict[str, str]) -> list[bytes]:
        """The bytes of every config file git would read for this store (b"" for one that is missing)."""
        home = Path(env.get("HOME") or Path.home())
        configs = [self.common_dir / "config", self.git_dir / "config.worktree",
                   Path(env.get("GIT_CONFIG_GLOBAL") or home / ".gitconfig"),
                   Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "git" / "config",
                   Path(env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig")]
        texts = []
        for config in configs:
            try:
                texts.append(config.read_bytes())
            except OSError:
                texts.append(b"")
        return texts

    def _index_options(self, index: Path) -> list[str]:
        """`-c core.splitIndex=true` for staging into a person's index of SPLIT_INDEX_BYTES or more,
        unless their configuration says anything about split indexes (then git does as it says).

        Staging one path makes git read and rewrite the whole index: at 100,000 memories 14.8 MB, 84-124
        ms of each write, against 25-35 ms with a split index, which rewrites only the changed entries
        (docs/performance.md). Once split, git keeps the index split whatever its configuration leaves
        unset. The cost: libgit2 cannot read a split index (powerlevel10k's prompt, onefetch), so small
        stores, where the saving is a few milliseconds, keep the format every tool reads."""
        try:
            size = index.stat().st_size
        except OSError:
            return []
        if size < SPLIT_INDEX_BYTES or self._person_sets_split_index():
            return []
        if not self._split_logged:
            self._split_logged = True
            log.info("the git index of %s is %s bytes: staging with core.splitIndex=true (set core.splitIndex "
                     "in the store's git config to choose otherwise)", self.root, size)
        return ["-c", "core.splitIndex=true"]

    def _person_sets_split_index(self) -> bool:
        """Whether any configuration git reads here says anything about split indexes."""
        return any(k == "core.splitindex" or k.startswith("splitindex.") for k in self._settings())

    def _settings(self) -> dict[str, str]:
        """The config values of the keys in SETTINGS that git reads here (lower-case key -> its last
        value; "true" for a key given without one). Asked of `git config` itself (included files, `-c`
        from the environment, a system file wherever git was built to look), once, and again
        whenever a config file or the environment changes (their bytes are the key: a stat could miss
        an edit within the same tick)."""
        env = self._process_env(identity=False)  # the fallback identity is decided from these values
        key = (tuple(sorted((k, v) for k, v in env.items() if k.startswith("GIT_CONFIG") or k in ("HOME", "XDG_CONFIG_HOME"))),
               tuple(self._config_texts(env)))
        if self._settings_seen is None or self._settings_seen[0] != key:
            said = self._git_bytes("config", "-z", "--get-regexp", SETTINGS, check=False, env=env)
            values: dict[str, str] = {}
            for record in said.decode("utf-8", "replace").split("\0"):
                name, newline, value = record.partition("\n")
                if name:
                    values[name.lower()] = value if newline else "true"
            self._settings_seen = (key, values)
        return self._settings_seen[1]

    def _snapshot(self, paths: list[str]) -> Snapshot:
        """The last commit (ours, or HEAD when we have none yet) with every folder `paths` need read.
        A process's first commit reads HEAD from git's files and its root tree and those folders in
        one `git cat-file` (a one-shot `memory-mcp remember` started a git for each of the three
        before); HEAD read wrong would only fail the ref update's compare-and-swap, which retries."""
        snap = self._tip
        rows: list[tuple[str, bytes, bytes] | None] = []
        if snap is None:
            head = self.head_seen() or self._head()  # "" when unborn or unreadable: git decides
            if head is None:
                snap = empty_snapshot(self._object_format())
            else:
                missing = Snapshot(head, b"").missing(paths)[1:]  # the root ("") comes first
                found = self._batch([f"{head}^{{tree}}", *(f"{head}:{d}" for d in missing)])
                if found[0] is None:
                    raise Unsupported("HEAD's tree cannot be read")
                snap = Snapshot(head, bytes.fromhex(found[0][0]), {"": parse_tree(found[0][2], self._raw_length())})
                rows = found[1:]
            self._tip = snap
        missing = snap.missing(paths)
        if missing and snap.commit and not rows:
            rows = self._batch([f"{snap.commit}:{d}" for d in missing])
        for k, d in enumerate(missing):
            row = rows[k] if rows else None
            if row is not None and row[1] != b"tree":
                raise Unsupported(f"{d} is not a folder in HEAD")
            snap.folders[d] = parse_tree(row[2], self._raw_length()) if row is not None else {}
        return snap

    def _changes(self, paths: list[str]) -> dict[str, Entry | None]:
        """Each path's new tree entry (its blob written) or None when it is gone; Unsupported when git
        would store something else than the file's bytes as a plain file (attributes, line-ending
        conversion, a symbolic link, an executable) or the objects live where we do not write."""
        if not self._plain_objects():
            raise Unsupported("the repository's configuration asks git to write objects")
        home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
        attributes = {self.git_dir / "info" / "attributes", home / "git" / "attributes"}
        # Folders first, then paths: 10,000 new files in a few month folders made 39,000 Path objects.
        folders = {d for p in paths for d in folders_above(p)}
        attributes.update(self.root / d / ".gitattributes" for d in folders)
        if any(a.exists() for a in attributes):
            raise Unsupported("git attributes may filter the files")
        writer = self._object_writer()
        bulk = len(paths) >= BULK_STAGE
        changes: dict[str, Entry | None] = {}
        blobs: list[tuple[bytes, bytes]] = []
        for path in paths:
            full = self.root / path
            try:
                st = full.lstat()
            except (FileNotFoundError, NotADirectoryError):
                changes[path] = None
                continue
            if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o111:
                raise Unsupported(f"{path} is not a plain file")
            if bulk:
                body = full.read_bytes()
                blobs.append((b"blob", body))
                changes[path] = (FILE_MODE, writer.fmt.object_id(b"blob", body))
                if len(blobs) == PACK_OBJECTS:  # an import of 100,000 files is not held in memory at once
                    self._write_pack(blobs)
                    blobs = []
            else:
                changes[path] = (FILE_MODE, writer.write(b"blob", full.read_bytes()))
        if blobs:
            self._write_pack(blobs)
        return changes

    def _drop_stale_keeps(self) -> None:
        """Remove the .keep files a commit of ours left when it was killed. Called under the store's
        lock (app/lock.py), which every commit of ours holds while it writes packs: no other is in progress."""
        for keep in (self.common_dir / "objects" / "pack").glob("pack-*.keep"):
            with contextlib.suppress(OSError):
                if keep.read_bytes().strip() == KEEP_REASON.encode():
                    keep.unlink()

    def _write_pack(self, objects: list[tuple[bytes, bytes]]) -> None:
        """Write `objects` as one pack, kept (a .keep file) until the commit names them: a
        `git repack -a -d` meanwhile would delete a pack of objects nothing refers to yet."""
        if not self._keeps:
            self._drop_stale_keeps()
        out = self._git("index-pack", "--stdin", f"--keep={KEEP_REASON}",
                        data=pack(objects, self._object_writer().fmt))
        for line in out.splitlines():
            kind, _, name = line.partition("\t")
            if kind == "keep":
                self._keeps.append(self.common_dir / "objects" / "pack" / f"pack-{name}.keep")

    def _plain_objects(self) -> bool:
        """Whether objects written here are what git would write: no object folder set by the
        environment, no shared-repository permissions, no second hash, no line-ending conversion."""
        if os.environ.get("GIT_OBJECT_DIRECTORY"):
            return False
        settings = self._settings()
        return not (settings.get("core.sharedrepository", "").lower() not in ("", "false", "no", "off", "umask")
                    or settings.get("core.attributesfile") or settings.get("extensions.compatobjectformat")
                    or settings.get("core.autocrlf", "false").lower() not in ("false", "0", "no", "off"))

    def _object_format(self) -> ObjectFormat:
        return ObjectFormat("sha256" if self._oid_length() == 64 else "sha1")

    def _raw_length(self) -> int:
        return self._oid_length() // 2

    def _object_writer(self) -> ObjectWriter:
        if self._writer is None:
            self._writer = ObjectWriter(self.common_dir / "objects", self._object_format())
        return self._writer

    def _batch(self, names: list[str]) -> list[tuple[str, bytes, bytes] | None]:
        """Objects by name through one `git cat-file --batch`: (id, kind, body), or None where missing."""
        out = self._git_bytes("cat-file", "--batch", data=b"".join(n.encode() + b"\n" for n in names))
        found: list[tuple[str, bytes, bytes] | None] = []
        at = 0
        for _ in names:
            end = out.index(b"\n", at)
            header = out[at:end].split(b" ")
            if len(header) != 3:  # "<name> missing" (or ambiguous)
                found.append(None)
                at = end + 1
                continue
            size = int(header[2])
            found.append((header[0].decode(), header[1], out[end + 1:end + 1 + size]))
            at = end + 1 + size + 1  # the content is followed by a newline
        return found

    def _staged(self, paths: list[str], staging: Path) -> bytes:
        """The entries of `paths` in `staging`, the copy of the person's index they were just staged in
        as `git add` / `git rm --cached` would (their other staged work stays as it is), as
        `update-index -z --index-info` input; a path gone from the index becomes a mode-0 entry."""
        staged = self._index_entries(paths, staging)
        removed = self._removed_entry()
        return b"".join(staged.get(p, removed) + b"\t" + p + b"\0" for p in (p.encode() for p in paths))

    def _removed_entry(self) -> bytes:
        """The `update-index --index-info` mode and id that remove a path from the index."""
        return b"0 " + b"0" * self._oid_length()

    def _index_entries(self, paths: list[str], index: Path) -> dict[bytes, bytes]:
        """path -> b"mode sha" of the entries of `paths` in the index file `index`."""
        # ls-files takes no path list from a file: many paths read the whole index instead.
        out = self._git_bytes("ls-files", "-s", "-z", "--", *(paths if len(paths) <= MAX_ARGV_PATHS else []),
                              index=index)
        entries: dict[bytes, bytes] = {}
        for record in out.split(b"\0"):
            if record:
                info, path = record.split(b"\t", 1)
                mode, sha, _ = info.split(b" ")
                entries[path] = mode + b" " + sha
        return entries

    def _stage_what_we_read(self, changes: dict[str, Entry | None], staging: Path, options: list[str]) -> None:
        """After `update-index --info-only`: where git hashed another version of a file than the one
        read for the commit (changed or deleted in between), stage the commit's entry instead, whose
        object exists, so the person's index and the commit agree and name no missing object."""
        entries = self._index_entries(list(changes), staging)
        removed = self._removed_entry()
        fixes = []
        for path, entry in changes.items():
            ours = removed if entry is None else entry[0] + b" " + entry[1].hex().encode()
            held = entries.get(path.encode())
            if held is not None and held != ours:
                fixes.append(ours + b"\t" + path.encode() + b"\0")
        if fixes:
            self._git(*options, "update-index", "-z", "--index-info", data=b"".join(fixes), index=staging)

    def _scratch_base(self) -> tuple[str | None, str]:
        """HEAD and its tree, with the scratch index holding that tree. Rebuilt when anything but this
        object wrote the scratch index since its last commit (another server process, a crash)."""
        base = self._base
        if base is not None and base.stat == self._scratch_stat():
            return base.head, base.tree
        head = self._head()
        if head:
            self._git("read-tree", head, scratch=True)
            tree = self._git("rev-parse", f"{head}^{{tree}}").strip()
        else:
            self._git("read-tree", "--empty", scratch=True)
            tree = self._git("hash-object", "-t", "tree", "--stdin", data=b"").strip()
        self._base = ScratchBase(head, tree, self._scratch_stat())
        return head, tree

    def _oid_length(self) -> int:
        """Hex digits of an object id here: 40 (SHA-1), or 64 in a SHA-256 repository."""
        if self._oid_hex is None:
            # Set when the repository is made and never changed after (git refuses to convert one).
            self._oid_hex = 64 if self._settings().get("extensions.objectformat", "").lower() == "sha256" else 40
        return self._oid_hex

    def _scratch_stat(self) -> tuple[int, int, int] | None:
        try:
            st = self._scratch.stat()
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def _drop_scratch(self) -> None:
        self._base = None
        self._scratch.unlink(missing_ok=True)
