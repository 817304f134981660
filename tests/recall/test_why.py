"""Why-questions: a recalled decision carries what it replaced, and the decision that says why comes first."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT

from memory_mcp.adapters import render
from memory_mcp.app.store import Store
from memory_mcp.recall import search

WHY_SET = ROOT / "tests" / "data" / "why_set.json"


def test_a_recalled_decision_carries_the_chain_it_replaced_bounded(tmp_path: Path) -> None:
    s = Store.open(tmp_path / "store")
    ids = [s.remember("Package manager of the web workspace: npm").id]
    for name in ["yarn", "pnpm", "bun", "pnpm again", "yarn berry", "npm workspaces", "pnpm for good"]:
        ids.append(s.remember(f"Package manager of the web workspace: {name}", type="decision",
                              supersedes=[ids[-1]]).id)
    hit = s.recall("package manager web workspace").results[0]
    assert hit.id == ids[-1]
    assert [r.id for r in hit.supersedes] == ids[-2::-1][:search.CHAIN_ON_HIT]
    assert hit.supersedes[0].title == "Package manager of the web workspace: npm workspaces"
    assert f"replaced: [{ids[-2]}] Package manager of the web workspace: npm workspaces" in render.recall(
        s.recall("package manager web workspace"))
    s.close()


def test_why_questions_put_the_decision_that_says_why_first(tmp_path: Path) -> None:
    """One scenario of each language of tests/data/why_set.json, in one store: the decision first."""
    scenarios = json.loads(WHY_SET.read_text(encoding="utf-8"))["scenarios"]
    chosen = [next(sc for sc in scenarios if sc["lang"] == lang) for lang in ("en", "ru", "ko")]
    s = Store.open(tmp_path / "store")
    asked = []
    for sc in chosen:
        keys: dict[str, str] = {}
        for m in sc["memories"]:
            keys[m["key"]] = s.remember(m["text"], type=m["type"],
                                        supersedes=[keys[k] for k in m.get("supersedes", [])]).id
        asked += [(q["q"], keys[q["gold"]], keys["old"]) for q in sc["questions"]]
    for question, gold, old in asked:
        top = s.recall(question).results[0]
        assert top.id == gold, question
        if top.type == "decision":
            assert [r.id for r in top.supersedes] == [old]
    s.close()
