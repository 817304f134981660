#!/usr/bin/env python3
"""Recall evaluation: LoCoMo (turn level) and question -> paragraph on XQuAD en/ru and KorQuAD.

    python benchmarks/recall_eval.py [--quick] [--out FILE] [--eval-dir DIR] [--stdio]

The data is read at run time from `../shared/eval` (relative to the repository root) or
`--eval-dir`; it is never copied into the repository (its licences forbid that).

Every corpus is built as a real memory store (`memory_mcp.app.store.Store`): the documents are written
as memory files (`memory_mcp.truth.files.serialize`, bodies as `memory_remember` composes them), the
store is reindexed, and every question goes through `Store.search`, i.e. the server's own index,
planner (`memory_mcp.recall.query.text_scores`) and ranking. A "plain FTS5" row is computed in the same run as the floor:
one FTS5 table, OR of the question's tokens, bm25 (porter unicode61 for LoCoMo, unicode61 for
the paragraph sets), as in shared/reference/eval-baselines.md section 5.

`--stdio` adds LoCoMo rows written as an agent writes: each turn through `memory_remember` over stdio
with no `source`, one `memory-mcp serve` per LoCoMo session (benchmarks/locomo_stdio.py), so only the
session the server stamps on its own links a turn to its neighbours.

Metrics:
* LoCoMo: the official turn-level recall@k of snap-research/locomo `task_eval/evaluation.py`:
  per question |gold dia_ids among the top k| / |gold|, a question with no evidence counts 1;
  mean per category and overall; with the original evidence and with the audit's
  `correct_evidence` substituted (locomo10_audit_errors.json).
* XQuAD / KorQuAD: R@1, R@5 (gold paragraph in top k) and MRR@10.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from locomo import CATEGORIES, Conversation, Turn, load_locomo  # noqa: E402

from memory_mcp.app.store import Store  # noqa: E402
from memory_mcp.index.db import Index  # noqa: E402
from memory_mcp.index.schema import FileStat  # noqa: E402
from memory_mcp.recall import query as mquery  # noqa: E402
from memory_mcp.truth import files as mfiles  # noqa: E402
from memory_mcp.truth.model import Memory, compose_body  # noqa: E402

KS = (1, 5, 10, 25, 50)
TUNED_ON = [0, 1, 2, 3, 4]  # LoCoMo conversations used to tune fusion (index into locomo10.json)

# A retriever is built from a list of documents (and, for LoCoMo, each one's source and time when the
# run gives them) and answers (query, k) with document indexes.
Searcher = Callable[[str, int], list[int]]
Builder = Callable[[list[str], "list[Turn] | None"], tuple[Searcher, Callable[[], None]]]


# ----------------------------------------------------------------------------------------------
# Retrievers
# ----------------------------------------------------------------------------------------------


def _ulid(i: int) -> str:
    """A valid, deterministic ULID-shaped id for document `i` (digits are Crockford base32)."""
    return f"01HZZZ{i:020d}"


def _memory(mem_id: str, text: str, meta: list[Turn] | None, i: int) -> Memory:
    """Document `i` as `memory_remember` would write it (with its source and time when given)."""
    if meta is None:
        return Memory(id=mem_id, body=compose_body(text, None))
    return Memory(id=mem_id, body=compose_body(text, None), source=meta[i].source, created=meta[i].created)


def store_builder(docs: list[str], meta: list[Turn] | None = None) -> tuple[Searcher, Callable[[], None]]:
    """Build a memory store holding `docs` (one memory file each) and search it with Store.search."""
    tmp = tempfile.TemporaryDirectory(prefix="recall-eval-")
    root = Path(tmp.name) / "store"
    store = Store.open(root)
    mem_dir = root / "memories"
    for i, text in enumerate(docs):
        mem = _memory(_ulid(i), text, meta, i)
        (mem_dir / f"m{i:05d}.md").write_text(mfiles.serialize(mem), encoding="utf-8")
    store.reindex()
    id_to_doc = {_ulid(i): i for i in range(len(docs))}

    def search(q: str, k: int) -> list[int]:
        return [id_to_doc[h.id] for h in store.search(q, k)]

    def close() -> None:
        store.close()
        tmp.cleanup()

    return search, close


def project_builder(docs: list[str], meta: list[Turn] | None = None) -> tuple[Searcher, Callable[[], None]]:
    """Index `docs` with the project's Index directly and search with query.text_scores.

    The same tables and planner as `store_builder` without files or git: used by the tuning tool
    and by `--direct` for quick iterations. The reported numbers come from `store_builder`."""
    tmp = tempfile.TemporaryDirectory(prefix="recall-eval-")
    index = Index.open(Path(tmp.name) / "index.sqlite")
    stat = FileStat(0, 0, "")
    with index.transaction():
        for i, text in enumerate(docs):
            # compose_body is what memory_remember does with content and no title.
            mem = _memory(f"P{i:016X}", text, meta, i)
            index.upsert(f"m/{i}.md", mem, [], stat)
    rowid_to_doc = {
        rowid: int(path[2:-3]) for rowid, path in index.conn.execute("SELECT rowid, path FROM memories")
    }

    def search(q: str, k: int) -> list[int]:
        scores = mquery.text_scores(index, q, k)
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        return [rowid_to_doc[r] for r, _ in ranked[:k]]

    def close() -> None:
        index.close()
        tmp.cleanup()

    return search, close


_BASE_STOP = frozenset(str.split(
    "a an the and or of to in on at by for with is are was were be been do does did what when where "
    "who whom which why how that this it its as from has have had i you he she they we his her their "
    "my your our"
))


def plain_builder(tokenizer: str) -> Builder:
    """The floor: one FTS5 table, OR of the question's word tokens, ranked by bm25()."""

    def build(docs: list[str], meta: list[Turn] | None = None) -> tuple[Searcher, Callable[[], None]]:
        conn = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE d USING fts5(body, tokenize = '{tokenizer}')")
        conn.executemany("INSERT INTO d(rowid, body) VALUES (?, ?)", [(i, t) for i, t in enumerate(docs)])

        def search(q: str, k: int) -> list[int]:
            toks = [t for t in re.findall(r"[^\W_]+", q.lower()) if t not in _BASE_STOP]
            if not toks:
                return []
            match = " OR ".join(f'"{t}"' for t in dict.fromkeys(toks))
            return [r for (r,) in conn.execute(
                "SELECT rowid FROM d WHERE d MATCH ? ORDER BY bm25(d) LIMIT ?", (match, k))]

        return search, conn.close

    return build


# ----------------------------------------------------------------------------------------------
# LoCoMo
# ----------------------------------------------------------------------------------------------

def recall_at(ranked_ids: list[str], gold: list[str], k: int) -> float:
    if not gold:
        return 1.0  # the official metric counts a question without evidence as recalled
    top = set(ranked_ids[:k])
    return sum(1 for g in gold if g in top) / len(gold)


def locomo_rows(convs: list[Conversation], builder: Builder, which: list[int], with_meta: bool = True) -> list[tuple]:
    """Per question (conversation, category, {variant: {k: recall}}); each question is searched in
    its own conversation's store only. `with_meta`: the turns' memories carry their session as
    `source` and their time as `created` (else neither, as before the neighbour signal)."""
    kmax = max(KS)
    rows = []
    for ci in which:
        conv = convs[ci]
        search, close = builder(conv.docs, conv.meta if with_meta else None)
        try:
            for q in conv.questions:
                ranked = [conv.dia_ids[i] for i in search(q["question"], kmax)]
                rec = {v: {k: recall_at(ranked, q[v], k) for k in KS} for v in ("orig", "corr")}
                rows.append((ci, q["category"], rec))
        finally:
            close()
    return rows


def aggregate_locomo(rows: list[tuple]) -> dict:
    """Mean recall@k (%) by category, over categories 1-4, and overall, for both evidence variants."""
    out: dict = {}
    for variant in ("orig", "corr"):
        res: dict = {}
        groups: dict[str, list] = {"overall": rows, "cat1-4": [r for r in rows if r[1] != 5]}
        for cat, name in CATEGORIES.items():
            groups[f"{cat}:{name}"] = [r for r in rows if r[1] == cat]
        for g, rs in groups.items():
            if rs:
                res[g] = {f"R@{k}": round(100 * sum(r[2][variant][k] for r in rs) / len(rs), 1) for k in KS}
                res[g]["n"] = len(rs)
        out[variant] = res
    return out


# ----------------------------------------------------------------------------------------------
# SQuAD-format sets: question -> paragraph
# ----------------------------------------------------------------------------------------------


def load_squad(path: Path) -> tuple[list[str], list[tuple[str, int]]]:
    data = json.loads(path.read_text(encoding="utf-8-sig"))
    paras: list[str] = []
    qs: list[tuple[str, int]] = []
    for art in data["data"]:
        for p in art["paragraphs"]:
            pid = len(paras)
            paras.append(p["context"].lstrip("\ufeff"))
            for qa in p["qas"]:
                qs.append((qa["question"].lstrip("\ufeff"), pid))
    return paras, qs


def eval_squad(paras: list[str], qs: list[tuple[str, int]], builder: Builder) -> dict:
    search, close = builder(paras, None)
    r1 = r5 = mrr = 0.0
    try:
        for q, gold in qs:
            ranked = search(q, 10)
            if ranked[:1] == [gold]:
                r1 += 1
            if gold in ranked[:5]:
                r5 += 1
            if gold in ranked:
                mrr += 1 / (ranked.index(gold) + 1)
    finally:
        close()
    n = len(qs)
    return {"R@1": round(r1 / n, 3), "R@5": round(r5 / n, 3), "MRR@10": round(mrr / n, 3), "n": n}


# ----------------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------------

SQUAD_SETS = {
    "xquad-en": "multilingual/xquad.en.json",
    "xquad-ru": "multilingual/xquad.ru.json",
    "korquad": "multilingual/KorQuAD_v1.0_dev.json",
}


def run(eval_dir: Path, quick: bool, sets: list[str], baseline: bool, builder: Builder, stdio: bool = False) -> dict:
    results: dict = {"tuned_on_locomo_conversations": TUNED_ON}
    timings: dict[str, float] = {}
    if "locomo" in sets:
        t0 = time.time()
        convs, stats = load_locomo(eval_dir)
        results["locomo_evidence_stats"] = stats
        which = TUNED_ON if quick else list(range(len(convs)))
        loc: dict = {}
        # With the turns' session and time (what the neighbour signal reads), then without them:
        # the difference is what that metadata is worth.
        variants: list[tuple[str, bool, Builder]] = [("project", True, builder), ("project-no-source", False, builder)]
        if stdio:
            from locomo_stdio import stdio_builder

            variants.append(("stdio", True, stdio_builder))  # the turns' sessions pick the server, nothing more
        for label, with_meta, build in variants:
            rows = locomo_rows(convs, build, which, with_meta)
            loc[f"{label}/all" if not quick else f"{label}/tuned"] = aggregate_locomo(rows)
            if not quick:
                # Tuned-on and held-out conversations apart, so overfitting would show.
                loc[f"{label}/tuned"] = aggregate_locomo([r for r in rows if r[0] in TUNED_ON])
                loc[f"{label}/held-out"] = aggregate_locomo([r for r in rows if r[0] not in TUNED_ON])
        if baseline:
            loc["plain-porter/all" if not quick else "plain-porter/tuned"] = aggregate_locomo(
                locomo_rows(convs, plain_builder("porter unicode61"), which))
        results["locomo"] = loc
        timings["locomo"] = time.time() - t0
    for name, rel in SQUAD_SETS.items():
        if name not in sets:
            continue
        t0 = time.time()
        paras, qs = load_squad(eval_dir / rel)
        if quick:
            qs = qs[::4]
        res = {"project": eval_squad(paras, qs, builder)}
        if baseline:
            res["plain-unicode61"] = eval_squad(paras, qs, plain_builder("unicode61"))
        results[name] = res
        timings[name] = time.time() - t0
    results["seconds"] = {k: round(v, 1) for k, v in timings.items()}
    return results


def print_table(res: dict) -> None:
    if "locomo" in res:
        print("LoCoMo turn level, official recall@k (%) — conversations tuned on:", res["tuned_on_locomo_conversations"])
        print(f"{'retriever / evidence':34} {'group':16} " + " ".join(f"{'R@' + str(k):>6}" for k in KS) + "     n")
        for name, r in res["locomo"].items():
            for variant in ("orig", "corr"):
                for g in ("overall", "cat1-4", *[f"{c}:{n}" for c, n in CATEGORIES.items()]):
                    if g not in r[variant]:
                        continue
                    if g != "overall" and not (variant == "orig" and name.startswith("project")):
                        continue  # categories only for the project, original evidence
                    row = r[variant][g]
                    print(f"{name + ' ' + variant:34} {g:16} " + " ".join(f"{row[f'R@{k}']:6.1f}" for k in KS)
                          + f" {row['n']:5d}")
        print("evidence:", res["locomo_evidence_stats"])
        print()
    sq = [k for k in SQUAD_SETS if k in res]
    if sq:
        print(f"{'set':10} {'retriever':18} {'R@1':>6} {'R@5':>6} {'MRR@10':>7}     n")
        for name in sq:
            for ret, r in res[name].items():
                print(f"{name:10} {ret:18} {r['R@1']:6.3f} {r['R@5']:6.3f} {r['MRR@10']:7.3f} {r['n']:5d}")
    print("search path:", res["path"], "| seconds:", res["seconds"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eval-dir", type=Path, default=REPO.parent / "shared" / "eval")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "recall_eval.json")
    ap.add_argument("--quick", action="store_true",
                    help="LoCoMo tuning conversations only, every 4th paragraph-set question")
    ap.add_argument("--sets", default="locomo,xquad-en,xquad-ru,korquad", help="comma-separated subset")
    ap.add_argument("--no-baseline", action="store_true", help="skip the plain FTS5 rows")
    ap.add_argument("--stdio", action="store_true",
                    help="also LoCoMo written through memory_remember over stdio, a server per session, no source")
    ap.add_argument("--direct", action="store_true",
                    help="index with Index + text_scores directly (no files/git; for quick iterations)")
    args = ap.parse_args(argv)
    if not (args.eval_dir / "locomo10.json").exists():
        print(f"evaluation data not found in {args.eval_dir} (use --eval-dir)", file=sys.stderr)
        return 2
    t0 = time.time()
    builder = project_builder if args.direct else store_builder
    res = run(args.eval_dir, args.quick, args.sets.split(","), not args.no_baseline, builder, args.stdio)
    res["path"] = "Index+text_scores (--direct)" if args.direct else "Store.search"
    res["seconds"]["total"] = round(time.time() - t0, 1)
    print_table(res)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1, ensure_ascii=False), encoding="utf-8")
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
