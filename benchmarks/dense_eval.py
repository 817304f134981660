#!/usr/bin/env python3
"""The optional dense signal on the recall evaluation sets: lexical against lexical + vectors, same run.

    python benchmarks/dense_eval.py --model use [--alphas 0.1,0.2,0.3,0.4] [--sets ...] [--out FILE]

Each corpus is a real memory store, as in recall_eval.py; its vectors are computed the way
`memory-mcp reindex --vectors` computes them (`Store.embed_missing`), and every question goes
through `Store.search` twice or more on the same store: with MEMORY_MCP_VECTORS=off (the lexical
baseline) and with the model at each fusion weight (MEMORY_MCP_VECTORS_ALPHA). The weight is chosen
on LoCoMo conversations 0-4 only (best R@5 + R@10); held-out 5-9 and the paragraph sets are reported
at that weight. Also measured: the embed rate (texts/s), the mean query time with and without the
dense signal, and the stored bytes per memory.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import recall_eval as ev  # noqa: E402

from memory_mcp.app.store import Store  # noqa: E402
from memory_mcp.recall import vectors  # noqa: E402
from memory_mcp.truth import files as mfiles  # noqa: E402
from memory_mcp.truth.model import Memory, compose_body  # noqa: E402

KMAX = max(ev.KS)


class Corpus:
    """One store of `docs` with its vectors, searched under different settings."""

    def __init__(self, docs: list[str], model: str, timing: dict[str, float]) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="dense-eval-")
        root = Path(self.tmp.name) / "store"
        self.store = Store.open(root)
        for i, text in enumerate(docs):
            mem = Memory(id=ev._ulid(i), body=compose_body(text, None))
            (root / "memories" / f"m{i:05d}.md").write_text(mfiles.serialize(mem), encoding="utf-8")
        self.store.reindex()
        self.doc = {ev._ulid(i): i for i in range(len(docs))}
        os.environ[vectors.ENV] = model
        t0 = time.perf_counter()
        self.store.embed_missing()
        timing["embed_s"] = timing.get("embed_s", 0.0) + time.perf_counter() - t0
        timing["embedded"] = timing.get("embedded", 0) + len(docs)
        conn = self.store.index().conn
        size = conn.execute("SELECT sum(length(vec) + length(content_key) + length(model)), count(*)"
                            " FROM vectors").fetchone()
        timing["bytes"] = timing.get("bytes", 0) + size[0]
        timing["vectors"] = timing.get("vectors", 0) + size[1]

    def searcher(self, model: str, alpha: float | None, timing: dict[str, float], label: str) -> ev.Searcher:
        def search(q: str, k: int) -> list[int]:
            os.environ[vectors.ENV] = model if alpha is not None else "off"
            os.environ[vectors.ALPHA_ENV] = "" if alpha is None else str(alpha)
            t0 = time.perf_counter()
            hits = self.store.search(q, k)
            timing[f"{label}_s"] = timing.get(f"{label}_s", 0.0) + time.perf_counter() - t0
            timing[f"{label}_n"] = timing.get(f"{label}_n", 0) + 1
            return [self.doc[h.id] for h in hits]
        return search

    def close(self) -> None:
        self.store.close()
        self.tmp.cleanup()


def _settings(alphas: list[float]) -> list[tuple[str, float | None]]:
    return [("lexical", None), *[(f"a={a}", a) for a in alphas]]


def locomo(eval_dir: Path, model: str, alphas: list[float], timing: dict[str, float]) -> dict:
    convs, _ = ev.load_locomo(eval_dir)
    rows: dict[str, list[tuple]] = {name: [] for name, _ in _settings(alphas)}
    for ci, conv in enumerate(convs):
        corpus = Corpus(conv.docs, model, timing)
        try:
            for i, (name, alpha) in enumerate(_settings(alphas)):
                # Only the first dense pass embeds its queries; the others find them cached.
                label = "lexical" if alpha is None else "dense" if i == 1 else "dense_cached"
                search = corpus.searcher(model, alpha, timing, label)
                for q in conv.questions:
                    ranked = [conv.dia_ids[i] for i in search(q["question"], KMAX)]
                    rec = {v: {k: ev.recall_at(ranked, q[v], k) for k in ev.KS} for v in ("orig", "corr")}
                    rows[name].append((ci, q["category"], rec))
        finally:
            corpus.close()
        print(f"locomo conversation {ci} done", file=sys.stderr, flush=True)
    out = {}
    for name, rs in rows.items():
        out[name] = {"tuned": ev.aggregate_locomo([r for r in rs if r[0] in ev.TUNED_ON])["orig"]["overall"],
                     "held-out": ev.aggregate_locomo([r for r in rs if r[0] not in ev.TUNED_ON])["orig"]["overall"]}
    return out


def locomo_at_scale(eval_dir: Path, model: str, alphas: list[float], size: int, timing: dict[str, float]) -> dict:
    """The weight checked on a store of `size` memories: every LoCoMo conversation's turns in one
    store, topped up with the perf harness's generated notes, so each question competes with the
    other nine conversations and with unrelated memories, as in a store an agent has used for long."""
    import random

    from perf import memory_text

    convs, _ = ev.load_locomo(eval_dir)
    docs: list[str] = []
    gold_of: list[str | None] = []  # a document's "conversation:dia_id", None for a generated note
    for ci, conv in enumerate(convs):
        docs += conv.docs
        gold_of += [f"{ci}:{d}" for d in conv.dia_ids]
    rng = random.Random(7)
    while len(docs) < size:
        _, title, content = memory_text(rng)
        docs.append(f"{title}\n\n{content}")
        gold_of.append(None)
    corpus = Corpus(docs, model, timing)
    rows: dict[str, list[tuple]] = {name: [] for name, _ in _settings(alphas)}
    try:
        for i, (name, alpha) in enumerate(_settings(alphas)):
            label = "lexical" if alpha is None else "dense" if i == 1 else "dense_cached"
            search = corpus.searcher(model, alpha, timing, label)
            for ci, conv in enumerate(convs):
                for q in conv.questions:
                    ranked = [g for g in (gold_of[d] for d in search(q["question"], KMAX)) if g]
                    gold = {v: [f"{ci}:{g}" for g in q[v]] for v in ("orig", "corr")}
                    rec = {v: {k: ev.recall_at(ranked, gold[v], k) for k in ev.KS} for v in ("orig", "corr")}
                    rows[name].append((ci, q["category"], rec))
    finally:
        corpus.close()
    return {name: {"store": len(docs),
                   "tuned": ev.aggregate_locomo([r for r in rs if r[0] in ev.TUNED_ON])["orig"]["overall"],
                   "held-out": ev.aggregate_locomo([r for r in rs if r[0] not in ev.TUNED_ON])["orig"]["overall"]}
            for name, rs in rows.items()}


def squad(eval_dir: Path, rel: str, model: str, alpha: float, timing: dict[str, float]) -> dict:
    paras, qs = ev.load_squad(eval_dir / rel)
    corpus = Corpus(paras, model, timing)
    out = {}
    try:
        for name, a in (("lexical", None), (f"a={alpha}", alpha)):
            search = corpus.searcher(model, a, timing, "lexical" if a is None else "dense")
            out[name] = ev.eval_squad(paras, qs, lambda _docs, s=search: (s, lambda: None))
    finally:
        corpus.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=sorted(vectors.MODELS), required=True)
    ap.add_argument("--alphas", default="0.1,0.2,0.3,0.4")
    ap.add_argument("--eval-dir", type=Path, default=ev.REPO.parent / "shared" / "eval")
    ap.add_argument("--sets", default="locomo,xquad-en,xquad-ru,korquad")
    ap.add_argument("--at-scale", type=int, default=0, metavar="N",
                    help="also check the weights on one store of N memories (all LoCoMo plus generated notes)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if not vectors.installed(args.model):
        print(f"{vectors.MODELS[args.model].dist} is not installed", file=sys.stderr)
        return 2
    alphas = [float(a) for a in args.alphas.split(",")]
    sets = args.sets.split(",")
    timing: dict[str, float] = {}
    res: dict = {"model": args.model, "tuned_on_locomo_conversations": ev.TUNED_ON}
    chosen = vectors.MODELS[args.model].alpha
    if "locomo" in sets:
        res["locomo"] = loc = locomo(args.eval_dir, args.model, alphas, timing)
        chosen = max(alphas, key=lambda a: loc[f"a={a}"]["tuned"]["R@5"] + loc[f"a={a}"]["tuned"]["R@10"])
    res["alpha"] = chosen
    if args.at_scale:
        res["locomo_at_scale"] = locomo_at_scale(args.eval_dir, args.model, alphas, args.at_scale, timing)
    for name, rel in ev.SQUAD_SETS.items():
        if name in sets:
            res[name] = squad(args.eval_dir, rel, args.model, chosen, timing)
    res["cost"] = {
        "embed_texts_per_s": round(timing["embedded"] / timing["embed_s"], 1),
        "query_ms_lexical": round(1000 * timing["lexical_s"] / timing["lexical_n"], 2),
        "query_ms_dense": round(1000 * timing["dense_s"] / timing["dense_n"], 2),
        "query_ms_dense_query_vector_cached": round(1000 * timing.get("dense_cached_s", 0) / max(1, timing.get("dense_cached_n", 0)), 2),
        "bytes_per_memory": round(timing["bytes"] / timing["vectors"]),
    }
    print(json.dumps(res, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(res, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
