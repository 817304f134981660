"""The Claude Code hook commands end to end, process start included, at 1k and 10k memories.

    python benchmarks/bench_hooks.py [--sizes 1000,10000] [--repeat 15] [--against OTHER/memory-mcp]

Each hook runs as Claude Code runs it: a new `memory-mcp hook EVENT` process fed the hook's JSON on
stdin. `python -c pass` is timed in the same run as the floor of any Python hook on this machine.
The prompt hook's target: p50 <= 250 ms at 10k memories. Prompts are the evaluation prompts of
tests/hook_eval.py (most match nothing in a generated store: the search still runs in full).

Each row gives wall-clock time and the CPU time (user + system) of the hook process: on a machine
shared with other work the wall clock grows with the load, the CPU time much less. The store is
settled first (its files older than the last walk by the racy margin), as a store is between
sessions: the prompt and file hooks then read the index as it is (glance.py).

`--against` names another build's `memory-mcp` (say a worktree of main with its own venv): each hook
then runs on both, one call after the other on the same input and a copy of the same store each, so
the two rows of a hook share the machine's load.

The project is a git repository, and one memory about `src/billing/tax.py` is written with the CLI in
it (so the build stamps the project's HEAD commit), after which three commits change that file: the
row "PreToolUse (a changed file)" reads it, and a build that marks stale file memories
counts those commits (a `git rev-list` on its first call for this HEAD, the kept count after)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from hook_eval import PROMPTS  # noqa: E402
from perf import generate_store  # noqa: E402

EXE = Path(sys.executable).parent / "memory-mcp"


Times = tuple[list[float], list[float]]


def timed(argvs: list[list[str]], inputs: list[str], envs: list[dict[str, str]]) -> list[Times]:
    """Wall-clock and CPU milliseconds of one process per input, for each command line and its
    environment (the command lines alternate on each input)."""
    out: list[Times] = [([], []) for _ in argvs]
    for text in inputs:
        for argv, env, (wall, cpu) in zip(argvs, envs, out, strict=True):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(argv, input=text, capture_output=True, text=True, env=env, check=True)
            wall.append((time.perf_counter() - start) * 1000)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    return out


def row(name: str, times: Times) -> str:
    wall, cpu = sorted(times[0]), sorted(times[1])
    return (f"{name:<34} p50 {statistics.median(wall):7.1f} ms   p95 {wall[int(0.95 * (len(wall) - 1))]:7.1f} ms"
            f"   cpu p50 {statistics.median(cpu):7.1f} ms")


def main() -> None:
    """Print one table per store size."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--against", type=Path, default=None, help="another build's memory-mcp, timed beside this one")
    args = ap.parse_args()
    builds = [("", EXE), *([(" (--against)", args.against)] if args.against else [])]
    work = Path(tempfile.mkdtemp(prefix="bench-hooks-"))
    env = {"HOME": str(work), "PATH": "/usr/bin:/bin", "CLAUDE_PLUGIN_DATA": str(work / "data"),
           "MEMORY_MCP_AUTO_MEMORY": "off"}
    transcript = work / "t.jsonl"
    transcript.write_text("\n".join(json.dumps({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "name": "Edit", "input": {}}]}}) for _ in range(200)) + "\n")
    for n in (int(s) for s in args.sizes.split(",")):
        generate_store(work / f"store-{n}-0", n)
        project = work / f"project-{n}"
        _project_with_a_changed_file(project, [str(exe) for _, exe in builds], work / f"store-{n}-0", env)
        # Each build gets its own copy of the store: two versions' indexes may differ in schema, and
        # each would rebuild the other's on every call.
        stores = [work / f"store-{n}-{b}" for b in range(len(builds))]
        for root in stores[1:]:
            shutil.copytree(stores[0], root, symlinks=True)
        # The index is built once, as the MCP server does on its first call (a hook's watchdog is shorter);
        # a second walk past the racy margin settles it, as time does between sessions.
        for (_, exe), root in zip(builds, stores, strict=True):
            subprocess.run([str(exe), "status", "--store", str(root)], capture_output=True, env=env, check=True)
        time.sleep(2.1)
        for (_, exe), root in zip(builds, stores, strict=True):
            subprocess.run([str(exe), "status", "--store", str(root)], capture_output=True, env=env, check=True)
        prompts = [json.dumps({"session_id": f"s{i}", "cwd": str(work), "prompt": PROMPTS[i % len(PROMPTS)][0]})
                   for i in range(args.repeat)]
        starts = [json.dumps({"session_id": f"t{i}", "cwd": str(work), "source": "startup"})
                  for i in range(args.repeat)]
        stops = [json.dumps({"session_id": f"u{i}", "cwd": str(work), "transcript_path": str(transcript)})
                 for i in range(args.repeat)]
        reads = [json.dumps({"session_id": f"v{i}", "cwd": str(project), "tool_name": "Read",
                             "tool_input": {"file_path": str(project / "src" / "billing" / "invoice.py")}})
                 for i in range(args.repeat)]
        changed = [json.dumps({"session_id": f"w{i}", "cwd": str(project), "tool_name": "Read",
                               "tool_input": {"file_path": str(project / "src" / "billing" / "tax.py")}})
                   for i in range(args.repeat)]
        print(f"\n{n} memories (load average {os.getloadavg()[0]:.1f} at the start)")
        print(row("python -c pass", timed([[sys.executable, "-c", "pass"]], [""] * args.repeat, [env])[0]))
        # Each build keeps its own session state: a Stop note given by one must not silence the other.
        envs = [{**env, "CLAUDE_PLUGIN_DATA": str(work / f"data-{n}-{b}")} for b in range(len(builds))]
        for event, name, inputs in (("UserPromptSubmit", "UserPromptSubmit", prompts),
                                    ("SessionStart", "SessionStart (digest)", starts),
                                    ("Stop", "Stop (200-call transcript)", stops),
                                    ("PreToolUse", "PreToolUse (Read of a file)", reads),
                                    ("PreToolUse", "PreToolUse (a changed file)", changed)):
            runs = timed([[str(exe), "hook", event, "--store", str(root)] for (_, exe), root in zip(builds, stores, strict=True)],
                         inputs, envs)
            for (label, _), times in zip(builds, runs, strict=True):
                print(row(f"hook {name}{label}", times))
        print(f"(load average {os.getloadavg()[0]:.1f} at the end)")


def _project_with_a_changed_file(project: Path, exes: list[str], store: Path, env: dict[str, str]) -> None:
    """A git project whose src/billing/tax.py three commits changed after a memory about it was
    written into `store` (with the first build's CLI, in the project: it stamps HEAD's commit)."""
    (project / "src" / "billing").mkdir(parents=True, exist_ok=True)
    git = ["git", "-C", str(project), "-c", "user.name=b", "-c", "user.email=b@localhost"]
    subprocess.run([*git, "init", "-q"], check=True)
    for n in range(4):
        if n == 1:
            subprocess.run([exes[0], "--store", str(store), "remember", "Tax is rounded per line, not per invoice.",
                            "--paths", "src/billing/tax.py"], cwd=project, env=env, capture_output=True, check=True)
        (project / "src" / "billing" / "tax.py").write_text(f"rate = {n}\n")
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", f"tax {n}"], check=True)


if __name__ == "__main__":
    main()
