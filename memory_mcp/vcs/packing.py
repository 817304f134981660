"""When the store's loose git objects are packed. Our commits are plumbing, which never runs
`git gc --auto`: 1,200 writes left 4,831 loose objects and made reads 70 times slower.

Whether it is time is read from the repository, as `git gc --auto` reads it (loose objects counted
in a sample of the 256 fan-out folders), not counted per process: a script running
`memory-mcp remember` in a loop is one commit per process, and a count kept by each process never
reached its mark (1,749 loose objects in one such store)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

# 8 of git's 256 fan-out folders; their count times 32 estimates the loose objects.
SAMPLE = tuple(f"{i:02x}" for i in range(0, 256, 32))
# About 100 commits' objects (a blob, two trees and a commit each).
PACK_AT_LOOSE = 400
# More packs than this and the next repack makes them one (`-a`), so their number stays small too.
MAX_PACKS = 16
# The process id of the last repack started: while it runs, another process does not start a second.
MARKER = "memory-mcp-repack.pid"


def loose_estimate(objects: Path) -> int:
    """The loose objects under `objects`, estimated from the sample folders."""
    found = 0
    for folder in SAMPLE:
        with contextlib.suppress(OSError):
            found += len(os.listdir(objects / folder))
    return found * (256 // len(SAMPLE))


def running(common_dir: Path) -> bool:
    """Whether the last repack started in this repository still runs."""
    try:
        os.kill(int((common_dir / MARKER).read_text(encoding="ascii")), 0)
    except (OSError, ValueError):
        return False
    return True


def due(common_dir: Path) -> list[str] | None:
    """The `git repack` arguments when a repack is due in the repository whose common git folder is
    `common_dir`, else None."""
    objects = common_dir / "objects"
    if loose_estimate(objects) < PACK_AT_LOOSE or running(common_dir):
        return None
    packs = sum(1 for _ in (objects / "pack").glob("pack-*.pack"))
    return ["repack", "-d", "-q", *(["-a"] if packs > MAX_PACKS else [])]


def start(root: Path, common_dir: Path, env: dict[str, str]) -> subprocess.Popen[bytes] | None:
    """Start a repack in the background when one is due. `git repack -d` touches neither refs nor the
    index, so it runs beside our commits without taking a lock they need; it is not waited for (a
    one-shot command exits before it ends; a server reaps it at its next commit)."""
    args = due(common_dir)
    if args is None:
        return None
    try:
        packer = subprocess.Popen(["git", *args], cwd=root, env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    with contextlib.suppress(OSError):
        (common_dir / MARKER).write_text(str(packer.pid), encoding="ascii")
    return packer
