"""`memory-mcp`: the server (default) and commands for people. Thin: every command calls the store."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import memory_mcp

# Only what the hook path needs is imported here: a hook is a new process on every prompt
# (benchmarks/bench_hooks.py). The other commands import their modules when they run.
from . import globs, render, scopes
from .errors import StoreError
from .options import Recall

if TYPE_CHECKING:
    from .store import Store


def _parser() -> argparse.ArgumentParser:
    from . import commands, installers
    from .launch import LEVELS

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
    _user_store_option(s)
    s.add_argument("--no-watch", dest="watch", action="store_false", default=None,
                   help="no file watcher: walk the store on every call (also MEMORY_MCP_WATCH=0)")
    i = sub.add_parser("init", parents=[common], help="create a new store from the template")
    i.add_argument("path", nargs="?", type=Path, help="the new store's folder (default: --store, else the default store)")
    st = sub.add_parser("status", parents=[common], help="counts, coverage, conflicts, review and problems")
    _user_store_option(st)
    r = sub.add_parser("recall", parents=[common], help="search memories as an agent would")
    _user_store_option(r)
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
    d.add_argument("--max-tokens", type=int, default=render.DIGEST_TOKENS, help="token budget of the digest")
    _user_store_option(d)
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
    commands.add_parsers(sub, common, _user_store_option)
    installers.add_parsers(sub, common, _user_store_option)
    hooks_parser = sub.add_parser("hook", parents=[common], help="a Claude Code hook: reads the hook's JSON on stdin")
    hooks_parser.add_argument("event", help="SessionStart, UserPromptSubmit, Stop or PreToolUse")
    _user_store_option(hooks_parser)
    _describe(sub)
    return p


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


def _user_store_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--user-store", nargs="?", const=True, default=None, metavar="PATH",
                        help="also serve the user's global store (default $MEMORY_MCP_USER_ROOT, else "
                             "~/.memory-mcp/default); --store is then the project store")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `memory-mcp` console script. Exit codes: 0 done, 1 done with refusals or
    drift, 2 error."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hook"]:  # the common form, parsed without the whole command set
        return _hook(_hook_parser().parse_known_args(argv[1:])[0])
    from . import commands
    from .launch import configure_logging

    args = _parser().parse_args(argv)
    command = args.command or "serve"
    configure_logging(args.log_level or os.environ.get("MEMORY_MCP_LOG_LEVEL") or "info")
    if command == "hook":  # before anything that can fail: a hook never exits non-zero
        return _hook(args)
    try:
        scopes.check_named_store(args.store, command, getattr(args, "user_store", False))
        if command in commands.COMMANDS:
            return commands.COMMANDS[command](args, _scopes)
        return _COMMANDS[command](args)
    except StoreError as e:
        print(f"memory-mcp: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `memory-mcp recall x | head`: the reader left; that is not an error worth a traceback.
        sys.stderr.close()
        return 0


def _hook_parser() -> argparse.ArgumentParser:
    """`memory-mcp hook EVENT [--store PATH] [--user-store [PATH]]`, as settings and the plugin call it."""
    p = argparse.ArgumentParser(prog="memory-mcp hook")
    p.add_argument("event")
    p.add_argument("--store", type=Path, default=None)
    _user_store_option(p)
    return p


def _hook(args: argparse.Namespace) -> int:
    """`memory-mcp hook EVENT`: the hook module, with the stores the command line names (if any)."""
    from .hooks import Options
    from .hooks import main as run_hook

    user = args.user_store
    user_path = scopes.user_root() if user is True else (Path(str(user)) if user else None)
    return run_hook(args.event, Options(args.store, user_path))


def _serve(args: argparse.Namespace) -> int:
    from .launch import serve

    serve(args.store, http=getattr(args, "http", False), host=getattr(args, "host", "127.0.0.1"),
          port=getattr(args, "port", 8765),
          token=getattr(args, "token", None) or os.environ.get("MEMORY_MCP_TOKEN") or None,
          user_root=scopes.configured_user_root(getattr(args, "user_store", None)),
          watch=getattr(args, "watch", None))
    return 0


def _scopes(args: argparse.Namespace) -> scopes.Scopes:
    """The stores a command works on: --store (or the default) and, when configured, the user store."""
    return scopes.Scopes.open(scopes.ScopeConfig(
        args.store, scopes.configured_user_root(getattr(args, "user_store", None))))


def _store(args: argparse.Namespace) -> Store:
    """The one store a command that changes it works on: --store, or the default."""
    from .store import Store

    return Store.open(args.store)


def _demo(args: argparse.Namespace) -> int:
    from .demo import run

    print(run())
    return 0


def _init(args: argparse.Namespace) -> int:
    from .layout import default_root
    from .store import init_store

    print(f"memory store ready at {init_store(args.path or args.store or default_root())}")
    return 0


def _digest(args: argparse.Namespace) -> int:
    from . import claude_code

    text = render.digest(_scopes(args).digest(), args.max_tokens)
    print(claude_code.hook_payload(text) if args.hook else text)
    return 0


def _status(args: argparse.Namespace) -> int:
    print(render.status(_scopes(args).status()))
    return 0


def _recall(args: argparse.Namespace) -> int:
    # A path typed at a shell is relative to the shell's folder, and is about the project that holds it.
    typed = (Path.cwd() / args.file).resolve() if args.file else None
    file = globs.project_relative(str(typed), scopes.project_root(typed.parent)) if typed else ""
    opts = Recall(" ".join(args.query), limit=args.limit, include_archived=args.all, include_deprecated=args.all,
                  as_of=args.as_of, file=file)
    print(render.recall(_scopes(args).recall(None, opts)))
    return 0


def _reindex(args: argparse.Namespace) -> int:
    from .progress import ProgressBar

    if args.vectors:
        with ProgressBar("vectors") as bar:
            print(render.vectors(_store(args).embed_missing(progress=bar)))
        return 0
    with ProgressBar("reindex") as bar:
        result = _store(args).reindex(verify=args.verify, progress=bar)
    print(render.reindex(result))
    return 1 if result.drift else 0


def _watch(args: argparse.Namespace) -> int:
    store = _store(args)
    print(f"watching {store.root} (Ctrl-C stops)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a person stops it
        store.follow(lambda report: print(render.reconcile(report), flush=True))
    return 0


def _sync(args: argparse.Namespace) -> int:
    store = _store(args)
    from .progress import ProgressBar

    with ProgressBar("sync") as bar:
        print(store.sync(progress=bar).summary())
    return 0


def _import(args: argparse.Namespace) -> int:
    store = _store(args)
    # Bytes: the text layer of stdin may turn bytes that are not UTF-8 into surrogates, which crash
    # later, after some memories were written; the store decodes them strictly.
    stdin = sys.stdin.buffer.read() if str(args.path) == "-" else None
    from .progress import ProgressBar

    with ProgressBar("import") as bar:
        report = store.import_memories(args.kind, None if stdin is not None else args.path, stdin,
                                       keep_trust=args.keep_trust, progress=bar)
    print(report.summary())
    return 1 if report.refused else 0


def _export(args: argparse.Namespace) -> int:
    store = _store(args)
    if args.path is None:
        doc = store.export()
        sys.stdout.write(store.export_text(doc))
    else:
        doc = store.export(args.path)
        print(f"exported {render.count(doc['count'], 'memory', 'memories')} to {args.path}")
    for left in doc["not_exported"]:
        print(f"not exported: {left['path']}: {left['reason']}", file=sys.stderr)
    return 1 if doc["not_exported"] else 0


def _install(args: argparse.Namespace) -> int:
    from . import installers

    return installers.run(args)


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "serve": _serve, "demo": _demo, "init": _init, "digest": _digest, "status": _status, "recall": _recall,
    "reindex": _reindex, "watch": _watch, "sync": _sync, "import": _import, "export": _export,
    "install": _install, "uninstall": _install,
}


if __name__ == "__main__":
    sys.exit(main())
