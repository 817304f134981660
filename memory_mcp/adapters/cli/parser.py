"""The `memory-mcp` command line's parser: every command, its options and help pages.

Apart from main.py so that `memory-mcp hook EVENT`, a new process on every prompt, imports neither
argparse nor the command modules (their import and this parser's construction took about 6 ms of
CPU per hook); hookcmd.fast reads the hook's few arguments by itself.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import memory_mcp
from memory_mcp.truth import logs


def parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The commands of the command table (registry.py) with their options, and help pages that show
    defaults. Given the command line `argv`, only its command's page (see `registry.load` for the
    modules imported): building every page took about 3 ms of a one-shot `memory-mcp recall`. The
    command list of `--help` before a command and of an unknown command's error is whole."""
    from memory_mcp.adapters.cli import registry

    top = argparse.ArgumentParser(add_help=False)
    top.add_argument("--store", type=Path, default=None, help=STORE_HELP)
    top.add_argument("--log-level", choices=logs.LEVELS, default=None, help=LOG_HELP)
    common = _common(STORE_HELP)
    p = argparse.ArgumentParser(prog="memory-mcp", parents=[top], formatter_class=_Help,
                                description="Long-term memory for coding agents, served over MCP. Without a "
                                            "command: the MCP server over stdio.",
                                epilog="Exit codes: 0 done, 1 done with refusals or drift, 2 error.")
    p.add_argument("--version", action="version", version=f"memory-mcp {memory_mcp.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    named = command_named(argv) if argv is not None else None
    table = registry.load(named)
    if argv is not None and named in table and named in argv and not {"-h", "--help"} & set(argv[:argv.index(named)]):
        table = {named: table[named]}
    for name, cmd in table.items():
        one = sub.add_parser(name, parents=[_common(cmd.store_help) if cmd.store_help else common], help=cmd.help,
                             formatter_class=_Help, description=cmd.help)
        if cmd.options is not None:
            cmd.options(one)
        if cmd.user_store:
            user_store_option(one)
    return p


STORE_HELP = ("store folder (default: $MEMORY_MCP_ROOT, else, in a git repository or a folder whose project has a "
              "store, the project's store and the user's, as the plugin chooses them; else ~/.memory-mcp/default; "
              "`memory-mcp where` shows which)")
LOG_HELP = "what goes to stderr (default: $MEMORY_MCP_LOG_LEVEL, else info)"


def _common(store_help: str) -> argparse.ArgumentParser:
    """--store and --log-level for a subcommand. They must not default there, or they would undo
    `memory-mcp --store X status`."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", type=Path, default=argparse.SUPPRESS, help=store_help)
    common.add_argument("--log-level", choices=logs.LEVELS, default=argparse.SUPPRESS, help=LOG_HELP)
    return common


class _Help(argparse.HelpFormatter):
    """Help that shows each option's default where it has one worth showing (not None, off or empty)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (action.option_strings and "default" not in text and default is not None and default is not False
                and default is not argparse.SUPPRESS and default != [] and default != ""):
            text += " (default: %(default)s)"
        return text


def user_store_option(parser: argparse.ArgumentParser) -> None:
    """`--user-store [PATH]`, on the commands that can serve the user's store beside --store."""
    parser.add_argument("--user-store", nargs="?", const=True, default=None, metavar="PATH",
                        help="also serve the user's global store (default $MEMORY_MCP_USER_ROOT, else "
                             "~/.memory-mcp/default); --store is then the project store")


def command_named(argv: list[str]) -> str | None:
    """The command `argv` names (its first word that is not an option or the top-level options'
    value); "serve", the default, when it names none and asks for no help."""
    words = iter(argv)
    for word in words:
        if word in ("--store", "--log-level"):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None if {"-h", "--help"} & set(argv) else "serve"
