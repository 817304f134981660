"""`memory-mcp`: the server (default) and commands for people. Thin: every command calls the store."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

# Only what the hook path needs is imported here: a hook is a new process on every prompt
# (benchmarks/bench_hooks.py). The other commands import their modules, and argparse, when they run.
from memory_mcp.adapters import render
from memory_mcp.app import scopes
from memory_mcp.truth import globs, roots, words
from memory_mcp.truth.errors import InvalidArgument, StoreError
from memory_mcp.truth.options import Recall

if TYPE_CHECKING:
    import argparse

    from memory_mcp.app.store import Store


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `memory-mcp` console script. Exit codes: 0 done, 1 done with refusals or
    drift, 2 error."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv):  # read without argparse and the command set
        return _hook_command(argv[1:])
    from memory_mcp.adapters.cli import commands
    from memory_mcp.adapters.cli.parser import parser
    from memory_mcp.adapters.serve.launch import configure_logging

    args = parser().parse_args(argv)
    command = args.command or "serve"
    configure_logging(args.log_level or os.environ.get("MEMORY_MCP_LOG_LEVEL") or "info")
    if command == "hook":  # before anything that can fail: a hook exits non-zero only for an unknown event
        return _hook(args.event, args.store, args.user_store)
    try:
        # A person reads what the commands print: messages name commands and flags, not tools. The
        # server's reader is an agent.
        with words.speaking("agent" if command == "serve" else "person"):
            roots.check_named_store(args.store, command, getattr(args, "user_store", False))
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


def _hook_command(argv: list[str]) -> int:
    """`memory-mcp hook EVENT [--store PATH] [--user-store [PATH]]`, as settings and the plugin call
    it: read by hand, since argparse and its parser were about 6 ms of CPU of each hook. `--opt=value`
    works too and other arguments are ignored, as with the full parser; a command line it cannot read
    is a hook error like any other: no output, exit 0, a line in the hook log."""
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
    return _hook(event, store, user)


def _hook(event: str, store: Path | None, user: bool | str | None) -> int:
    """`memory-mcp hook EVENT`: the hook module, with the stores the command line names (if any)."""
    from memory_mcp.adapters.hooks.events import Options
    from memory_mcp.adapters.hooks.events import main as run_hook

    user_path = roots.user_root() if user is True else (Path(str(user)) if user else None)
    return run_hook(event, Options(store, user_path))


def _serve(args: argparse.Namespace) -> int:
    from memory_mcp.adapters.serve.launch import serve

    serve(args.store, http=getattr(args, "http", False), host=getattr(args, "host", "127.0.0.1"),
          port=getattr(args, "port", 8765),
          token=getattr(args, "token", None) or os.environ.get("MEMORY_MCP_TOKEN") or None,
          user_root=roots.configured_user_root(getattr(args, "user_store", None)),
          watch=getattr(args, "watch", None))
    return 0


def _scopes(args: argparse.Namespace) -> scopes.Scopes:
    """The stores a command works on: --store (or the default) and, when configured, the user store."""
    return scopes.Scopes.open(roots.ScopeConfig(
        args.store, roots.configured_user_root(getattr(args, "user_store", None))))


def _store(args: argparse.Namespace) -> Store:
    """The one store a command that changes it works on: --store, or the default (a stand-in that
    refuses, naming `memory-mcp trust`, for a project store not trusted on this machine)."""
    return scopes.open_trusted(args.store)


def _demo(args: argparse.Namespace) -> int:
    from memory_mcp.adapters.cli.demo import run

    print(run())
    return 0


def _init(args: argparse.Namespace) -> int:
    from memory_mcp.app.store import init_store
    from memory_mcp.truth.layout import default_root

    print(f"memory store ready at {init_store(args.path or args.store or default_root())}")
    return 0


def _digest(args: argparse.Namespace) -> int:
    from memory_mcp.adapters.install import claude_code

    with words.speaking("agent" if args.hook else "person"):  # --hook: the session's agent reads it
        text = render.digest(_scopes(args).digest(), args.max_tokens)
    print(claude_code.hook_payload(text) if args.hook else text)
    return 0


def _status(args: argparse.Namespace) -> int:
    print(render.status(_scopes(args).status()))
    return 0


def _recall(args: argparse.Namespace) -> int:
    if args.file is not None and not args.file.strip():
        raise InvalidArgument("--file needs a file's path ('' names no file; without --file, recall searches "
                              "by the query).")
    # A path typed at a shell is relative to the shell's folder, and is about the project that holds it.
    typed = (Path.cwd() / args.file).resolve() if args.file else None
    file = globs.project_relative(str(typed), roots.project_root(typed.parent)) if typed else ""
    opts = Recall(" ".join(args.query), limit=args.limit, include_archived=args.all, include_deprecated=args.all,
                  as_of=args.as_of, file=file)
    print(render.recall(_scopes(args).recall(None, opts)))
    return 0


def _reindex(args: argparse.Namespace) -> int:
    from memory_mcp.adapters.cli.progress import ProgressBar

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
    from memory_mcp.adapters.cli.progress import ProgressBar

    with ProgressBar("sync") as bar:
        print(store.sync(progress=bar).summary())
    return 0


def _import(args: argparse.Namespace) -> int:
    store = _store(args)
    # Bytes: the text layer of stdin may turn bytes that are not UTF-8 into surrogates, which crash
    # later, after some memories were written; the store decodes them strictly.
    stdin = sys.stdin.buffer.read() if str(args.path) == "-" else None
    from memory_mcp.adapters.cli.progress import ProgressBar

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


def _trust(args: argparse.Namespace) -> int:
    from memory_mcp.adapters.cli import trustcmd

    return trustcmd.run(args)


def _install(args: argparse.Namespace) -> int:
    from memory_mcp.adapters.install import installers

    return installers.run(args)


_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "serve": _serve, "demo": _demo, "init": _init, "digest": _digest, "status": _status, "recall": _recall,
    "reindex": _reindex, "watch": _watch, "sync": _sync, "import": _import, "export": _export,
    "install": _install, "uninstall": _install, "trust": _trust,
}


if __name__ == "__main__":
    sys.exit(main())
