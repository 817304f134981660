"""A person's (or a script's) one CLI command, process start included, beside the prompt hook.

    python benchmarks/bench_cli.py [--size 1000] [--repeat 15] [--against OTHER/memory-mcp]

Each call is a new `memory-mcp` process, as from a shell: `recall QUERY`, `remember TEXT` (a new
memory each time: a write, a commit) and, as the yardstick, `hook UserPromptSubmit` (the prompt
hook, which imports only what it uses) on the same store in the same run: the hook and recall
alternate call by call on the settled store, then the remembers run. The target: the p50 of `recall` and of `remember` within 1.5x of the prompt
hook's. Rows give wall-clock and CPU (user + system) time of the process. `--against` names another
build's `memory-mcp`, run call by call beside this one on a copy of the same store, each measured
against its own prompt hook."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from bench_hooks import Times, row, timed  # noqa: E402
from hook_eval import PROMPTS  # noqa: E402
from perf import generate_store  # noqa: E402

EXE = Path(sys.executable).parent / "memory-mcp"
TARGET = 1.5


def _status(exe: Path, store: Path, env: dict[str, str]) -> None:
    """`status` (exit 1 is a status with something to report, as an older build says of a newer store)."""
    done = subprocess.run([str(exe), "status", "--store", str(store)], capture_output=True, env=env)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{exe} status failed: {done.stderr.decode()[-500:]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--against", type=Path, default=None,
                    help="another build's memory-mcp, timed beside this one (on a copy of the store, call by call)")
    args = ap.parse_args()
    builds = [("", EXE), *([(" (--against)", args.against)] if args.against else [])]
    work = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    env = {"HOME": str(work), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CLAUDE_PLUGIN_DATA": str(work / "data"),
           "MEMORY_MCP_AUTO_MEMORY": "off", "GIT_CONFIG_NOSYSTEM": "1"}
    stores = [work / f"store-{k}" for k in range(len(builds))]
    generate_store(stores[0], args.size)
    for store in stores[1:]:
        shutil.copytree(stores[0], store, symlinks=True)
        # A copy's git index holds the original's stat data: our `git status` (no optional locks, so it
        # never rewrites the index) then re-read every file, 10 ms against 4 at 1,000 memories, on the
        # --against build's store only. Refreshed as a person's own `git status` would.
        subprocess.run(["git", "-C", str(store), "update-index", "-q", "--refresh"], capture_output=True, env=env)
    # Built once by its own build, then settled past the racy margin, as a store is between sessions
    # (bench_hooks.py).
    for (_, exe), store in zip(builds, stores, strict=True):
        _status(exe, store, env)
    time.sleep(2.1)
    for (_, exe), store in zip(builds, stores, strict=True):
        _status(exe, store, env)
    queries = [PROMPTS[i % len(PROMPTS)][0] for i in range(args.repeat)]
    hook_inputs = [json.dumps({"session_id": f"s{i}", "cwd": str(work), "prompt": q}) for i, q in enumerate(queries)]
    out: dict[str, Times] = {f"{name}{label}": ([], []) for name in ("hook UserPromptSubmit", "recall", "remember")
                             for label, _ in builds}
    print(f"{args.size} memories (load average {os.getloadavg()[0]:.1f} at the start)")

    def run(name: str, argv: list[str], text: str) -> None:
        wall, cpu = timed([argv], [text], [env])[0]
        out[name][0].extend(wall)
        out[name][1].extend(cpu)

    # The hook and recall alternate on the settled store, build by build; then the writes. The hook
    # is timed on the settled store only (its fast path, glance.py), the stricter yardstick for both.
    for i in range(args.repeat):
        for (label, exe), store in zip(builds, stores, strict=True):
            run(f"hook UserPromptSubmit{label}", [str(exe), "hook", "UserPromptSubmit", "--store", str(store)],
                hook_inputs[i])
            run(f"recall{label}", [str(exe), "--store", str(store), "recall", *queries[i].split()[:6]], "")
    for i in range(args.repeat):
        for (label, exe), store in zip(builds, stores, strict=True):
            run(f"remember{label}", [str(exe), "--store", str(store), "remember",
                                     f"Benchmark note {i}: nightly build {i} ran on runner {i % 7}."], "")
    for name, times in out.items():
        print(row(name, times))
    for label, _ in builds:
        hook = statistics.median(out[f"hook UserPromptSubmit{label}"][0])
        for name in ("recall", "remember"):
            ratio = statistics.median(out[f"{name}{label}"][0]) / hook
            print(f"{name}{label} / prompt hook{label} p50: {ratio:.2f}x (target <= {TARGET}x)"
                  f"{'' if ratio <= TARGET else '  OVER'}")
    print(f"(load average {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()
