"""The prompt hook on a conversational store: quiet on prompts that want nothing, the right memory
for coding prompts (issue 33, item 3).

    python benchmarks/bench_chatter.py [--eval-dir ../shared/eval] [--turns 2000] [--store PATH] [-v]

The store holds the coding memories of tests/hook_eval.py and tests/chatter_set.py and `--turns`
LoCoMo turns (locomo10.json, every conversation, spread evenly), each written with
`Store.remember` as `memory_remember` writes an agent's memory: content only, no title, type or
source. The turns are noise here, never tuned on. `--store PATH` keeps the store built there and
reuses it on the next run. Each prompt of tests/chatter_set.py (the tuned set and two held-out
ones, reported apart, then summed) goes through the prompt hook's own handler in a new session; a
want-nothing prompt is quiet when the hook prints nothing, a coding prompt right when the memory it
wants is among the lines."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from chatter_set import (  # noqa: E402
    CODING,
    EXTRA_MEMORIES,
    HELD_OUT_CODING,
    HELD_OUT_WANT_NOTHING,
    SECOND_HELD_OUT_CODING,
    SECOND_HELD_OUT_WANT_NOTHING,
    WANT_NOTHING,
)
from hook_eval import MEMORIES  # noqa: E402

from memory_mcp.adapters.hooks import events as hooks  # noqa: E402
from memory_mcp.app.store import Store  # noqa: E402

ID = re.compile(r"\[([0-9A-Z]{26})\]")


def locomo_turns(eval_dir: Path, n: int) -> list[str]:
    """`n` turns' texts, taken evenly from every session of every LoCoMo conversation."""
    data = json.loads((eval_dir / "locomo10.json").read_text(encoding="utf-8"))
    turns = [t["text"] for conv in data for key, session in conv["conversation"].items()
             if re.fullmatch(r"session_\d+", key) and isinstance(session, list) for t in session if t.get("text")]
    step = max(len(turns) / n, 1.0)
    return [turns[int(i * step)] for i in range(min(n, len(turns)))]


def build(root: Path, turns: list[str]) -> dict[str, str]:
    """The store at `root` (made when missing) and the ids of its coding memories by key (kept in
    a file beside it, so a kept store is reused as it was built)."""
    keys = root.parent / f"{root.name}.keys.json"
    if root.exists() and keys.is_file():
        return dict(json.loads(keys.read_text()))
    store = Store.open(root)
    try:
        ids = {key: store.remember(content, title=title, type=kind, trust="user-stated").id
               for key, (kind, title, content) in {**MEMORIES, **EXTRA_MEMORIES}.items()}
        for text in turns:
            store.remember(text)
    finally:
        store.close()
    keys.write_text(json.dumps(ids))
    return ids


def injected(root: Path, prompt: str, session: str) -> list[str]:
    """The ids the prompt hook injects for `prompt` in a new session."""
    payload = {"session_id": session, "cwd": str(root), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    out = hooks.handle("UserPromptSubmit", payload, hooks.Options(root))
    return ID.findall(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else []


def main() -> None:
    ap = argparse.ArgumentParser()
    # ../shared/eval beside the repository, or beside the folder of worktrees it is one of
    found = (d / "shared" / "eval" for d in Path(__file__).resolve().parents[1:] if (d / "shared" / "eval").is_dir())
    ap.add_argument("--eval-dir", type=Path, default=next(found, Path("../shared/eval")))
    ap.add_argument("--turns", type=int, default=2000)
    ap.add_argument("--store", type=Path, default=None, help="build the store here, or reuse the one built here")
    ap.add_argument("-v", "--verbose", action="store_true", help="list the prompts the hook got wrong")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-chatter-"))
    os.environ["CLAUDE_PLUGIN_DATA"] = str(work / "data")  # the hook's session state, new each run
    root = (args.store or work / "store").resolve()
    ids = build(root, locomo_turns(args.eval_dir, args.turns))
    key_of = {v: k for k, v in ids.items()}
    print(f"store: {len(ids)} coding memories and {args.turns} conversational turns")
    totals = [0, 0, 0, 0]
    for label, nothing, coding in (("", WANT_NOTHING, CODING),
                                   (" (held out)", HELD_OUT_WANT_NOTHING, HELD_OUT_CODING),
                                   (" (second held out)", SECOND_HELD_OUT_WANT_NOTHING, SECOND_HELD_OUT_CODING)):
        quiet, right = measure(root, key_of, label, nothing, coding, args.verbose)
        totals = [a + b for a, b in zip(totals, (quiet, len(nothing), right, len(coding)), strict=True)]
    quiet, n, right, m = totals
    print(f"all sets: quiet {quiet}/{n} ({quiet / n:.0%}), right memory {right}/{m} ({right / m:.0%})")


def measure(root: Path, key_of: dict[str, str], label: str, nothing: list[str], coding: list[tuple[str, str]],
            verbose: bool) -> tuple[int, int]:
    """Print how quiet the hook is on `nothing` and how often right on `coding`; return both counts."""
    chatty = [(p, got) for n, p in enumerate(nothing) if (got := injected(root, p, f"n{label}{n}"))]
    wrong, lines, noise = [], 0, 0
    for n, (prompt, key) in enumerate(coding):
        got = [key_of.get(i, "conversation") for i in injected(root, prompt, f"c{label}{n}")]
        lines += len(got)
        noise += sum(g != key for g in got)
        if key not in got:
            wrong.append((prompt, key, got))
    quiet, right = len(nothing) - len(chatty), len(coding) - len(wrong)
    print(f"quiet on want-nothing prompts{label}: {quiet}/{len(nothing)} ({quiet / len(nothing):.0%})")
    print(f"right memory for coding prompts{label}: {right}/{len(coding)} ({right / len(coding):.0%}), "
          f"{lines} lines, noise {noise / max(lines, 1):.0%}")
    if verbose:
        for prompt, got in chatty:
            print(f"  chatty: {prompt!r} got {len(got)} line(s)")
        for prompt, key, got_keys in wrong:
            print(f"  wrong: {prompt!r} wants {key}, got {got_keys}")
    return quiet, right


if __name__ == "__main__":
    main()
