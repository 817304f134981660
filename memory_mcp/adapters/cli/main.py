"""`memory-mcp`: the server (default) and commands for people. Thin: every command is an entry of
the command table (registry.py) and calls the facade."""

from __future__ import annotations

import os
import sys

# Only what the hook path needs is imported here: a hook is a new process on every prompt
# (benchmarks/bench_hooks.py). The commands, argparse and the parser load when another command runs.
from memory_mcp.truth import roots, words
from memory_mcp.truth.errors import StoreError

# The commands that run libraries logging through `logging` themselves: it is configured before they start.
LONG_LIVED = ("serve", "ui", "watch")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `memory-mcp` console script. Exit codes: 0 done, 1 done with refusals or
    drift, 2 error."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv):  # read without argparse and the command set
        from memory_mcp.adapters.cli import hookcmd

        return hookcmd.fast(argv[1:])
    from memory_mcp.adapters.cli.parser import parser
    from memory_mcp.adapters.cli.registry import COMMANDS
    from memory_mcp.truth import logs

    args = parser(argv).parse_args(argv)
    command = args.command or "serve"
    # A command that goes well logs nothing: logging is imported when memory-mcp first logs (4 ms of
    # a one-shot command's start), except for the long-lived ones.
    logs.configure(args.log_level or os.environ.get("MEMORY_MCP_LOG_LEVEL") or "info",
                   at_once=command in LONG_LIVED)
    if command == "hook":  # before anything that can fail: a hook exits non-zero only for an unknown event
        return COMMANDS[command].run(args)
    try:
        # A person reads what the commands print: messages name commands and flags, not tools. The
        # server's reader is an agent.
        with words.speaking("agent" if command == "serve" else "person"):
            roots.check_named_store(args.store, command, getattr(args, "user_store", False))
            return COMMANDS[command].run(args)
    except StoreError as e:
        print(f"memory-mcp: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `memory-mcp recall x | head`: the reader left; that is not an error worth a traceback.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
