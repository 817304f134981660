"""Cost of flagging text that tries to steer the model: the detector's import, one scan per write
(and per file a reindex reads), against a whole memory_remember in the same run.

    python benchmarks/bench_injection.py [--repeat 7] [--writes 60]

Texts are bench_secrets.py's generated memories (prose with identifiers, paths, config lines and
hashes) and the labelled memories of tests/injection_set.py as the files a write makes of them.
Prints medians of `--repeat` runs: microseconds per scan, milliseconds per remember (a new store,
`--writes` labelled ordinary memories written through the facade, git commit included), and the
scan's share of it.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "truth"))
from bench_secrets import per_call, texts  # noqa: E402
from injection_set import HOSTILE, ORDINARY  # noqa: E402
from test_injection_set import file_text  # noqa: E402

from memory_mcp.truth.injection import scan  # noqa: E402


def import_ms(repeat: int) -> float:
    """Median milliseconds to import the detector and compile its rules (its first scan) in a fresh
    interpreter, its package already imported."""
    code = ("import time, memory_mcp; t = time.perf_counter(); from memory_mcp.truth.injection import scan; "
            "scan('x'); print(time.perf_counter() - t)")
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(repeat)]
    return statistics.median(runs) * 1e3


def remember_ms(writes: int, repeat: int) -> float:
    """Median milliseconds of one `Store.remember` (the write path the scan is part of) of the labelled
    ordinary memories, in a new store."""
    from memory_mcp.app.store import Store

    runs = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            store = Store.open(Path(tmp) / "store")
            start = time.perf_counter()
            for kind, title, content in ORDINARY[:writes]:
                store.remember(content, title=title, type=kind)
            runs.append((time.perf_counter() - start) / writes * 1e3)
            store.close()
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--writes", type=int, default=60)
    args = parser.parse_args()
    rng = random.Random(32)
    print(f"import of the detector and its first scan: {import_ms(args.repeat):.1f} ms")
    per_write = 0.0
    for label, batch in (("a memory (4 lines)", texts(rng, 4, 2000)), ("a file (40 lines)", texts(rng, 40, 300)),
                         ("a long file (400 lines)", texts(rng, 400, 30)),
                         ("labelled ordinary files", [file_text(i) for i in ORDINARY]),
                         ("labelled hostile files", [file_text(i) for i in HOSTILE])):
        us = per_call(scan, batch, args.repeat)
        per_write = us if label.startswith("labelled ordinary") else per_write
        print(f"{label:<26} scan {us:8.1f} us   ({sum(map(len, batch)) // len(batch)} chars)")
    write = remember_ms(args.writes, max(3, args.repeat // 2))
    print(f"memory_remember (facade, commit included): {write:.2f} ms; an ordinary file's scan is "
          f"{per_write / 1e3 / write:.2%} of it")


if __name__ == "__main__":
    main()
