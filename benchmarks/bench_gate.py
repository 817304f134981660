"""The conflict gate's cost and what it raises: the bounded candidate search (`conflicts.candidates`)
against the unbounded one it replaced (`perf.unbounded_gate`), both weighed by the same `conflicts.weigh`, on the same index.

    python benchmarks/bench_gate.py [--sizes 1000,10000,100000] [--repeat 40] [--flood 2000]

For each size it indexes the perf harness's generated memories (no files, no git: the gate reads
the index only) and times both gates on the same generated subjects, then reports which subjects
each raises a pair for that the other does not. `--flood` imports that many generated notes, each
gated against the ones before (as an import runs it), and counts the notes that raised a conflict;
`--labelled` does the same comparison on tests/data/conflict_pairs.json.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from tempfile import TemporaryDirectory

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import perf  # noqa: E402

from memory_mcp.index.db import Index  # noqa: E402
from memory_mcp.index.schema import FileStat  # noqa: E402
from memory_mcp.recall import conflicts  # noqa: E402
from memory_mcp.truth.model import Memory, compose_body  # noqa: E402

LABELLED = Path(__file__).resolve().parent.parent / "tests" / "data" / "conflict_pairs.json"
Gate = Callable[[Index, conflicts.Subject], list[conflicts.Neighbour]]


GATES: dict[str, Gate] = {"bounded": conflicts.neighbours, "unbounded": perf.unbounded_gate}


def note(rng: random.Random, i: int, stamp: str) -> tuple[Memory, list[str]]:
    """One generated memory, as perf.generate_store makes them, and its entities."""
    _, title, content = perf.memory_text(rng)
    entities = rng.sample(perf.ENTITIES, rng.randint(0, 4))
    return Memory(id=f"M{i:025d}", body=compose_body(content, title), entities=entities,
                  created=stamp, updated=stamp), entities


def subject_of(mem: Memory, entities: list[str], when: str | None) -> conflicts.Subject:
    return conflicts.Subject(mem.id, mem.title, mem.excerpt, entities, when, [])


def build(path: Path, n: int) -> Index:
    index = Index.open(path)
    rng = random.Random(7)
    with index.transaction():
        for i in range(n):
            mem, entities = note(rng, i, f"2025-{1 + i * 12 // n:02d}-01T00:00:00Z")
            index.upsert(f"memories/{i}.md", mem, entities, FileStat(0, 0, ""))
    return index


def timings(index: Index, repeat: int) -> dict[str, dict]:
    """Each gate on the same `repeat` generated subjects: p50/p95 ms and which subjects raised a pair."""
    out: dict[str, dict] = {}
    for name, gate in GATES.items():
        rng = random.Random(3)
        times, raised = [], {}
        for k in range(repeat):
            mem, entities = note(rng, 10**9 + k, "2026-01-01T00:00:00Z")
            subject = subject_of(mem, entities, mem.updated)
            t = time.perf_counter()
            found = gate(index, subject)
            times.append((time.perf_counter() - t) * 1000)
            if found:
                raised[mem.title] = [n.row.title for n in found]
        times.sort()
        out[name] = {"p50": statistics.median(times), "p95": times[int(len(times) * 0.95) - 1], "raised": raised}
    return out


def flood(path: Path, n: int) -> dict[str, dict]:
    """Import `n` generated notes one by one, each gated against those before: notes that raised."""
    out: dict[str, dict] = {}
    for name, gate in GATES.items():
        index = Index.open(path / f"flood-{name}.sqlite")
        rng = random.Random(11)
        raised: dict[str, list[str]] = {}
        for i in range(n):
            mem, entities = note(rng, i, "2026-01-01T00:00:00Z")
            found = gate(index, subject_of(mem, entities, mem.updated))
            if found:
                raised[mem.title] = [nb.row.title for nb in found]
            with index.transaction():
                index.upsert(f"{i}.md", mem, entities, FileStat(0, 0, ""))
        index.close()
        out[name] = {"raised": raised}
    return out


def labelled(path: Path) -> dict[str, dict]:
    """Each gate over every pair of the labelled set (all old memories in one index, as the test has it)."""
    pairs = json.loads(LABELLED.read_text(encoding="utf-8"))["pairs"]
    index = Index.open(path / "labelled.sqlite")
    ids: dict[str, str] = {}
    with index.transaction():
        for pair in pairs:
            topic = pair["id"].split("/")[0]
            if topic not in ids:
                ids[topic] = f"O{len(ids):025d}"
                mem = Memory(id=ids[topic], body=compose_body(pair["old"]["text"], None),
                             entities=pair["old"]["entities"], created="2026-10-01T00:00:00Z",
                             updated="2026-10-01T00:00:00Z")
                index.upsert(f"{topic}.md", mem, [e.lower() for e in pair["old"]["entities"]], FileStat(0, 0, ""))
    out: dict[str, dict] = {}
    for name, gate in GATES.items():
        raised = {}
        for pair in pairs:
            mem = Memory(id="N" * 26, body=compose_body(pair["new"]["text"], None))
            subject = subject_of(mem, [e.lower() for e in pair["new"]["entities"]], "2026-11-01T00:00:00Z")
            old = ids[pair["id"].split("/")[0]]
            if any(n.row.id == old for n in gate(index, subject)):
                raised[pair["id"]] = [f"{pair['class']} ({pair['split']})"]
        out[name] = {"raised": raised}
    index.close()
    return out


def compare(title: str, res: dict[str, dict], total: int, examples: int = 3) -> None:
    """How many subjects each gate raised a pair for, and the pairs only one of them raised."""
    a, b = res["bounded"]["raised"], res["unbounded"]["raised"]
    print(f"{title}: bounded raised pairs for {len(a)} of {total}, unbounded for {len(b)}")
    for label, mine, theirs in (("only bounded", a, b), ("only unbounded", b, a)):
        diff = [(k, t) for k, found in mine.items() for t in found if t not in theirs.get(k, [])]
        print(f"  pairs {label}: {len(diff)} (on {len({k for k, _ in diff})} subjects)")
        for k, t in diff[:examples]:
            print(f"    {k[:60]!r} -> {t[:60]!r}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--flood", type=int, default=2000, help="generated notes imported one by one (0: skip)")
    ap.add_argument("--labelled", action="store_true", help="compare the gates on the labelled set too")
    args = ap.parse_args()
    with TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",") if s):
            t = time.perf_counter()
            index = build(Path(tmp) / f"gate-{n}.sqlite", n)
            print(f"N={n:,} (indexed in {time.perf_counter() - t:.0f} s)")
            res = timings(index, args.repeat)
            for name, r in res.items():
                print(f"  {name:<10} gate p50 {r['p50']:.2f} ms, p95 {r['p95']:.2f} ms")
            compare(f"  generated subjects at N={n:,}", res, args.repeat)
            index.close()
        if args.flood:
            compare(f"import of {args.flood} generated notes", flood(Path(tmp), args.flood), args.flood)
        if args.labelled:
            compare("labelled set", labelled(Path(tmp)), len(json.loads(LABELLED.read_text())["pairs"]), 20)


if __name__ == "__main__":
    main()
