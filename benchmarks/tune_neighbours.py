#!/usr/bin/env python3
"""Tuning helper for the neighbour signal (`memory_mcp/recall/neighbours.py`); development tool, not part of
the reported evaluation.

Indexes LoCoMo's tuning conversations (`recall_eval.TUNED_ON`, never the held-out ones) with each
turn's session as `source` and its time as `created`, records every question's fused scores before
the neighbour step once, then scores a grid of (seeds, window, share) offline with
`neighbours.spread` itself, over the neighbours the index gives.

    python benchmarks/tune_neighbours.py [--top 15]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import recall_eval as ev  # noqa: E402

from memory_mcp.index.db import Index  # noqa: E402
from memory_mcp.index.schema import FileStat  # noqa: E402
from memory_mcp.recall import neighbours as nb  # noqa: E402
from memory_mcp.recall import query as mq  # noqa: E402

POOL = 400  # what Store.search asks the planner for when recall_eval wants 50
MAX_SEEDS, MAX_WINDOW = 20, 3


class Recorded:
    """The neighbours the index gave for the questions' best matches, kept to replay the grid."""

    def __init__(self, links: dict[int, dict[int, list[int]]]) -> None:
        self.links = links  # window -> seed -> neighbours

    def neighbours(self, rowids, window, where=None):  # noqa: ANN001, ANN201 - NeighbourIndex
        return {r: self.links[window][r] for r in rowids if r in self.links[window]}


def collect(conv: ev.Conversation) -> list[tuple[dict[int, float], Recorded, list[str], dict]]:
    """Per question: fused scores before the neighbour step, the recorded neighbours, the rowid ->
    dia_id map and the question."""
    captured: list[dict[int, float]] = []

    def capture(index, fused, where=None, **_):  # noqa: ANN001, ANN202
        captured.append(dict(fused))
        return fused

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        index = Index.open(Path(tmp) / "i.sqlite")
        with index.transaction():
            for i, text in enumerate(conv.docs):
                index.upsert(f"m/{i}.md", ev._memory(f"P{i:016X}", text, conv.meta, i), [], FileStat(0, 0, ""))
        r2d = {r: conv.dia_ids[int(p[2:-3])] for r, p in index.conn.execute("SELECT rowid, path FROM memories")}
        real = nb.spread
        nb.spread = capture
        try:
            for q in conv.questions:
                captured.clear()
                mq.text_scores(index, q["question"], POOL)
                fused = captured[0] if captured else {}
                top = sorted(fused, key=lambda r: (-fused[r], r))[:MAX_SEEDS]
                links = {w: index.neighbours(top, w) for w in range(1, MAX_WINDOW + 1)}
                out.append((fused, Recorded(links), r2d, q))
        finally:
            nb.spread = real
        index.close()
    return out


def score(data: list, seeds: int, window: int, share: float) -> tuple[float, float, float]:
    """LoCoMo R@1 / R@5 / R@10 (%) over `data` with the neighbour step at these settings."""
    sums = [0.0, 0.0, 0.0]
    for fused, rec, r2d, q in data:
        s = nb.spread(rec, fused, None, seeds=seeds, window=window, share=share)
        ranked = [r2d[r] for r, _ in sorted(s.items(), key=lambda kv: (-kv[1], kv[0]))[:10]]
        for i, k in enumerate((1, 5, 10)):
            sums[i] += ev.recall_at(ranked, q["orig"], k)
    return tuple(round(100 * v / len(data), 1) for v in sums)  # type: ignore[return-value]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    convs, _ = ev.load_locomo(ev.REPO.parent / "shared" / "eval")
    t0 = time.time()
    data = [row for ci in ev.TUNED_ON for row in collect(convs[ci])]
    print(f"collected {len(data)} questions in {time.time() - t0:.1f}s", flush=True)
    print("no neighbour step:", score(data, 0, 1, 0.0))
    rows = []
    for seeds, window, share in itertools.product((1, 3, 5, 10, 20), range(1, MAX_WINDOW + 1),
                                                  (0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)):
        rows.append(((seeds, window, share), score(data, seeds, window, share)))
    rows.sort(key=lambda r: r[1][1] + r[1][2], reverse=True)
    for setting, res in rows[: args.top]:
        seeds, window, share = setting
        print(f"seeds {seeds} window {window} share {share:.1f}", "R@1/5/10", res)


if __name__ == "__main__":
    main()
