"""Neighbours in time and session: a memory written in the same session just before or after a
strong match gets a share of that match's score.

An agent writes a session's memories one after another; the answer to a question is often the
memory next to the one that matches it best (the question asked, then its answer: "How long have
you been married?" -> "5 years already!"). A memory's thread is the session that wrote it (the
`session` of `written_by`, which the server, the CLI and the hooks stamp on their own), else its
`source` (an import's, or a file written before the stamp existed); only memories with a thread and
a `created` time take part, and adjacency is by `created` (ties by id: ULIDs are minted in order
within a process, so write order survives several writes in one second) within that thread, never
by file order or rowid.

Only candidates of the query are raised: a neighbour that matches nothing of it gains nothing, so
"a hit that matches nothing of the query is not a result" (query.MIN_SHARE) holds here too. Letting
neighbours that matched nothing in as hits was measured and not kept: +0.5 / +0.6 points of LoCoMo
R@5 / R@10 on the tuning conversations, for an exception to that rule (docs/recall-eval.md,
"Neighbours in time"). It is bounded: the `SEEDS` best matches pass a share on, each to `WINDOW`
memories either side, and every neighbour is found by an indexed step (`Index.neighbours`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from memory_mcp.index.schema import RowFilter

# How many of the best matches pass a share on, how far either side, and how much of their score.
# Chosen on LoCoMo conversations 0-4 only (benchmarks/tune_neighbours.py): R@5 + R@10 is flat within two
# points from 3 to 20 seeds at a window of 2 and shares of 0.4-0.6; at 5 seeds and 0.5, a window of 1
# gave 65.3 / 73.6 against 67.9 / 77.2 (docs/recall-eval.md, "Neighbours in time").
SEEDS = 10
WINDOW = 2
SHARE = 0.5


class NeighbourIndex(Protocol):
    """The part of `memory_mcp.index.db.Index` this module uses."""

    def neighbours(self, rowids: Iterable[int], window: int, where: RowFilter | None = None
                   ) -> dict[int, list[int]]: ...


def spread(index: NeighbourIndex, fused: dict[int, float], where: RowFilter | None = None,
           seeds: int | None = None, window: int | None = None, share: float | None = None) -> dict[int, float]:
    """`fused` with each neighbour of the `seeds` best entries that is itself an entry raised by
    `share` x that entry's score (the largest such share when several matches border one memory).
    Deterministic: the seeds are taken by score, then rowid. The settings default to the module's."""
    seeds, window, share = (SEEDS if seeds is None else seeds, WINDOW if window is None else window,
                            SHARE if share is None else share)
    if share <= 0 or seeds <= 0 or window <= 0 or not fused:
        return fused
    top = sorted(fused, key=lambda r: (-fused[r], r))[:seeds]
    gains: dict[int, float] = {}
    for seed, near in index.neighbours(top, window, where).items():
        for rid in near:
            if rid in fused:
                gains[rid] = max(gains.get(rid, 0.0), share * fused[seed])
    if not gains:
        return fused
    out = dict(fused)
    for rid, gain in gains.items():
        out[rid] += gain
    return out
