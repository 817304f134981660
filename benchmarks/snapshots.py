"""Stores kept between benchmark runs, and the scratch copies a run measures.

A store is slow to make (an agent-built one is a commit per memory; a generated 100k one takes
minutes to write, commit and index), so it is made once under a work folder and reused. A run never
measures the snapshot itself: writes would pile up from run to run. It measures a copy.

    python benchmarks/snapshots.py --work ../bench-stores --sizes 30000,100000   # make them ahead
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from perf import Generated, generate_store

from memory_mcp.app.store import Store

GENERATED_VERSION = 1  # change when what generate_store writes changes: old snapshots are then ignored


def generated(work: Path, n: int) -> Generated:
    """The generated store of `n` memories under `work` (one import commit, indexed once), made now
    unless a complete snapshot of this version is there."""
    root = work / f"generated-{n}-v{GENERATED_VERSION}"
    meta = work / f"{root.name}.json"
    if root.exists() and meta.exists():
        data = json.loads(meta.read_text())
        return Generated(root, data["ids"], data["paths"], data["queries"])
    if root.exists():  # a snapshot cut short: start again
        shutil.rmtree(root)
    (work / "home").mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    gen = generate_store(root, n)
    store = Store.open(root)
    try:
        store.refresh()  # the index is built once here, not in every run's first call
    finally:
        store.close()
    print(f"  generated and indexed {n:,} memories in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    meta.write_text(json.dumps({**asdict(gen), "root": str(root)}))
    return gen


def scratch(gen: Generated, dest: Path) -> Generated:
    """A copy of the snapshot `gen` at `dest` (replacing any earlier copy), with the same memories."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # cp keeps modification times (the stat gate's evidence) and is faster than copytree on 100k files.
    subprocess.run(["cp", "-a", "--reflink=auto", str(gen.root), str(dest)], check=True)
    return Generated(dest, gen.ids, gen.paths, gen.queries)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--sizes", default="30000,100000")
    args = ap.parse_args()
    for n in (int(s) for s in args.sizes.split(",") if s):
        print(generated(args.work, n).root)


if __name__ == "__main__":
    main()
