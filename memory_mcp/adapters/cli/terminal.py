"""Asking the person at a terminal. Trusting a store, joining a team and accepting others' memories
are the person's decisions: each asks on a terminal and is refused without one, since an agent's
shell tool has none (so an agent cannot make them for the person)."""

from __future__ import annotations

import sys


def attached() -> bool:
    """Whether a person can answer here: standard input and output are both a terminal."""
    return sys.stdin.isatty() and sys.stdout.isatty()


def no_terminal(what: str) -> int:
    """Say that `what` needs a terminal, on standard error; the exit code to return (2)."""
    print(f"memory-mcp: {what} asks on a terminal, and none is attached (an agent's shell tool has none): run "
          "it yourself in a terminal.", file=sys.stderr)
    return 2


def yes(question: str) -> bool:
    """Ask `question` (shown as given: escape memory text first); whether the answer is yes."""
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
