#!/usr/bin/env python3
"""Why-questions: does recall put the decision that gives the reason first?

    python benchmarks/why_eval.py [--boost 1.0,1.5,2.0] [--source "session 2026-12-02"]

tests/data/why_set.json (our own prose, English, Russian, Korean): each scenario is an old decision,
the decision that superseded it and says why (the gold answer), and distractors (facts, episodes,
knowledge) that share its words. All scenarios go into one store through `Store.remember` (the
replacement with `supersedes`, so the old one is archived and the chain is on the hit), and each
question is asked through `Store.search`. R@1 per language and overall, for each value of
`search.WHY_DECISION_BOOST` given (1.0 = no preference for decisions).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memory_mcp.app.store import Store  # noqa: E402
from memory_mcp.recall import search  # noqa: E402

WHY_SET = REPO / "tests" / "data" / "why_set.json"


def build(root: Path, source: str = "") -> tuple[Store, list[tuple[str, str, str]]]:
    """The store of every scenario, and (language, question, gold id) for each question. `source`:
    given to every memory, as one session writing them all in order would."""
    store = Store.open(root)
    asked: list[tuple[str, str, str]] = []
    for sc in json.loads(WHY_SET.read_text(encoding="utf-8"))["scenarios"]:
        ids: dict[str, str] = {}
        for m in sc["memories"]:
            ids[m["key"]] = store.remember(m["text"], type=m["type"], source=source,
                                           supersedes=[ids[k] for k in m.get("supersedes", [])]).id
        asked += [(sc["lang"], q["q"], ids[q["gold"]]) for q in sc["questions"]]
    return store, asked


def r_at_1(store: Store, asked: list[tuple[str, str, str]]) -> dict[str, float]:
    hits: dict[str, list[int]] = {}
    for lang, q, gold in asked:
        top = store.search(q, 5)
        for key in (lang, "all"):
            hits.setdefault(key, []).append(int(bool(top) and top[0].id == gold))
    return {k: round(100 * sum(v) / len(v), 1) for k, v in hits.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--boost", default="1.0,1.25,1.5,2.0", help="values of WHY_DECISION_BOOST to measure")
    ap.add_argument("--source", default="", help="one source for every memory (e.g. 'session 2026-12-02')")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="why-eval-") as tmp:
        store, asked = build(Path(tmp) / "store", args.source)
        print(f"{len(asked)} questions; R@1 (%) by language")
        for boost in (float(b) for b in args.boost.split(",")):
            search.WHY_DECISION_BOOST = boost
            print(f"boost {boost:4.2f}: {r_at_1(store, asked)}")
        store.close()


if __name__ == "__main__":
    main()
