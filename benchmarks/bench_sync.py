"""Sync over a real remote (smart HTTP: git http-backend behind lighttpd on loopback), each figure
beside the same run's plain git doing the same work on a copy of the same repositories.

    python benchmarks/bench_sync.py [--size 10000] [--new 100] [--clones 10] [--per-clone 1000] [--repeat 15]

1. SessionStart with the background pull: `memory-mcp hook SessionStart --store S` on a store with
   a remote, with syncs on and with MEMORY_MCP_SYNC=off, alternating, p50 of the hook process's wall
   time. Between runs the background sync a run started is waited for, so every run meets a quiet
   machine; how long that background sync took (start to record) is given too.
2. A sync that brings `--new` memories a teammate pushed, on a `--size` store that has one memory of
   its own to merge: `memory-mcp sync` (fetch, merge, index what came, push), against `git fetch` +
   `git merge` of the same commits on a copy.
3. `--clones` clones each adding `--per-clone` memories, merged into one store through the remote:
   each clone syncs in turn, then the first once more, which ends with every memory; against each
   copy running `git fetch` + `git merge` + `git push` in turn. Nothing lost (every id in the one
   store) and `git fsck` clean are checked.

Stores are generated as perf.py does (files written as an import would, one commit), their indexes
built before anything is timed. Run under the CPU lock; lighttpd must be installed (.ci/run)."""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from perf import generate_store, write_memories  # noqa: E402
from remote_servers import Server, missing, serving  # noqa: E402

from memory_mcp.app import syncrecord  # noqa: E402
from memory_mcp.app.autosync import LOCK_FILE  # noqa: E402

EXE = str(Path(sys.executable).parent / "memory-mcp")


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None, stdin: str = "") -> float:
    """Wall-clock seconds of one process, which must succeed."""
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr[-2000:]}")
    return took


def git(root: Path, *args: str, env: dict[str, str]) -> float:
    return run(["git", "-C", str(root), *args], env)


def commit_as(root: Path, who: str, message: str, env: dict[str, str]) -> None:
    git(root, "add", "-A", "memories", env=env)
    git(root, "-c", f"user.name={who}", "-c", f"user.email={who.lower()}@example.org", "commit", "-q",
        "--no-verify", "-m", message, env=env)


def memory_ids(root: Path) -> set[str]:
    found = set()
    for path in (root / "memories").rglob("*.md"):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("id: "):
                    found.add(line[4:].strip())
                    break
    return found


def fsck_clean(root: Path) -> bool:
    done = subprocess.run(["git", "-C", str(root), "fsck", "--no-progress", "--strict"], capture_output=True, text=True)
    return done.returncode == 0 and "error" not in done.stderr


def wait_quiet(store: Path, records: int, timeout: float = 120) -> float:
    """Wait for the background sync to record its end (record count `records`); seconds waited."""
    start = time.perf_counter()
    while len(syncrecord.load(store)) < records and time.perf_counter() - start < timeout:
        time.sleep(0.01)
    # and for its process to let the lock go
    import fcntl

    with open(store / ".git" / LOCK_FILE, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        fcntl.flock(f, fcntl.LOCK_UN)
    return time.perf_counter() - start


def session_start(store: Path, repeat: int, env: dict[str, str]) -> None:
    """Figure 1 (see the module)."""
    on, off, background = [], [], []
    for i in range(repeat):
        payload = f'{{"session_id": "b{i}", "cwd": "{store.parent}", "source": "startup"}}'
        off.append(run([EXE, "hook", "SessionStart", "--store", str(store)], {**env, "MEMORY_MCP_SYNC": "off"},
                       stdin=payload))
        before = len(syncrecord.load(store))
        on.append(run([EXE, "hook", "SessionStart", "--store", str(store)], env, stdin=payload))
        background.append(wait_quiet(store, before + 1) + on[-1])
    p_on, p_off = statistics.median(on) * 1000, statistics.median(off) * 1000
    print(f"SessionStart p50, syncs off                 {p_off:8.1f} ms")
    print(f"SessionStart p50, background pull started   {p_on:8.1f} ms   ratio {p_on / p_off:.2f}x (target <= 1.15x)")
    print(f"  the background sync, start to record p50  {statistics.median(background) * 1000:8.1f} ms "
          "(nothing new on the remote)")


def teammate_brings(server: Server, store: Path, work: Path, new: int, repeat: int, env: dict[str, str]) -> None:
    """Figure 2 (see the module)."""
    mate = server.clone("team.git", work / "teammate")
    ours, plain = [], []
    for r in range(repeat):
        git(mate, "pull", "-q", "--no-rebase", "origin", "main", env=env)  # the store's last merge
        write_memories(mate, new, random.Random(1000 + r))
        commit_as(mate, "Bob", f"bench: {new} memories", env)
        git(mate, "push", "-q", "origin", "HEAD:main", env=env)
        run([EXE, "--store", str(store), "remember", f"Local note {r}: the bench machine has {r} fans."], env)
        copy = work / f"plain-{r}"
        shutil.copytree(store, copy, symlinks=True)
        plain.append(git(copy, "fetch", "-q", "origin", env=env) +
                     git(copy, "merge", "-q", "--no-edit", "origin/main", env=env))
        ours.append(run([EXE, "--store", str(store), "sync"], env))
        shutil.rmtree(copy)
    last = syncrecord.latest(store)
    assert last is not None and last.arrived == {"Bob": new}, last
    p_ours, p_plain = statistics.median(ours), statistics.median(plain)
    print(f"sync bringing {new} memories from a teammate, p50 of {repeat}   {p_ours:6.2f} s (target <= 2 s)")
    print(f"  git fetch + git merge of the same commits      {p_plain:6.2f} s   ratio {p_ours / p_plain:.1f}x "
          "(sync also indexes what came and pushes)")


def clones_merged(server: Server, work: Path, clones: int, per_clone: int, env: dict[str, str]) -> None:
    """Figure 3 (see the module)."""
    base = work / "base"
    run([EXE, "init", str(base)], env)
    for name in ("many.git", "many-plain.git"):
        server.bare(name)
        git(base, "push", "-q", server.url(name), "HEAD:main", env=env)
    ours, plain = [], []
    want: set[str] = set()
    for i in range(clones):
        root = server.clone("many.git", work / f"clone-{i}")
        gen = write_memories(root, per_clone, random.Random(5000 + i))
        for rel in gen.paths:  # each clone in its own folder: generated names repeat from clone to clone
            target = root / "memories" / f"clone-{i}" / Path(rel).name
            target.parent.mkdir(parents=True, exist_ok=True)
            (root / rel).rename(target)
        commit_as(root, f"Clone{i}", f"bench: {per_clone} memories", env)
        want |= memory_ids(root)
        copy = work / f"plain-{i}"
        shutil.copytree(root, copy, symlinks=True)
        git(copy, "remote", "set-url", "origin", server.url("many-plain.git"), env=env)
        run([EXE, "--store", str(root), "status"], env)  # the index built, as a clone in use has it
        ours.append(root)
        plain.append(copy)
    start = time.perf_counter()
    for root in [*ours, ours[0]]:
        run([EXE, "--store", str(root), "sync"], env)
    took_ours = time.perf_counter() - start
    start = time.perf_counter()
    for root in [*plain, plain[0]]:
        git(root, "fetch", "-q", "origin", env=env)
        git(root, "merge", "-q", "--no-edit", "--allow-unrelated-histories", "origin/main", env=env)
        git(root, "push", "-q", "origin", "HEAD:main", env=env)
    took_plain = time.perf_counter() - start
    ids = memory_ids(ours[0])
    lost = len(want - ids)
    print(f"{clones} clones x {per_clone} memories merged into one store    {took_ours:6.2f} s  "
          f"({len(ids)} memories, {lost} lost, git fsck {'clean' if fsck_clean(ours[0]) else 'NOT CLEAN'})")
    print(f"  git fetch + merge + push of the same commits    {took_plain:6.2f} s   ratio {took_ours / took_plain:.1f}x "
          f"({len(memory_ids(plain[0]))} memories in the plain copy)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--new", type=int, default=100)
    ap.add_argument("--clones", type=int, default=10)
    ap.add_argument("--per-clone", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    reason = missing("http")
    if reason:
        sys.exit(f"bench_sync: {reason}")
    work = Path(tempfile.mkdtemp(prefix="bench-sync-"))
    env = {"HOME": str(work / "home"), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1",
           "CLAUDE_PLUGIN_DATA": str(work / "data"), "MEMORY_MCP_AUTO_MEMORY": "off"}
    (work / "home").mkdir()
    # The person running the stores is Ann; a teammate's commits say who they are (`commit_as`).
    (work / "home" / ".gitconfig").write_text("[user]\n\tname = Ann\n\temail = ann@example.org\n")
    os.environ.update(env)
    print(f"load average {os.getloadavg()[0]:.1f} at the start; remote: smart HTTP (lighttpd + git http-backend)")
    with serving("http", work / "served") as server:
        store = work / "store"
        generate_store(store, args.size)
        server.bare("team.git")
        server.attach(store, "team.git")
        run([EXE, "--store", str(store), "sync"], env)  # the first push; builds the index
        time.sleep(2.1)  # past the racy margin, as time does between sessions (bench_hooks.py)
        run([EXE, "--store", str(store), "status"], env)
        print(f"\n{args.size} memories")
        session_start(store, args.repeat, env)
        teammate_brings(server, store, work, args.new, max(3, args.repeat // 5), env)
        print()
        clones_merged(server, work, args.clones, args.per_clone, env)
    print(f"(load average {os.getloadavg()[0]:.1f} at the end)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
