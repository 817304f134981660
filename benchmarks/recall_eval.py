#!/usr/bin/env python3
"""Recall evaluation: LoCoMo (turn level) and question -> paragraph on XQuAD en/ru and KorQuAD.

    python benchmarks/recall_eval.py [--quick] [--out FILE] [--eval-dir DIR]

The data is read at run time from `../shared/eval` (relative to the repository root) or
`--eval-dir`; it is never copied into the repository (its licences forbid that).

Every corpus is indexed with the project's own `memory_mcp.index.Index` (the same FTS tables,
tokenizers and bm25 weights the server uses) and queried through `memory_mcp.query.text_scores`
(the same planner and fusion). A "plain FTS5" row is computed in the same run as the floor:
one FTS5 table, OR of the question's tokens, bm25 (porter unicode61 for LoCoMo, unicode61 for
the paragraph sets), as in shared/reference/eval-baselines.md section 5.

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memory_mcp import query as mquery  # noqa: E402
from memory_mcp.index import FileStat, Index  # noqa: E402
from memory_mcp.model import Memory, compose_body  # noqa: E402

KS = (1, 5, 10, 25, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
TUNED_ON = [0, 1, 2, 3, 4]  # LoCoMo conversations used to tune fusion (index into locomo10.json)

# A retriever is built from a list of documents and answers (query, k) with document indexes.
Searcher = Callable[[str, int], list[int]]
Builder = Callable[[list[str]], tuple[Searcher, Callable[[], None]]]


# ----------------------------------------------------------------------------------------------
# Retrievers
# ----------------------------------------------------------------------------------------------


def project_builder(docs: list[str]) -> tuple[Searcher, Callable[[], None]]:
    """Index `docs` as memories with the project's Index and search with query.text_scores.

    TODO(lead): switch to `memory_mcp.store.Store` (init, bulk-write memory files, reindex,
    search) once its API is in place, so ranking factors outside `text` are exercised too. Until
    then this path uses the same Index class, FTS tables and planner the store uses.
    """
    tmp = tempfile.TemporaryDirectory(prefix="recall-eval-")
    index = Index.open(Path(tmp.name) / "index.sqlite")
    stat = FileStat(0, 0, "")
    with index.transaction():
        for i, text in enumerate(docs):
            # compose_body is what memory_remember does with content and no title.
            mem = Memory(id=f"P{i:016X}", body=compose_body(text, None))
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

    def build(docs: list[str]) -> tuple[Searcher, Callable[[], None]]:
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

_SESSION_RE = re.compile(r"^session_(\d+)$")
_DIA_RE = re.compile(r"^D(\d+):(\d+)$")


@dataclass
class Conversation:
    docs: list[str]
    dia_ids: list[str]
    questions: list[dict] = field(default_factory=list)


def normalise_evidence(raw: Iterable[str], known: set[str]) -> tuple[list[str], int]:
    """Split joined ids (`"D8:6; D9:17"`), strip zero padding (`D30:05`), drop unresolvable ids.

    Returns (resolved ids, number of raw pieces skipped).
    """
    out: list[str] = []
    skipped = 0
    for item in raw:
        for piece in re.split(r"[;,\s]+", str(item).strip()):
            if not piece:
                continue
            m = _DIA_RE.match(piece)
            if not m:
                skipped += 1
                continue
            did = f"D{int(m.group(1))}:{int(m.group(2))}"
            if did in known:
                if did not in out:
                    out.append(did)
            else:
                skipped += 1
    return out, skipped


def load_locomo(eval_dir: Path) -> tuple[list[Conversation], dict[str, int]]:
    data = json.loads((eval_dir / "locomo10.json").read_text(encoding="utf-8"))
    audit = json.loads((eval_dir / "locomo10_audit_errors.json").read_text(encoding="utf-8"))
    corrected: dict[tuple[int, int], list[str]] = {}
    for entry in audit:
        m = re.match(r"^locomo_(\d+)_qa(\d+)$", entry.get("question_id", ""))
        ce = entry.get("correct_evidence")
        if m and isinstance(ce, list):
            corrected[(int(m.group(1)), int(m.group(2)))] = ce
    stats = {"skipped_original": 0, "skipped_corrected": 0, "empty_evidence": 0, "audit_substituted": 0}
    convs = []
    for ci, item in enumerate(data):
        c = item["conversation"]
        docs, ids = [], []
        sessions = sorted(int(m.group(1)) for k in c if (m := _SESSION_RE.match(k)))
        for s in sessions:
            for turn in c[f"session_{s}"]:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo of {turn['blip_caption']}]"
                docs.append(text)
                ids.append(turn["dia_id"])
        conv = Conversation(docs, ids)
        known = set(ids)
        for qi, qa in enumerate(item["qa"]):
            orig, sk = normalise_evidence(qa.get("evidence", []), known)
            stats["skipped_original"] += sk
            if (ci, qi) in corrected and sorted(corrected[(ci, qi)]) != sorted(qa.get("evidence", [])):
                corr, sk2 = normalise_evidence(corrected[(ci, qi)], known)
                stats["audit_substituted"] += 1
            else:
                corr, sk2 = orig, 0
            stats["skipped_corrected"] += sk2
            if not orig:
                stats["empty_evidence"] += 1
            conv.questions.append(
                {"question": qa["question"], "category": qa["category"], "orig": orig, "corr": corr})
        convs.append(conv)
    return convs, stats


def recall_at(ranked_ids: list[str], gold: list[str], k: int) -> float:
    if not gold:
        return 1.0  # the official metric counts a question without evidence as recalled
    top = set(ranked_ids[:k])
    return sum(1 for g in gold if g in top) / len(gold)


def eval_locomo(convs: list[Conversation], builder: Builder, which: list[int]) -> dict:
    """Per-question recall@k for both evidence variants; aggregated by category and overall."""
    kmax = max(KS)
    rows = []  # (conv, category, {variant: {k: recall}})
    for ci in which:
        conv = convs[ci]
        search, close = builder(conv.docs)
        try:
            for q in conv.questions:
                ranked = [conv.dia_ids[i] for i in search(q["question"], kmax)]
                rec = {v: {k: recall_at(ranked, q[v], k) for k in KS} for v in ("orig", "corr")}
                rows.append((ci, q["category"], rec))
        finally:
            close()
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
    search, close = builder(paras)
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


def run(eval_dir: Path, quick: bool, sets: list[str], baseline: bool) -> dict:
    results: dict = {"tuned_on_locomo_conversations": TUNED_ON}
    timings: dict[str, float] = {}
    if "locomo" in sets:
        t0 = time.time()
        convs, stats = load_locomo(eval_dir)
        results["locomo_evidence_stats"] = stats
        groups = {"tuned": TUNED_ON, "held-out": [i for i in range(len(convs)) if i not in TUNED_ON]}
        groups["all"] = TUNED_ON if quick else list(range(len(convs)))
        loc: dict = {}
        for name in (["tuned"] if quick else ["all"]):
            loc[f"project/{name}"] = eval_locomo(convs, project_builder, groups[name])
            if baseline:
                loc[f"plain-porter/{name}"] = eval_locomo(convs, plain_builder("porter unicode61"), groups[name])
        if not quick:
            # Split the project numbers so tuned-on and held-out conversations can be compared.
            loc["project/tuned"] = eval_locomo(convs, project_builder, groups["tuned"])
            loc["project/held-out"] = eval_locomo(convs, project_builder, groups["held-out"])
        results["locomo"] = loc
        timings["locomo"] = time.time() - t0
    for name, rel in SQUAD_SETS.items():
        if name not in sets:
            continue
        t0 = time.time()
        paras, qs = load_squad(eval_dir / rel)
        if quick:
            qs = qs[::4]
        res = {"project": eval_squad(paras, qs, project_builder)}
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
    print("seconds:", res["seconds"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--eval-dir", type=Path, default=REPO.parent / "shared" / "eval")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "recall_eval.json")
    ap.add_argument("--quick", action="store_true",
                    help="LoCoMo tuning conversations only, every 4th paragraph-set question")
    ap.add_argument("--sets", default="locomo,xquad-en,xquad-ru,korquad", help="comma-separated subset")
    ap.add_argument("--no-baseline", action="store_true", help="skip the plain FTS5 rows")
    args = ap.parse_args(argv)
    if not (args.eval_dir / "locomo10.json").exists():
        print(f"evaluation data not found in {args.eval_dir} (use --eval-dir)", file=sys.stderr)
        return 2
    res = run(args.eval_dir, args.quick, args.sets.split(","), not args.no_baseline)
    print_table(res)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1, ensure_ascii=False), encoding="utf-8")
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
