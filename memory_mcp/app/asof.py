"""Recall as of a date: the store as git held it at the end of that day (UTC), in an index of its own.

The memory files of the last first-parent commit at or before the day's end are read from git
(no checkout) and indexed into `.derived/asof/<commit>.sqlite3`, built once per commit and kept for
the next question about the same days; the live index is never touched. Only the `KEEP` most
recently used commit indexes stay: the others are deleted when a new one is built.

Hits say what happened to them since, from today's index: `changed_since` (the memory's text,
title, state, type, trust or entities are no longer what they were then, or it is gone) and
`superseded_since` (another memory replaced it after that day).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import threading
import time
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path

from memory_mcp.index.db import Index
from memory_mcp.index.reconcile import DUPLICATE_ID
from memory_mcp.index.schema import FileStat, Row
from memory_mcp.index.walk import walkable
from memory_mcp.truth import files
from memory_mcp.truth.dictionary import DICTIONARY, Dictionary
from memory_mcp.truth.errors import BeforeHistory, InvalidArgument, ParseError
from memory_mcp.truth.model import parse_iso
from memory_mcp.truth.recall import Coverage, Hit
from memory_mcp.truth.secrets import scan
from memory_mcp.truth.standing import blob_sha
from memory_mcp.vcs.commits import Commit
from memory_mcp.vcs.history import History

FOLDER = "asof"
KEEP = 4
# ... and at most this many bytes of them besides the one in use (an index of 10,000 memories is
# about 60 MB): a count alone let a large store keep gigabytes of past days.
KEEP_BYTES = 256 * 1024 * 1024
# A build a killed process left half done is removed at the next build when its process is gone,
# else once it is this old (a live one is far quicker; its pid may have been reused meanwhile).
STALE_BUILD_SECONDS = 3600
_BUILDER = re.compile(r"\.(\d+)-\d+\.building")
_BUILT = "asof_commit"
_DICTIONARY_TEXT = "asof_dictionary"
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True)
class Snapshot:
    """The day asked about, the end of it (UTC, ISO 8601), and the commit that answers for it."""

    day: str
    until: str
    commit: Commit

    @property
    def moment(self) -> datetime:
        """The end of the day, as the ranking's "now"."""
        return datetime.fromisoformat(self.until)


def end_of_day(text: str, today: date) -> str:
    """The last second of the UTC day `text` (YYYY-MM-DD) names, ISO 8601. A malformed date, a day
    that does not exist, or a day after `today` is refused."""
    if not _DAY.fullmatch(text.strip()):
        raise InvalidArgument(f"as_of must be a day written YYYY-MM-DD (UTC), for example 2026-10-01; got {text!r}.")
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise InvalidArgument(f"as_of {text} is not a day of the calendar; write a real date, YYYY-MM-DD.") from None
    if day > today:
        raise InvalidArgument(f"as_of {day} is in the future (today is {today}, UTC); leave as_of out for "
                              "the store as it is now.")
    return f"{day.isoformat()}T23:59:59+00:00"


def snapshot(history: History, text: str) -> Snapshot:
    """The commit that answers for the day `text`: the last first-parent one at or before its end."""
    until = end_of_day(text, datetime.now(UTC).date())
    commit = history.commit_at(until)
    if commit is None:
        raise BeforeHistory(f"the store has no commit on or before {until[:10]} (UTC): its git history starts "
                            "later. Ask about a later day, or leave as_of out.")
    return Snapshot(until[:10], until, commit)


def open_index(history: History, derived: Path, commit: str, live: Index,
               live_dictionary: Dictionary) -> tuple[Index, Dictionary]:
    """The index of the memory files at `commit` (built on first use, from a copy of `live`, the
    index of today's files, when `live_dictionary` is the dictionary of then) and the dictionary of then."""
    folder = derived / FOLDER
    path = folder / f"{commit}.sqlite3"
    index = _complete(path, commit)
    if index is None:
        _build(history, folder, path, commit, live, live_dictionary)
        _prune(folder, path)
        index = _complete(path, commit)
        if index is None:
            raise InvalidArgument(f"the index of commit {commit[:12]} could not be opened after it was built; "
                                  f"delete {folder} and ask again.")
    else:
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: pruning keeps it
    return index, Dictionary.parse(index.get_meta(_DICTIONARY_TEXT) or "")


def _complete(path: Path, commit: str) -> Index | None:
    """The index at `path` when a build of `commit` finished in it, else None."""
    index = Index.open_existing(path)
    if index is not None and index.get_meta(_BUILT) != commit:
        index.close()
        return None
    return index


def _build(history: History, folder: Path, path: Path, commit: str, live: Index, live_dictionary: Dictionary) -> None:
    """Index the memory files of `commit` into a file of this build's own, then move it to `path`
    in one step (two processes that build the same commit at once each finish a whole index).

    Most files of a recent commit are as they are today: starting from a copy of the live index,
    only the files whose bytes differ are parsed and indexed again (a 10k store from scratch took
    longer than the 10 s a first question may cost). With another dictionary then, entities were
    normalised otherwise, so every file is indexed from the commit."""
    folder.mkdir(parents=True, exist_ok=True)
    _prune_builds(folder)  # before the copy below: a killed build's copy would sit beside this one
    building = folder / f"{commit}.{os.getpid()}-{threading.get_ident()}.building"
    text = (history.blob(commit, DICTIONARY) or b"").decode("utf-8", errors="replace")
    dictionary = Dictionary.parse(text)
    if dictionary.version == live_dictionary.version:
        live.copy_to(building)
    index = Index.open(building)
    try:
        with index.transaction():
            index.forget_usage()
            _apply(index, dictionary, [(rel, data) for rel, data in history.files_at(commit) if walkable(rel)])
            index.set_meta(_DICTIONARY_TEXT, text)
            index.set_meta(_BUILT, commit)
        # One file, no WAL beside it, before it is renamed into place.
        index.conn.execute("PRAGMA journal_mode=DELETE")
    except BaseException:
        index.close()
        building.unlink(missing_ok=True)
        raise
    index.close()
    os.replace(building, path)


def _apply(index: Index, dictionary: Dictionary, wanted: list[tuple[str, bytes]]) -> None:
    """Make `index` hold exactly the files `wanted`: the others removed first (a memory moved since
    must not look like a duplicate of itself), then each file whose bytes differ indexed again."""
    known = index.file_stats()
    for rel in known.keys() - {rel for rel, _ in wanted}:
        index.remove_path(rel)
    for rel, data in wanted:
        sha = hashlib.sha256(data).hexdigest()
        prev = known.get(rel)
        if prev is None or prev[0].sha != sha:
            index.remove_path(rel)
            _add(index, dictionary, rel, data, FileStat(0, len(data), sha, blob=blob_sha(data)))


def _add(index: Index, dictionary: Dictionary, rel: str, data: bytes, stat: FileStat) -> None:
    """Index one file as the commit holds it; an unreadable one is recorded with its reason."""
    try:
        text = files.decode(data)
        mem = files.parse(text, rel)
    except ParseError as e:
        index.set_file(rel, stat, e.message)
        return
    other = index.get(mem.id)
    if other is not None:
        # Files come in path order, so which of two copies answers is the same on every build.
        index.set_file(rel, stat, f"{DUPLICATE_ID} {mem.id}: {other.path} has it too")
        return
    shown = files.masked(mem) if scan(text) else mem
    entities, _ = dictionary.normalise_all(shown.entities)
    index.upsert(rel, shown, entities, stat)


def _prune(folder: Path, keep: Path) -> None:
    """Keep `keep` and, most recently used first, the other commit indexes while they are fewer
    than KEEP and total at most KEEP_BYTES; delete the rest and the builds left by dead processes."""
    count, size = 1, 0
    for old in sorted((p for p in folder.glob("*.sqlite3") if p != keep), key=_mtime, reverse=True):
        size += _size(old)
        count += 1
        if count > KEEP or size > KEEP_BYTES:
            with contextlib.suppress(OSError):
                old.unlink()
    _prune_builds(folder)


def _prune_builds(folder: Path) -> None:
    """Delete the files of builds whose process is gone (a kill mid-build leaves a whole index copy)
    or that are older than STALE_BUILD_SECONDS."""
    for build in folder.glob("*.building*"):
        found = _BUILDER.search(build.name)
        if (found and not _alive(int(found.group(1)))) or time.time() - _mtime(build) > STALE_BUILD_SECONDS:
            with contextlib.suppress(OSError):
                build.unlink()


def _alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, under another user
    return True


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def annotate(hits: list[Hit], then: Index, now: Index, snap: Snapshot, history: History) -> list[Hit]:
    """`hits` (from the index of then) with `changed_since` and `superseded_since` from today's."""
    out: list[Hit] = []
    for h in hits:
        old, cur = then.get(h.id), now.get(h.id)
        if old is None:
            out.append(h)
            continue
        changed = superseded = None
        if cur is None or _differs(old, cur):
            changed = _later(cur.updated if cur else None, snap) or history.changed_after(snap.commit.commit, old.path)
        if cur is not None and cur.superseded_by and cur.superseded_by != old.superseded_by:
            newer = now.get(cur.superseded_by)
            superseded = _later(newer.created if newer else None, snap) or _later(cur.updated, snap) or changed
        out.append(replace(h, changed_since=changed, superseded_since=superseded))
    return out


def _differs(old: Row, cur: Row) -> bool:
    return (old.body_sha, old.title, old.state, old.type, old.trust, old.entities, old.superseded_by) != (
        cur.body_sha, cur.title, cur.state, cur.type, cur.trust, cur.entities, cur.superseded_by)


def _later(stamp: str | None, snap: Snapshot) -> str | None:
    """`stamp` when it is after the end of the snapshot's day (a file's own date may be older than
    the commit that changed it: a hand edit keeps its `updated`)."""
    when = parse_iso(stamp)
    return stamp if when is not None and when > snap.moment else None


def coverage(index: Index, snap: Snapshot) -> Coverage:
    """What an answer as of `snap` covers: every memory file of its commit."""
    unindexed = len(index.errors())
    note = f"as of {snap.day}: the store at commit {snap.commit.commit[:12]} ({snap.commit.date})"
    if unindexed:
        note += f"; {unindexed} file(s) of that commit could not be indexed"
    return Coverage(indexed=index.count(), unindexed=unindexed, changed=0, complete=unindexed == 0, note=note)
