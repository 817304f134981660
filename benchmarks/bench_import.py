"""Time of one bulk import (plain paste, one memory per line) into a new store.

    python benchmarks/bench_import.py [--n 2000]

Prints wall and CPU seconds of `Store.import_memories`: every line goes through the credential
scan, the duplicate check and the conflict gate, is written and indexed, and the run is one git
commit. CPU time is the steadier number on a shared machine.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from memory_mcp.app.store import Store

WORDS = ["deploy", "cache", "redis", "postgres", "pnpm", "workspace", "migration", "pytest", "worker", "queue",
         "schema", "index", "review", "release", "staging", "docker", "nginx", "timeout", "retry", "latency",
         "frontend", "backend", "gateway", "webhook", "cron", "backup", "metrics", "alert", "dashboard"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "paste.txt"
        source.write_text("\n".join(f"Note {i}: the {' '.join(rng.sample(WORDS, 6))} runs on host h{i}"
                                    for i in range(args.n)) + "\n")
        store = Store.open(Path(tmp) / "store")
        wall, cpu = time.perf_counter(), time.process_time()
        report = store.import_memories("paste", source)
        print(f"imported {len(report.imported)} of {args.n} lines in {time.perf_counter() - wall:.1f} s wall, "
              f"{time.process_time() - cpu:.1f} s CPU ({len(report.conflicts)} raised as conflicts)")


if __name__ == "__main__":
    main()
