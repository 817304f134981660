"""What each bounded cache holds and earns: entries, bytes, hit rate and the time of the work it
serves, at its size and at a quarter, half and double of it (issue 14, item 7).

    python benchmarks/bench_caches.py [--n 10000] [--queries 400] [--writes 60] [--work DIR]
    python benchmarks/bench_caches.py --corpus real [--eval-dir ../shared/eval]

The work is a long-lived server's: an in-process reindex (MEMORY_MCP_WORKERS=0, so the parsing
and stemming run in this process and its caches), then `--queries` recalls and `--writes`
conflict-gate checks of new memories. The store is the perf harness's generated one of `--n`
memories (a small vocabulary), or with `--corpus real` the public evaluation texts: every LoCoMo
turn and the XQuAD en/ru and KorQuAD paragraphs (7,314 memories in three languages), queried with
the LoCoMo and XQuAD questions and gated with LoCoMo questions as new memories.
Bytes are measured, not estimated: with tracemalloc on, the memory a `cache_clear()` frees once
the work is done (what the cache alone held). Times are CPU seconds of this process.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import perf  # noqa: E402

from memory_mcp.app.store import Store  # noqa: E402
from memory_mcp.index import textproc  # noqa: E402
from memory_mcp.recall import conflicts
from memory_mcp.truth import files, globs
from memory_mcp.truth.model import Memory, compose_body  # noqa: E402

# (module, attribute): each bounded cache of the package, rebuilt at another size by `resize`.
CACHES: list[tuple[Any, str]] = [
    (textproc, "_EN_CACHE"), (textproc, "_RU_CACHE"), (textproc, "_span_terms"),
    (conflicts, "term_set"), (conflicts, "cues"), (files, "_plain"), (globs, "_compile"),
]
ORIGINAL = {(m.__name__, a): getattr(m, a) for m, a in CACHES}


def resize(factor: float) -> None:
    """Every cache at `factor` times its shipped size, empty."""
    for module, attr in CACHES:
        shipped = ORIGINAL[(module.__name__, attr)]
        size = max(1, int(shipped.cache_parameters()["maxsize"] * factor))
        setattr(module, attr, functools.lru_cache(maxsize=size)(shipped.__wrapped__))


def work(root: Path, queries: list[str], subjects: list[str], writes: int) -> dict[str, float]:
    """The server's work on `root`; CPU seconds of each part."""
    os.environ["MEMORY_MCP_WORKERS"] = "0"
    store = Store.open(root)
    out = {}
    cpu = time.process_time()
    store.reindex()
    out["reindex_cpu_s"] = time.process_time() - cpu
    cpu = time.process_time()
    for q in queries:
        store.search(q)
    out["recall_cpu_ms"] = 1000 * (time.process_time() - cpu) / len(queries)
    index, rng = store.index(), random.Random(3)
    cpu = time.process_time()
    for k in range(writes):
        if subjects:
            mem = Memory(id="0" * 26, body=compose_body(subjects[k % len(subjects)], None))
        else:
            _, title, content = perf.memory_text(rng)
            mem = Memory(id="0" * 26, body=compose_body(content, title))
        conflicts.neighbours(index, conflicts.Subject(mem.id, mem.title, mem.excerpt,
                                                      rng.sample(perf.ENTITIES, 2), None, []))
    out["gate_cpu_ms"] = 1000 * (time.process_time() - cpu) / writes
    store.close()
    return out


def current(module: Any, attr: str) -> Callable[..., Any]:
    return getattr(module, attr)  # type: ignore[no-any-return]


def measure_bytes(root: Path, queries: list[str], subjects: list[str], writes: int) -> dict[str, int]:
    """Bytes each cache holds after the work, at the shipped sizes (tracemalloc)."""
    resize(1.0)
    tracemalloc.start()  # bytes at the shipped sizes
    work(root, queries, subjects, writes)
    held = {}
    for module, attr in CACHES:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        current(module, attr).cache_clear()
        gc.collect()
        held[attr] = before - tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return held


def real_store(root: Path, eval_dir: Path) -> tuple[Path, list[str], list[str]]:
    """A store of the public evaluation texts, with questions to recall and to gate."""
    import recall_eval as ev

    from memory_mcp.truth import files as mfiles

    convs, _ = ev.load_locomo(eval_dir)
    texts = [d for c in convs for d in c.docs]
    questions = [q["question"] for c in convs for q in c.questions]
    for rel in ev.SQUAD_SETS.values():
        paras, qs = ev.load_squad(eval_dir / rel)
        texts += paras
        questions += [q for q, _ in qs[:400]]
    Store.open(root).close()
    for i, text in enumerate(texts):
        mem = Memory(id=ev._ulid(i), body=compose_body(text, None))
        (root / "memories" / f"m{i:05d}.md").write_text(mfiles.serialize(mem), encoding="utf-8")
    random.Random(5).shuffle(questions)
    return root, questions, [q for c in convs for q in (x["question"] for x in c.questions)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--queries", type=int, default=400)
    ap.add_argument("--writes", type=int, default=60)
    ap.add_argument("--work", type=Path, default=None, help="keep the generated store here (reused)")
    ap.add_argument("--corpus", choices=("generated", "real"), default="generated")
    ap.add_argument("--factors", type=lambda v: [float(x) for x in v.split(",")], default=[0.25, 0.5, 1.0, 2.0],
                    help="cache sizes to try, as multiples of the shipped ones")
    ap.add_argument("--eval-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "eval")
    args = ap.parse_args()
    with TemporaryDirectory(prefix="bench-caches-") as tmp:
        subjects: list[str] = []
        if args.corpus == "real":
            root, queries, subjects = real_store(Path(tmp) / "real", args.eval_dir)
        else:
            root = (args.work or Path(tmp)) / f"store-{args.n}"
            gen = perf.generate_store(root, args.n) if not root.exists() else None
            queries = (gen.queries if gen else [f"{w} retries" for w in perf.ENTITIES]) * 4
        queries = queries[:args.queries]
        held = measure_bytes(root, queries, subjects, args.writes)
        rows = []
        for factor in args.factors:
            resize(factor)
            times = work(root, queries, subjects, args.writes)
            stats = {attr: current(m, attr).cache_info() for m, attr in CACHES}
            rows.append((factor, times, stats))
        resize(1.0)
    print(f"# caches, {args.corpus} corpus, n={args.n if args.corpus == 'generated' else 'all'}, {args.queries} recalls, {args.writes} gate checks; load {os.getloadavg()[0]:.1f}")
    print("| cache | shipped size | entries after the work | bytes held (tracemalloc) | hit rate at " + " / ".join(f"x{f}" for f in args.factors) + " |")
    print("|---|---|---|---|---|")
    for _, attr in CACHES:
        shipped = ORIGINAL[next(k for k in ORIGINAL if k[1] == attr)].cache_parameters()["maxsize"]
        at1 = next((s for f, _, s in rows if f == 1.0), rows[0][2])[attr]
        rates = " / ".join(f"{s[attr].hits / max(1, s[attr].hits + s[attr].misses):.3f}" for _, _, s in rows)
        print(f"| {attr} | {shipped} | {at1.currsize} | {held[attr] / 1e6:.2f} MB | {rates} |")
    print()
    print("| size factor | reindex CPU s | recall CPU ms | gate CPU ms |")
    print("|---|---|---|---|")
    for factor, t, _ in rows:
        print(f"| x{factor} | {t['reindex_cpu_s']:.2f} | {t['recall_cpu_ms']:.2f} | {t['gate_cpu_ms']:.2f} |")


if __name__ == "__main__":
    main()
