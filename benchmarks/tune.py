#!/usr/bin/env python3
"""Fusion tuning helper (development tool, not part of the reported evaluation).

Builds each corpus once through the project's Index, records every signal's raw rows per query,
then scores many fusion settings offline. LoCoMo tuning uses conversations 0-4 only
(`recall_eval.TUNED_ON`); the paragraph sets are only checked, never tuned to a grid optimum.

    python benchmarks/tune.py [--sets locomo,xquad-ru,...] [--korquad-every 3]
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
from memory_mcp.recall import planner  # noqa: E402
from memory_mcp.truth.model import Memory, compose_body  # noqa: E402

LIMIT = 100


def collect(docs: list[str], queries: list[str]) -> list[dict[str, list[tuple[int, float]]]]:
    """Per query: signal -> raw rows (doc index, raw score), from the project's Index."""
    with tempfile.TemporaryDirectory() as tmp:
        index = Index.open(Path(tmp) / "i.sqlite")
        with index.transaction():
            for i, text in enumerate(docs):
                index.upsert(f"m/{i}.md", Memory(id=f"P{i:016X}", body=compose_body(text, None)), [], FileStat(0, 0, ""))
        r2d = {r: int(p[2:-3]) for r, p in index.conn.execute("SELECT rowid, path FROM memories")}
        out = []
        for q in queries:
            p = planner.plan(q)
            sig: dict[str, list[tuple[int, float]]] = {}
            if p.words:
                sig["word"] = index.fts("fts_word", planner.fts_or(p.words), LIMIT)
            if p.stems:
                sig["stem"] = index.fts("fts_stem", planner.fts_or(p.stems), LIMIT)
            if p.tri or p.tri_fallback:
                sig["tri"] = index.fts("fts_tri", planner.fts_or(p.tri + p.tri_fallback), LIMIT)
            if p.like:
                n = len(p.like)
                sig["like"] = [(r, -h / n) for r, h in index.like(p.like, LIMIT)]
            out.append({k: [(r2d[r], s) for r, s in v] for k, v in sig.items()})
        index.close()
    return out


def fuse(sig: dict[str, list[tuple[int, float]]], w: dict[str, float], mode: str) -> list[int]:
    total: dict[int, float] = {}
    for name, rows in sig.items():
        wt = w.get(name, 0.0)
        if wt <= 0 or not rows:
            continue
        if mode == "max":
            best = max(-s for _, s in rows) or 1.0
            for d, s in rows:
                total[d] = total.get(d, 0.0) + wt * (-s) / best
        elif mode == "rrf":
            for rank, (d, _) in enumerate(rows):
                total[d] = total.get(d, 0.0) + wt / (60 + rank)
        elif mode == "raw":
            for d, s in rows:
                total[d] = total.get(d, 0.0) + wt * (-s)
    return [d for d, _ in sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))]


def locomo_score(data, w, mode) -> dict[str, float]:
    rs = {k: 0.0 for k in (1, 5, 10)}
    n = 0
    for ids, qs, sigs in data:
        for q, sig in zip(qs, sigs, strict=True):
            ranked = [ids[d] for d in fuse(sig, w, mode)]
            for k in rs:
                rs[k] += ev.recall_at(ranked, q["orig"], k)
            n += 1
    return {f"R@{k}": round(100 * v / n, 1) for k, v in rs.items()}


def squad_score(gold: list[int], sigs, w, mode) -> dict[str, float]:
    r1 = r5 = 0
    for g, sig in zip(gold, sigs, strict=True):
        ranked = fuse(sig, w, mode)[:5]
        r1 += ranked[:1] == [g]
        r5 += g in ranked
    return {"R@1": round(r1 / len(gold), 3), "R@5": round(r5 / len(gold), 3)}


GRID = {
    "word": [0.0, 0.25, 0.5, 1.0],
    "stem": [0.0, 0.5, 1.0],
    "tri": [0.0, 0.2, 0.5],
    "like": [0.0, 0.3],
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="locomo,xquad-en,xquad-ru,korquad")
    ap.add_argument("--korquad-every", type=int, default=3)
    ap.add_argument("--modes", default="max,rrf,raw")
    ap.add_argument("--weights", default="", help="only these settings: w,s,t,l;w,s,t,l")
    ap.add_argument("--colw", default="", help="override bm25 column weights: title,body,entities")
    args = ap.parse_args()
    if args.colw:
        from memory_mcp.index import db as mi

        cw = tuple(float(x) for x in args.colw.split(","))
        for name, (spec, ws) in list(mi.FTS_TABLES.items()):
            mi.FTS_TABLES[name] = (spec, cw[: len(ws)])
    eval_dir = ev.REPO.parent / "shared" / "eval"
    sets = args.sets.split(",")
    cache = {}
    t0 = time.time()
    if "locomo" in sets:
        convs, _ = ev.load_locomo(eval_dir)
        cache["locomo"] = [
            (convs[i].dia_ids, convs[i].questions, collect(convs[i].docs, [q["question"] for q in convs[i].questions]))
            for i in ev.TUNED_ON
        ]
    for name, rel in ev.SQUAD_SETS.items():
        if name in sets:
            paras, qs = ev.load_squad(eval_dir / rel)
            if name == "korquad":
                qs = qs[:: args.korquad_every]
            cache[name] = ([g for _, g in qs], collect(paras, [q for q, _ in qs]))
    print(f"collected in {time.time() - t0:.1f}s", flush=True)
    if args.weights:
        settings = [dict(zip(GRID, map(float, s.split(",")), strict=True)) for s in args.weights.split(";")]
    else:
        settings = [dict(zip(GRID, combo, strict=True)) for combo in itertools.product(*GRID.values())]
        settings = [s for s in settings if s["word"] + s["stem"] > 0]
    rows = []
    for mode in args.modes.split(","):
        for w in settings:
            res = {}
            if "locomo" in cache:
                res["locomo"] = locomo_score(cache["locomo"], w, mode)
            for name in ev.SQUAD_SETS:
                if name in cache:
                    res[name] = squad_score(*cache[name], w, mode)
            rows.append((mode, w, res))
    key = (lambda r: r[2]["locomo"]["R@5"] + r[2]["locomo"]["R@10"]) if "locomo" in cache else (
        lambda r: sum(v["R@1"] for v in r[2].values()))
    rows.sort(key=key, reverse=True)
    for mode, w, res in rows[:25]:
        wtxt = ",".join(f"{v:g}" for v in w.values())
        print(mode, wtxt, " ".join(f"{k}:{'/'.join(str(x) for x in v.values())}" for k, v in res.items()))


if __name__ == "__main__":
    main()
