"""`memory-mcp accept`'s use cases: list the memories the person has not accepted (or rejected),
and record their decision on the version the store holds now. The decisions go to the person's
record in their config folder (`authorship`), never to the store; no MCP tool calls these."""

from __future__ import annotations

from dataclasses import replace

from memory_mcp.app import authorship
from memory_mcp.app.session import Session
from memory_mcp.index import authors
from memory_mcp.recall import search
from memory_mcp.truth.errors import InvalidArgument
from memory_mcp.truth.recall import Hit
from memory_mcp.truth.standing import ACCEPTED, OWN, REJECTED, UNACCEPTED

# What a decision does: the mark it sets, or the mark it takes off (un-reject).
DECISIONS = ("accept", "reject", "unreject")


def listed(session: Session, standing: str = UNACCEPTED) -> list[Hit]:
    """The memories whose version now is `standing` (unaccepted, or rejected), newest first, each with
    its git author as `Name <email>` (shown, never trusted)."""
    with session.call() as index, authorship.Reader() as reader:
        found = authors.versions(index.conn)
        marks = reader.standings((v.id, v.blob) for v in found.values())
        picked = [v for v in found.values() if marks.get((v.id, v.blob), UNACCEPTED) == standing]
        out = []
        for v in picked:
            row = index.get_by_path(v.path)
            if row is not None:
                who = f"{v.name} <{v.email}>" if v.name else "(not committed)"
                hit = search.hit(row, 0.0)
                # The date the list shows: the memory's own, else its commit's.
                out.append(replace(hit, author=who, standing=standing, updated=hit.updated or v.date or None))
    return sorted(out, key=lambda h: (h.updated or "", h.id), reverse=True)


def decide(session: Session, decision: str, ids: list[str]) -> list[str]:
    """Apply `decision` (DECISIONS) to the version the store holds now of each of `ids`; a line for
    each saying what happened. Unknown ids are refused before anything is recorded."""
    if decision not in DECISIONS:
        raise InvalidArgument(f"decision must be one of {', '.join(DECISIONS)}.")
    with session.call() as index, authorship.Reader() as reader:
        found = {v.id: v for v in authors.versions(index.conn).values()}
        missing = [i for i in ids if i not in found]
        if missing:
            raise InvalidArgument(f"no memory with id {', '.join(missing[:5])} in {session.root}; "
                                  "`memory-mcp accept` lists the memories not accepted yet.")
        versions = [(i, found[i].blob) for i in dict.fromkeys(ids)]
        marks = reader.standings(versions)
    lines: list[str] = []
    todo: list[authorship.Version] = []
    for version in versions:
        now = marks.get(version, UNACCEPTED)
        if now == OWN:
            lines.append(f"{version[0]}: your own (written on this machine); `memory-mcp forget` retires it")
            continue
        if decision == "unreject" and now != REJECTED:
            lines.append(f"{version[0]}: was not rejected")
            continue
        todo.append(version)
        lines.append(f"{version[0]}: {_done[decision]}")
    if decision == "unreject":
        authorship.unmark(todo, REJECTED)
    else:
        authorship.mark(todo, ACCEPTED if decision == "accept" else REJECTED)
    return lines


_done = {"accept": "accepted", "reject": "rejected: hidden from your hooks, digest and recall",
         "unreject": "no longer rejected (not accepted either: shown marked)"}


def accept_by_rule(session: Session) -> None:
    """Apply the person's rule for a team store (`teams.accepts`) to every memory it holds now."""
    from memory_mcp.app import provenance

    with session.call() as index:
        provenance.accept_by_rule(session.root, index, {v.blob for v in authors.versions(index.conn).values()})


def accept_held(session: Session) -> int:
    """Accept every memory the store holds now (trusting it); how many versions that was."""
    with session.call() as index:
        held = [(v.id, v.blob) for v in authors.versions(index.conn).values()]
    authorship.take_baseline(session.root, held, again=True)
    return len(held)
