"""Where each memory shown came from and where it stands with the person: the git author of the
version shown (shown, never trusted) and its standing (`truth/standing.py`), for the hooks, the
digest and recall; and keeping the facts behind them current.

The author comes from the index, never from a git call at hook time: after each reconcile that
finds HEAD moved, one `git log` over the commits since the last one read fills the index's
`authors` table (blob -> first author), so a store of 10,000 memories pays for its history once
and then only for its new commits; a commit this process made is recorded by the call that made it
(`own_commits`), with no git at all. The standing comes from the person's record in their config
folder (`authorship`), keyed by id and blob.

Standard library (and the index) only on the read side: the hooks import it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memory_mcp.app import authorship
from memory_mcp.index import authors, flagged
from memory_mcp.index.db import Index
from memory_mcp.truth import teams
from memory_mcp.truth.recall import Hit
from memory_mcp.truth.roots import memory_home
from memory_mcp.truth.standing import ACCEPTED, OWN, REJECTED, UNACCEPTED, rank

if TYPE_CHECKING:
    from memory_mcp.vcs.history import History


def refresh(root: Path, index: Index, history: History, seen: bool) -> bool:
    """Bring the index's authors up to HEAD (one `git log` since the last commit read, only when
    HEAD moved) and, the first time this version sees the store, accept what it holds (`seen`: the
    caller knows it was seen). Returns whether the store is seen now."""
    head = history.head_seen()
    if head and head != index.get_meta(authors.AUTHORS_HEAD):
        found = history.blob_authors(index.get_meta(authors.AUTHORS_HEAD) or "")
        with index.transaction():
            authors.add(index.conn, found)
            index.set_meta(authors.AUTHORS_HEAD, head)
            index.set_meta(authors.PERSON_EMAIL, history.identity_email())
        if teams.is_team_store(root, memory_home()):
            accept_by_rule(root, index, {blob for blob, *_ in found})
    if seen:
        return True
    # A team store is never taken as it is: what teammates wrote waits for `accept` (or the rule).
    authorship.take_baseline(root, [] if teams.is_team_store(root, memory_home()) else held(index))
    return True


def accept_by_rule(root: Path, index: Index, blobs: set[str]) -> None:
    """Accept the versions among `blobs` whose author the person's rule for the team store at `root`
    names (`teams.accepts`: all, some e-mails, or none, the default). A version they rejected stays
    rejected; one they or the rule accepted stays so."""
    rule = teams.accepts(root)
    if rule == teams.ACCEPT_NONE or not blobs:
        return
    picked = [(v.id, v.blob) for v in authors.versions(index.conn).values()
              if v.blob in blobs and v.email and (rule == teams.ACCEPT_ALL or v.email.lower() in rule)]
    authorship.mark_new(picked, ACCEPTED)


def own_commits(index: Index, history: History) -> None:
    """Record the authors of the commits this process made (`History.authored`) as `refresh` would
    read them back, without its `git log` and `git var`: each whose parent is the last commit the
    table holds (a commit someone else made between is left to `refresh`, which then reads them
    all). A write's next call, and a one-shot command after a write, start two gits fewer."""
    made, history.authored = history.authored, []
    at = index.get_meta(authors.AUTHORS_HEAD)
    rows: list[tuple[str, str, str, str, str]] = []
    email = None
    for c in made:
        if at and c.parent == at:
            rows += [(blob, c.name, c.email, c.date, c.subject) for blob in c.blobs]
            at, email = c.commit, c.email
    if email is not None and at is not None:
        with index.transaction():
            authors.add(index.conn, rows)
            index.set_meta(authors.AUTHORS_HEAD, at)
            index.set_meta(authors.PERSON_EMAIL, email)  # the author of our commits: `identity_email`


def held(index: Index) -> Iterator[authorship.Version]:
    """Every memory version the index holds, read when first asked for: `take_baseline` asks only
    the first time this version sees the store, and every process's first call passes it."""
    yield from ((v.id, v.blob) for v in authors.versions(index.conn).values())


def carry(made: list[tuple[authorship.Version | None, authorship.Version]]) -> None:
    """Mark each version this machine made (`made`: (the version it was made from, or None for a new
    memory; the new version)) with the standing of the one it was made from; a new memory is the
    person's own. So a feedback, a field set or a hand edit on a memory someone else wrote leaves it
    as accepted as it was: the text and globs in it are still theirs."""
    with authorship.Reader() as reader:
        marks = reader.standings(old for old, _ in made if old is not None)
    by: dict[str, list[authorship.Version]] = {}
    for old, new in made:
        standing = OWN if old is None else marks.get(old, UNACCEPTED)
        if standing != UNACCEPTED:
            by.setdefault(standing, []).append(new)
    for standing, versions in by.items():
        authorship.mark(versions, standing)


def hand_edited(index: Index, history: History, paths: list[str]) -> None:
    """Carry the standing of the committed version of each file edited by hand on this machine to
    its new version (`carry`); a file git has no version of is a new memory, the person's own."""
    now = authors.versions(index.conn, paths)
    if not now:
        return
    committed = history.head_blobs(list(now))
    carry([((v.id, committed[p]) if p in committed else None, (v.id, v.blob)) for p, v in now.items()])


def annotate(index: Index, hits: list[Hit], reader: authorship.Reader) -> list[Hit]:
    """`hits` with their author (when the version is not the person's), standing and what in their text
    tries to steer the model (`flagged`) set, rejected ones left out. The hits are the caller's own,
    just made by a search: set in place (a copy of each cost a recall about 0.05 ms)."""
    if not hits:
        return hits
    found = authors.versions(index.conn, [h.path for h in hits])
    tries = flagged.kinds(index.conn, [h.path for h in hits])
    me = index.get_meta(authors.PERSON_EMAIL) or ""
    marks = reader.standings((v.id, v.blob) for v in found.values())
    out = []
    for h in hits:
        v = found.get(h.path)
        standing = marks.get((v.id, v.blob), UNACCEPTED) if v else UNACCEPTED
        if standing == REJECTED:
            continue
        h.author = v.name if v and v.email != me and standing != OWN else ""
        h.standing, h.flagged = standing, tries.get(h.path, [])
        out.append(h)
    return out


def ranker(reader: authorship.Reader) -> Callable[[list[tuple[str, str]]], list[int]]:
    """The digest's place of each version by its standing (`standing.rank`)."""
    def places(versions: list[tuple[str, str]]) -> list[int]:
        marks = reader.standings(versions)
        return [rank(marks.get(v, UNACCEPTED)) for v in versions]
    return places
