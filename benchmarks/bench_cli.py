"""A person's (or a script's) one CLI command, process start included, beside the prompt hook.

    python benchmarks/bench_cli.py [--size 1000] [--repeat 15]

Each call is a new `memory-mcp` process, as from a shell: `recall QUERY`, `remember TEXT` (a new
memory each time: a write, a commit) and, as the yardstick, `hook UserPromptSubmit` (the prompt
hook, which imports only what it uses) on the same store in the same run: the hook and recall
alternate call by call on the settled store, then the remembers run. The target: the p50 of `recall` and of `remember` within 1.5x of the prompt
hook's. Rows give wall-clock and CPU (user + system) time of the process."""

from __future__ import annotations

import argparse
import json
import os
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    env = {"HOME": str(work), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "CLAUDE_PLUGIN_DATA": str(work / "data"),
           "MEMORY_MCP_AUTO_MEMORY": "off", "GIT_CONFIG_NOSYSTEM": "1"}
    store = work / "store"
    generate_store(store, args.size)
    # Built once, then settled past the racy margin, as a store is between sessions (bench_hooks.py).
    subprocess.run([str(EXE), "status", "--store", str(store)], capture_output=True, env=env, check=True)
    time.sleep(2.1)
    subprocess.run([str(EXE), "status", "--store", str(store)], capture_output=True, env=env, check=True)
    queries = [PROMPTS[i % len(PROMPTS)][0] for i in range(args.repeat)]
    hook_inputs = [json.dumps({"session_id": f"s{i}", "cwd": str(work), "prompt": q}) for i, q in enumerate(queries)]
    out: dict[str, Times] = {"hook UserPromptSubmit": ([], []), "recall": ([], []), "remember": ([], [])}
    print(f"{args.size} memories (load average {os.getloadavg()[0]:.1f} at the start)")
    # The hook and recall alternate on the settled store; then the writes. The hook is timed on the
    # settled store only (its fast path, glance.py), the stricter yardstick for both commands.
    for i in range(args.repeat):
        for name, argv, text in (
                ("hook UserPromptSubmit", [str(EXE), "hook", "UserPromptSubmit", "--store", str(store)], hook_inputs[i]),
                ("recall", [str(EXE), "--store", str(store), "recall", *queries[i].split()[:6]], "")):
            wall, cpu = timed([argv], [text], [env])[0]
            out[name][0].extend(wall)
            out[name][1].extend(cpu)
    for i in range(args.repeat):
        argv = [str(EXE), "--store", str(store), "remember", f"Benchmark note {i}: nightly build {i} ran on runner {i % 7}."]
        wall, cpu = timed([argv], [""], [env])[0]
        out["remember"][0].extend(wall)
        out["remember"][1].extend(cpu)
    for name, times in out.items():
        print(row(name, times))
    hook = statistics.median(out["hook UserPromptSubmit"][0])
    for name in ("recall", "remember"):
        ratio = statistics.median(out[name][0]) / hook
        print(f"{name} / prompt hook p50: {ratio:.2f}x (target <= {TARGET}x){'' if ratio <= TARGET else '  OVER'}")
    print(f"(load average {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()
