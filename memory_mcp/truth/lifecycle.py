"""The state machine and supersede chains. Pure rules over Memory objects; the store does the I/O."""

from __future__ import annotations

from collections.abc import Callable

from memory_mcp.truth import words
from memory_mcp.truth.errors import InvalidSupersede, InvalidTransition, ReasonRequired
from memory_mcp.truth.model import Memory, State

# The one table of allowed moves. Purge is not a state: it is allowed from archived or deprecated.
ALLOWED: dict[State, frozenset[State]] = {
    State.ACTIVE: frozenset({State.ARCHIVED, State.DEPRECATED}),
    State.ARCHIVED: frozenset({State.ACTIVE, State.DEPRECATED}),
    State.DEPRECATED: frozenset({State.ACTIVE}),
}
PURGEABLE = frozenset({State.ARCHIVED, State.DEPRECATED})
CHAIN_LIMIT = 10
# Feedback at or below this withholds a memory from every answer (ranking.withheld); the index's
# hidden set is written with it too, so it lives here, below both.
WITHHOLD_AT = -0.5


def _allowed_text(state: State) -> str:
    return " or ".join(sorted(s.value for s in ALLOWED[state]))


def transition(mem: Memory, to: State, reason: str, now: str) -> list[str]:
    """Move `mem` to state `to` in place; returns notes for the caller. Raises on a refused move."""
    if to not in ALLOWED[mem.state]:
        raise InvalidTransition(
            f"memory {mem.id} is {mem.state.value}; from {mem.state.value} it can move to "
            f"{_allowed_text(mem.state)}, not {to.value}.")
    notes: list[str] = []
    if to == State.DEPRECATED:
        if not reason.strip():
            raise ReasonRequired("deprecating needs a reason: say why the memory is wrong or obsolete.")
        mem.deprecated_reason = " ".join(reason.split())
    if to == State.ACTIVE:
        mem.deprecated_reason = None
        if mem.superseded_by:
            notes.append(f"{mem.id} was superseded by {mem.superseded_by}; both are now active, "
                         f"resolve them with {words.op('resolve')} if they disagree.")
            mem.superseded_by = None
    mem.state = to
    mem.updated = now
    return notes


def check_purge(mem: Memory) -> None:
    """Purge only from the buffer states, so an active memory is never one call from deletion."""
    if mem.state not in PURGEABLE:
        raise InvalidTransition(
            f"memory {mem.id} is {mem.state.value}; purge works only on archived or deprecated memories. "
            "Archive or deprecate it first.")


def check_supersede(winner_id: str, loser: Memory, superseded_by: Callable[[str], str | None]) -> None:
    """Refuse a supersede of a memory by itself, of one another memory already supersedes (the chain
    would fork), or one that would close a cycle."""
    loser_id = loser.id
    if winner_id == loser_id:
        raise InvalidSupersede(f"memory {winner_id} cannot supersede itself.")
    if loser.superseded_by and loser.superseded_by != winner_id:
        raise InvalidSupersede(
            f"{loser_id} is already superseded by {loser.superseded_by}; supersede that one instead "
            "(the newest memory of a chain is the one to replace).")
    seen = {winner_id}
    current = superseded_by(winner_id)
    while current and current not in seen:
        if current == loser_id:
            raise InvalidSupersede(
                f"{loser_id} already supersedes {winner_id} (directly or through a chain); "
                "superseding it back would form a cycle.")
        seen.add(current)
        current = superseded_by(current)


def apply_supersede(winner: Memory, loser: Memory, now: str) -> None:
    """Record that `winner` replaces `loser`: the loser is archived (a deprecated one stays deprecated)."""
    loser.superseded_by = winner.id
    if loser.state == State.ACTIVE:
        loser.state = State.ARCHIVED
    loser.updated = now
    if loser.id not in winner.supersedes:
        winner.supersedes.append(loser.id)
    for a, b in ((winner, loser), (loser, winner)):
        if b.id in a.conflicts_with:
            a.conflicts_with.remove(b.id)


def walk(start: str, step: Callable[[str], list[str]], limit: int = CHAIN_LIMIT) -> list[str]:
    """Ids reachable from `start` through `step`, breadth first, at most `limit` hops, cycle-safe."""
    out: list[str] = []
    seen = {start}
    frontier = [start]
    for _ in range(limit):
        nxt: list[str] = []
        for node in frontier:
            for other in step(node):
                if other not in seen:
                    seen.add(other)
                    out.append(other)
                    nxt.append(other)
        if not nxt:
            break
        frontier = nxt
    return out
