"""Parse + serialize speed of generated memories, and a digest of what they produce.

A reindex parses every file, so the frontmatter code's speed is the reindex's. Run it before and
after a change to `files.py` or the field declarations: the times should stay within a few percent
and the digest (of every serialized file, every parsed memory and every index row) must not move.

    python benchmarks/bench_fields.py [--n 10000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import tempfile
import time
from dataclasses import astuple
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory_mcp.index.db import Index  # noqa: E402
from memory_mcp.index.schema import FileStat  # noqa: E402
from memory_mcp.truth import files  # noqa: E402
from memory_mcp.truth.model import Memory, MemoryType, State, Trust, compose_body  # noqa: E402

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_WORDS = ["pnpm", "web-workspace", "billing", "postgres", "deploy", "ci", "Kubernetes", "auth", "ruff",
          "naïve", "日本語", "a b", "x: y", "#tag", "'quoted'", "yes", "1.5", "null", "-dash"]


def _ulid(rng: random.Random) -> str:
    return "01" + "".join(rng.choice(_CROCKFORD) for _ in range(24))


def generate(n: int, seed: int = 7) -> list[str]:
    """`n` memory file texts: most with the usual fields, some with every field and awkward values."""
    rng = random.Random(seed)
    texts: list[str] = []
    for i in range(n):
        day = f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}"
        stamp = f"{day}T{i % 24:02d}:{i % 60:02d}:{(7 * i) % 60:02d}Z"
        full = rng.random() < 0.1  # every field set
        odd = full and rng.random() < 0.2  # values that need quoting, so the YAML loader reads them
        mem = Memory(
            id=_ulid(rng), body=compose_body(f"Memory {i} about {rng.choice(_WORDS)}.\n\nMore text.", None),
            type=rng.choice(list(MemoryType)), state=rng.choice(list(State)), trust=rng.choice(list(Trust)),
            entities=rng.sample(_WORDS if odd else _WORDS[:10], rng.randint(0, 4)),
            source=f"session {day}" if rng.random() < 0.7 else ("user said: \"no\"" if odd else ""),
            created=stamp, updated=stamp,
            review_after=day if full else None,
            conflicts_with=[_ulid(rng)] if full else [],
            distinct_from=[_ulid(rng), _ulid(rng)] if full else [],
            supersedes=[_ulid(rng)] if full else [],
            superseded_by=_ulid(rng) if full and rng.random() < 0.5 else None,
            deprecated_reason="replaced: see the new one" if full else None,
            feedback=rng.choice([0.0, 0.1, -0.25, 1.0, 0.333]) if full else 0.0,
            extra={"paths": ["src/billing/**"], "owner": "ann"} if odd else {},
        )
        texts.append(files.serialize(mem))
    return texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    texts = generate(args.n)
    parse_times, serialize_times = [], []
    for _ in range(args.repeat):
        files._plain.cache_clear()  # each round pays for its plain-scalar checks like a fresh process
        t0 = time.perf_counter()
        mems = [files.parse(t, f"memories/m{i}.md") for i, t in enumerate(texts)]
        t1 = time.perf_counter()
        out = [files.serialize(m) for m in mems]
        t2 = time.perf_counter()
        parse_times.append(t1 - t0)
        serialize_times.append(t2 - t1)
    digest = hashlib.sha256()
    for text, again, mem in zip(texts, out, mems, strict=True):
        assert text == again, "serialize -> parse -> serialize is not byte-identical"
        digest.update(text.encode())
        digest.update(repr(astuple(mem)).encode())
    with tempfile.TemporaryDirectory() as tmp:
        index = Index.open(Path(tmp) / "index.db")
        with index.transaction():
            for i, mem in enumerate(mems[:2000]):
                index.upsert(f"memories/m{i}.md", mem, mem.entities, FileStat(i, i, "sha"))
        t0 = time.perf_counter()
        rows = index.rows()
        rows_time = time.perf_counter() - t0
        for row in sorted(rows, key=lambda r: r.rowid):
            digest.update(repr(astuple(row)).encode())
        index.close()
    print(f"{args.n} memories, best of {args.repeat}: parse {min(parse_times) * 1000:.0f} ms, "
          f"serialize {min(serialize_times) * 1000:.0f} ms, "
          f"parse+serialize {min(p + s for p, s in zip(parse_times, serialize_times, strict=True)) * 1000:.0f} ms; "
          f"2000 index rows read in {rows_time * 1000:.1f} ms")
    print(f"digest {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
