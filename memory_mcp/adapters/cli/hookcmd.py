"""`memory-mcp hook EVENT [--store PATH] [--user-store [PATH]]`, as settings files and the plugin
call it. A hook is a new process on every prompt, so main.py hands its command line to `fast`
before argparse and the other commands are imported (their import and the parser's construction
were about 6 ms of CPU per hook); `memory-mcp hook --help` goes through the parser as usual."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from memory_mcp.adapters.cli.registry import command
from memory_mcp.truth import roots

if TYPE_CHECKING:
    import argparse


def fast(argv: list[str]) -> int:
    """The hook's arguments read by hand: `--opt=value` works too and other arguments are ignored,
    as with the full parser; a command line it cannot read is a hook error like any other: no
    output, exit 0, a line in the hook log."""
    event, store, user = "", None, None
    rest = list(argv)
    while rest:
        word = rest.pop(0)
        name, eq, value = word.partition("=")
        has_value = bool(eq) or bool(rest and not rest[0].startswith("-"))
        if name == "--store":
            if not has_value:
                from memory_mcp.adapters.hooks import state as hookstate

                hookstate.log(f"{event or 'hook'}: --store needs a path (command line: {' '.join(argv)})")
                return 0
            store = Path(value if eq else rest.pop(0))
        elif name == "--user-store":  # a path, or alone: the configured user store
            user = (value if eq else rest.pop(0)) if has_value else True
        elif not event and not word.startswith("-"):
            event = word
    return run_hook(event, store, user)


def run_hook(event: str, store: Path | None, user: bool | str | None) -> int:
    """The hook module, with the stores the command line names (if any)."""
    from memory_mcp.adapters.hooks.events import Options
    from memory_mcp.adapters.hooks.events import main as run_event

    user_path = roots.user_root() if user is True else (Path(str(user)) if user else None)
    return run_event(event, Options(store, user_path))


def _options(p: argparse.ArgumentParser) -> None:
    from memory_mcp.adapters.hooks.events import EVENTS

    names = list(EVENTS)
    p.add_argument("event", help=f"{', '.join(names[:-1])} or {names[-1]}")


@command("hook", "a Claude Code hook: reads the hook's JSON on stdin", _options, user_store=True,
         store_help="store folder (default: $MEMORY_MCP_ROOT, else the stores of the session's folder, the hook's "
                    "`cwd`: its project's store and the user's, as the plugin chooses them; `memory-mcp where "
                    "FOLDER` shows which)")
def hook(args: argparse.Namespace) -> int:
    return run_hook(args.event, args.store, args.user_store)
