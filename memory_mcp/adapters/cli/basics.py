"""The commands about a whole store: serve, init, status, recall, reindex, digest, demo, watch, sync,
import and export. Each is its options and its function, registered in the command table
(registry.py); heavy modules are imported when a command runs, not when the parser is built."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from memory_mcp.adapters import render
from memory_mcp.adapters.cli.registry import command
from memory_mcp.adapters.cli.stores import chosen, cli_writer, open_scopes, open_store
from memory_mcp.truth import globs, roots, words
from memory_mcp.truth.errors import InvalidArgument
from memory_mcp.truth.recall import Recall


def _serve_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    p.add_argument("--host", default="127.0.0.1", help="HTTP address; off loopback a bearer token is required")
    p.add_argument("--port", type=int, default=8765, help="HTTP port")
    p.add_argument("--token", default=None,
                   help="bearer token HTTP clients must send (default: $MEMORY_MCP_TOKEN; prefer the variable: "
                        "other users can read command lines)")
    p.add_argument("--no-watch", dest="watch", action="store_false", default=None,
                   help="no file watcher: walk the store on every call (also MEMORY_MCP_WATCH=0)")


@command("serve", "run the MCP server (stdio; the default command)", _serve_options, user_store=True)
def serve(args: argparse.Namespace) -> int:
    from memory_mcp.adapters.serve.launch import serve

    config = chosen(args).config  # the working folder's project when nothing names a store
    serve(config.project, http=getattr(args, "http", False), host=getattr(args, "host", "127.0.0.1"),
          port=getattr(args, "port", 8765),
          token=getattr(args, "token", None) or os.environ.get("MEMORY_MCP_TOKEN") or None,
          user_root=config.user, watch=getattr(args, "watch", None), team_root=config.team)
    return 0


def _init_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", type=Path, help="the new store's folder (default: --store, else the default store)")


@command("init", "create a new store from the template", _init_options)
def init(args: argparse.Namespace) -> int:
    from memory_mcp.app.store import init_store
    from memory_mcp.truth.layout import default_root

    print(f"memory store ready at {init_store(args.path or args.store or default_root())}")
    return 0


@command("status", "counts, coverage, conflicts, review and problems", user_store=True)
def status(args: argparse.Namespace) -> int:
    print(render.status(open_scopes(args).status()))
    return 0


def _recall_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", nargs="*", help="words, identifiers or a phrase")
    p.add_argument("--limit", type=int, default=8, help="most memories to show")
    p.add_argument("--all", action="store_true", help="include archived and deprecated memories")
    p.add_argument("--as-of", default="", metavar="YYYY-MM-DD",
                   help="answer from the store as git held it at the end of that day (UTC)")
    p.add_argument("--file", metavar="PATH", help="list the memories whose paths globs match this file "
                   "(relative to this folder; globs are relative to its project's root); not with a query")


@command("recall", "search memories as an agent would", _recall_options, user_store=True)
def recall(args: argparse.Namespace) -> int:
    if args.file is not None and not args.file.strip():
        raise InvalidArgument("--file needs a file's path ('' names no file; without --file, recall searches "
                              "by the query).")
    # A path typed at a shell is relative to the shell's folder, and is about the project that holds it.
    typed = (Path.cwd() / args.file).resolve() if args.file else None
    file = globs.project_relative(str(typed), roots.project_root(typed.parent)) if typed else ""
    opts = Recall(" ".join(args.query), limit=args.limit, include_archived=args.all, include_deprecated=args.all,
                  as_of=args.as_of, file=file)
    print(render.recall(open_scopes(args).recall(None, opts)))
    return 0


def _reindex_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--verify", action="store_true", help="re-hash every file and report drift (exit 1 when found)")
    p.add_argument("--vectors", action="store_true",
                   help="compute the dense vectors memories lack (the semantic extra, $MEMORY_MCP_VECTORS)")


@command("reindex", "rebuild the index from the files", _reindex_options)
def reindex(args: argparse.Namespace) -> int:
    from memory_mcp.adapters.cli.progress import ProgressBar

    if args.vectors:
        with ProgressBar("vectors") as bar:
            print(render.vectors(open_store(args).embed_missing(progress=bar)))
        return 0
    with ProgressBar("reindex") as bar:
        result = open_store(args).reindex(verify=args.verify, progress=bar)
    print(render.reindex(result))
    return 1 if result.drift else 0


def _positive(text: str) -> int:
    """A whole number of at least 1 (a budget of 0 or less would be taken as no budget at all)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _digest_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hook", action="store_true", help="print it as Claude Code SessionStart hook JSON")
    p.add_argument("--max-tokens", type=_positive, default=render.DIGEST_TOKENS, help="token budget of the digest")


@command("digest", "print the session digest", _digest_options, user_store=True)
def digest(args: argparse.Namespace) -> int:
    from memory_mcp.adapters.install import claude_code

    with words.speaking("agent" if args.hook else "person"):  # --hook: the session's agent reads it
        text = render.digest(open_scopes(args).digest(), args.max_tokens)
    print(claude_code.hook_payload(text) if args.hook else text)
    return 0


@command("demo", "a guided run on a new temporary store (--store is refused)")
def demo(args: argparse.Namespace) -> int:
    from memory_mcp.adapters.cli.demo import run

    print(run())
    return 0


@command("watch", "keep the index warm while you edit (foreground; Ctrl-C stops)")
def watch(args: argparse.Namespace) -> int:
    store = open_store(args)
    print(f"watching {store.root} (Ctrl-C stops)", flush=True)
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a person stops it
        store.follow(lambda report: print(render.reconcile(report), flush=True))
    return 0


def _sync_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-deletions", action="store_true",
                   help="merge a remote that deletes many memories here (refused without it; a rescue ref keeps "
                        "them either way)")
    p.add_argument("--background", metavar="WHY", default=None, help=argparse.SUPPRESS)


@command("sync", "pull from and push to the store's git remote", _sync_options)
def sync(args: argparse.Namespace) -> int:
    if args.background is not None:  # the detached sync hooks and the server start (autosync.py)
        from memory_mcp.app import autosync

        return autosync.run_background(args.store or roots.named_root() or roots.user_root(), args.background)
    store = open_store(args)
    from memory_mcp.adapters.cli.progress import ProgressBar

    with ProgressBar("sync") as bar:
        print(store.sync(progress=bar, allow_deletions=args.allow_deletions).summary())
    return 0


def _import_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("kind", help="claude-code: an auto-memory folder; mcp-memory: the official "
                   "MCP memory server's JSONL graph; paste: one memory per line; export: memory-mcp JSON")
    p.add_argument("path", type=Path, help="file or folder to import; - reads standard input")
    p.add_argument("--keep-trust", action="store_true",
                   help="keep an export's trust levels (restoring your own export) instead of `imported`")


@command("import", "import memories from another tool or an export", _import_options)
def import_(args: argparse.Namespace) -> int:
    store = open_store(args)
    # Bytes: the text layer of stdin may turn bytes that are not UTF-8 into surrogates, which crash
    # later, after some memories were written; the store decodes them strictly.
    stdin = sys.stdin.buffer.read() if str(args.path) == "-" else None
    from memory_mcp.adapters.cli.progress import ProgressBar

    with ProgressBar("import") as bar:
        report = store.import_memories(args.kind, None if stdin is not None else args.path, stdin,
                                       keep_trust=args.keep_trust, progress=bar, by=cli_writer())
    print(report.summary())
    return 1 if report.refused else 0


def _export_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", type=Path, help="file to write (default: standard output)")


@command("export", "write every memory to one portable JSON file", _export_options)
def export(args: argparse.Namespace) -> int:
    store = open_store(args)
    if args.path is None:
        doc = store.export()
        sys.stdout.write(store.export_text(doc))
    else:
        doc = store.export(args.path)
        print(f"exported {render.count(doc['count'], 'memory', 'memories')} to {args.path}")
    for left in doc["not_exported"]:
        print(f"not exported: {left['path']}: {left['reason']}", file=sys.stderr)
    return 1 if doc["not_exported"] else 0
