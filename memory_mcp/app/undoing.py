"""Undo one commit of memory files (the local page's "undo"): each file it changed goes back to
what the commit before held, as one new commit, never a rewrite of history. Refused, with nothing
written, when a file it touched has changed since (a hand edit, a later write): that change is
newer than the one undone and is never lost."""

from __future__ import annotations

from memory_mcp.app.access import put_file
from memory_mcp.app.session import Session
from memory_mcp.index import flagged
from memory_mcp.index.db import Index
from memory_mcp.truth import files, injection
from memory_mcp.truth.dictionary import DICTIONARY
from memory_mcp.truth.errors import InvalidArgument, NotFound, ParseError, Stale
from memory_mcp.truth.layout import MEMORIES
from memory_mcp.truth.results import UndoResult
from memory_mcp.truth.standing import blob_sha


def undo(session: Session, commit: str) -> UndoResult:
    """Put back what each file `commit` changed held before it, as one commit `undo: <subject>`."""
    if not commit or len(commit) > 64 or any(c not in "0123456789abcdef" for c in commit.lower()):
        raise InvalidArgument("commit must be a commit id (hexadecimal).")
    with session.call(write=True) as index:
        history = session.history
        found = history.commit_changes(commit)
        if found is None:
            raise NotFound(f"no commit {commit} in the store's history.")
        made, changes = found
        if not changes:
            raise InvalidArgument(f"commit {commit[:12]} changed no file; there is nothing to undo.")
        outside = [c.path for c in changes if not (c.path.startswith(f"{MEMORIES}/") or c.path == DICTIONARY)]
        if outside:
            raise InvalidArgument(f"commit {commit[:12]} changed files other than memories ({outside[0]}); "
                                  "undo it with git.")
        for c in changes:
            path = session.root / c.path
            now = blob_sha(path.read_bytes()) if path.is_file() else None
            if now != c.after:
                raise Stale(f"{c.path} has changed since commit {made.commit[:12]} ({made.message}); nothing was "
                            "undone. Change it back by hand on its page, or with git.")
        old = {c.path: history.blob(c.before) for c in changes if c.before is not None}
        history.check_idle()
        with index.transaction():
            for c in changes:
                _put_back(session, index, c.path, old.get(c.path))
        paths = [c.path for c in changes]
        sha = history.commit_paths(paths, f"undo: {made.message}"[:200], history.memory_ids(made.commit) or [],
                                   f"undoes: {made.commit}")
        return UndoResult(commit=sha, undone=made.commit, paths=paths,
                          message=f"undid {made.commit[:12]} ({made.message})")


def _put_back(session: Session, index: Index, rel: str, data: bytes | None) -> None:
    """Write (or delete, for None) one file and index it as it now is, in the caller's transaction,
    so the next reconcile finds no hand edit."""
    path = session.root / rel
    if data is None:
        path.unlink(missing_ok=True)
        index.remove_path(rel)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    stat = put_file(path, data)
    if rel == DICTIONARY:
        return  # the dictionary is read afresh by the next call
    try:
        text = files.decode(data)
        mem = files.parse(text, rel)
    except ParseError as e:
        index.set_file(rel, stat, str(e))
        return
    index.upsert(rel, mem, session.dictionary.normalise_all(mem.entities)[0], stat)
    flagged.record(index.conn, rel, injection.scan(text))  # a version put back is flagged as any other
