"""The `memory-mcp` command line's parser: every command, its options and help pages.

Apart from cli.py so that `memory-mcp hook EVENT`, a new process on every prompt, imports neither
argparse nor the command modules (their import and this parser's construction took about 6 ms of
CPU per hook); cli.py reads the hook's few arguments by itself.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import memory_mcp
from memory_mcp.adapters import render


def parser() -> argparse.ArgumentParser:
    """Every command and option of `memory-mcp`, with help pages that show defaults."""
    from memory_mcp.adapters.cli import commands, trustcmd
    from memory_mcp.adapters.install import installers
    from memory_mcp.adapters.serve.launch import LEVELS

    help_text = "store folder (default: $MEMORY_MCP_ROOT, else ~/.memory-mcp/default)"
    log_help = "what goes to stderr (default: $MEMORY_MCP_LOG_LEVEL, else info)"
    top = argparse.ArgumentParser(add_help=False)
    top.add_argument("--store", type=Path, default=None, help=help_text)
    top.add_argument("--log-level", choices=LEVELS, default=None, help=log_help)
    # On subcommands the options must not default, or they would undo `memory-mcp --store X status`.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", type=Path, default=argparse.SUPPRESS, help=help_text)
    common.add_argument("--log-level", choices=LEVELS, default=argparse.SUPPRESS, help=log_help)
    p = argparse.ArgumentParser(prog="memory-mcp", parents=[top], formatter_class=_Help,
                                description="Long-term memory for coding agents, served over MCP. Without a "
                                            "command: the MCP server over stdio.",
                                epilog="Exit codes: 0 done, 1 done with refusals or drift, 2 error.")
    p.add_argument("--version", action="version", version=f"memory-mcp {memory_mcp.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    s = sub.add_parser("serve", parents=[common], help="run the MCP server (stdio; the default command)")
    s.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    s.add_argument("--host", default="127.0.0.1", help="HTTP address; off loopback a bearer token is required")
    s.add_argument("--port", type=int, default=8765, help="HTTP port")
    s.add_argument("--token", default=None,
                   help="bearer token HTTP clients must send (default: $MEMORY_MCP_TOKEN; prefer the variable: "
                        "other users can read command lines)")
    user_store_option(s)
    s.add_argument("--no-watch", dest="watch", action="store_false", default=None,
                   help="no file watcher: walk the store on every call (also MEMORY_MCP_WATCH=0)")
    i = sub.add_parser("init", parents=[common], help="create a new store from the template")
    i.add_argument("path", nargs="?", type=Path, help="the new store's folder (default: --store, else the default store)")
    st = sub.add_parser("status", parents=[common], help="counts, coverage, conflicts, review and problems")
    user_store_option(st)
    r = sub.add_parser("recall", parents=[common], help="search memories as an agent would")
    user_store_option(r)
    r.add_argument("query", nargs="*", help="words, identifiers or a phrase")
    r.add_argument("--limit", type=int, default=8, help="most memories to show")
    r.add_argument("--all", action="store_true", help="include archived and deprecated memories")
    r.add_argument("--as-of", default="", metavar="YYYY-MM-DD",
                   help="answer from the store as git held it at the end of that day (UTC)")
    r.add_argument("--file", metavar="PATH", help="list the memories whose paths globs match this file "
                   "(relative to this folder; globs are relative to its project's root); not with a query")
    x = sub.add_parser("reindex", parents=[common], help="rebuild the index from the files")
    x.add_argument("--verify", action="store_true", help="re-hash every file and report drift (exit 1 when found)")
    x.add_argument("--vectors", action="store_true",
                   help="compute the dense vectors memories lack (the semantic extra, $MEMORY_MCP_VECTORS)")
    d = sub.add_parser("digest", parents=[common], help="print the session digest")
    d.add_argument("--hook", action="store_true", help="print it as Claude Code SessionStart hook JSON")
    d.add_argument("--max-tokens", type=_positive, default=render.DIGEST_TOKENS, help="token budget of the digest")
    user_store_option(d)
    sub.add_parser("demo", parents=[common], help="a guided run on a new temporary store (--store is refused)")
    sub.add_parser("watch", parents=[common], help="keep the index warm while you edit (foreground; Ctrl-C stops)")
    sub.add_parser("sync", parents=[common], help="pull from and push to the store's git remote")
    imp = sub.add_parser("import", parents=[common], help="import memories from another tool or an export")
    imp.add_argument("kind", help="claude-code: an auto-memory folder; mcp-memory: the official "
                     "MCP memory server's JSONL graph; paste: one memory per line; export: memory-mcp JSON")
    imp.add_argument("path", type=Path, help="file or folder to import; - reads standard input")
    imp.add_argument("--keep-trust", action="store_true",
                     help="keep an export's trust levels (restoring your own export) instead of `imported`")
    exp = sub.add_parser("export", parents=[common], help="write every memory to one portable JSON file")
    exp.add_argument("path", nargs="?", type=Path, help="file to write (default: standard output)")
    commands.add_parsers(sub, common, user_store_option)
    installers.add_parsers(sub, common, user_store_option)
    trustcmd.add_parser(sub, common)
    hooks_parser = sub.add_parser("hook", parents=[common], help="a Claude Code hook: reads the hook's JSON on stdin")
    hooks_parser.add_argument("event", help="SessionStart, UserPromptSubmit, Stop or PreToolUse")
    user_store_option(hooks_parser)
    _describe(sub)
    return p


def _positive(text: str) -> int:
    """A whole number of at least 1 (a budget of 0 or less would be taken as no budget at all)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


class _Help(argparse.HelpFormatter):
    """Help that shows each option's default where it has one worth showing (not None, off or empty)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (action.option_strings and "default" not in text and default is not None and default is not False
                and default is not argparse.SUPPRESS and default != [] and default != ""):
            text += " (default: %(default)s)"
        return text


def _describe(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Each subcommand's help page opens with the line the command list shows, and shows defaults."""
    lines = {a.dest: a.help for a in sub._choices_actions}
    for name, parser in sub.choices.items():
        parser.formatter_class = _Help
        parser.description = parser.description or lines.get(name)


def user_store_option(parser: argparse.ArgumentParser) -> None:
    """`--user-store [PATH]`, on the commands that can serve the user's store beside --store."""
    parser.add_argument("--user-store", nargs="?", const=True, default=None, metavar="PATH",
                        help="also serve the user's global store (default $MEMORY_MCP_USER_ROOT, else "
                             "~/.memory-mcp/default); --store is then the project store")
