"""The command-line commands that change or read one memory: `remember`, `update`, `forget`,
`resolve`, `read`; `conflicts`, which lists the open pairs and settles them in bulk; and `reorganize`,
which moves a flat store's files into month folders. Each builds the options object the matching tool
builds and calls the same facade (through `scopes.Scopes`, so an id finds its store as it does for the tools).

The frontmatter options come from `model.settable`, as the tool parameters do: a field declared
settable in `model.Memory` gets its option here with no code."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from memory_mcp.adapters import render
from memory_mcp.adapters.cli.registry import command
from memory_mcp.adapters.cli.stores import cli_writer, open_scopes
from memory_mcp.truth import writeoptions
from memory_mcp.truth.model import BulkDecision, Decision, FieldSpec, ForgetMode, Tool, Trust, settable
from memory_mcp.truth.roots import PROJECT, TEAM, USER

# A person typing a memory at the command line is stating it; an agent's tool call defaults to inferred.
CLI_TRUST = Trust.USER_STATED.value
REORGANIZE_SHOWN = 20
PAIRS_SHOWN = 50


def _field_options(parser: argparse.ArgumentParser, tool: Tool) -> None:
    for spec in settable(tool):
        flag = "--" + spec.name.replace("_", "-")
        if spec.kind == "list":
            parser.add_argument(flag, dest=spec.name, action="append", metavar="A[,B]",
                                help=f"{spec.description} (comma-separated or repeated)")
            continue
        kind: dict[str, Any] = {"choices": [e.value for e in spec.enum]} if spec.enum is not None else {}
        if spec.kind == "number":
            kind["type"] = float
        parser.add_argument(flag, dest=spec.name, help=_field_help(spec, tool), **kind)


def _field_help(spec: FieldSpec, tool: Tool) -> str:
    if tool == "update":
        return spec.description + (" ('' clears it)" if spec.kind == "date" else "")
    default = CLI_TRUST if spec.name == "trust" else (spec.default if spec.default not in (None, "") else None)
    shown = getattr(default, "value", default)
    return spec.description + (f" (default: {shown})" if shown is not None else "")


def _fields(args: argparse.Namespace, tool: Tool) -> dict[str, object]:
    """The field values the command line gave (lists split on commas); absent ones are left out."""
    out: dict[str, object] = {}
    for spec in settable(tool):
        value = getattr(args, spec.name, None)
        if value is None:
            continue
        if spec.kind == "list":
            value = [part.strip() for item in value for part in item.split(",") if part.strip()]
        out[spec.name] = value
    if tool == "remember":
        out.setdefault("trust", CLI_TRUST)
    return out


def _remember_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("content", nargs="*", help="the memory's text (a few sentences); without it, standard input")
    p.add_argument("--title", help="short title (default: derived from the content)")
    _field_options(p, "remember")
    p.add_argument("--scope", choices=(PROJECT, TEAM, USER), help="with --user-store: the store to write to "
                   "(default: the project's; team: the project's team store, when joined)")


@command("remember", "write a new memory (the memory_remember tool)", _remember_options, user_store=True)
def remember(args: argparse.Namespace) -> int:
    content = " ".join(args.content) if args.content else sys.stdin.read()
    opts = writeoptions.Remember(content=content, title=args.title, by=cli_writer(), fields=_fields(args, "remember"))
    print(render.remember(open_scopes(args).store(args.scope).remember(opts)))
    return 0


def _update_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the memory's id")
    p.add_argument("--content", help="the new text")
    p.add_argument("--title", help="the new title")
    _field_options(p, "update")


@command("update", "change a memory's text or fields in place (memory_update)", _update_options, user_store=True)
def update(args: argparse.Namespace) -> int:
    opts = writeoptions.Update(id=args.id, content=args.content, title=args.title, by=cli_writer(),
                          fields=_fields(args, "update"))
    print(render.read(open_scopes(args).owner(args.id).update(opts)))
    return 0


def _forget_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the memory's id")
    p.add_argument("--mode", choices=[m.value for m in ForgetMode], default=ForgetMode.ARCHIVE.value,
                   help="archive: hidden from recall; deprecate: wrong (needs --reason); restore; purge: "
                        "delete the file (needs --confirm; git keeps it)")
    p.add_argument("--reason", default="", help="why it is deprecated")
    p.add_argument("--confirm", action="store_true", help="confirm a purge")


@command("forget", "archive, deprecate, restore or purge a memory (memory_forget)", _forget_options, user_store=True)
def forget(args: argparse.Namespace) -> int:
    opts = writeoptions.Forget(id=args.id, mode=args.mode, reason=args.reason, confirm=args.confirm)
    print(render.forget(open_scopes(args).owner(args.id).forget(opts)))
    return 0


def _resolve_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the memory that stays (with supersede: the one that replaces the other)")
    p.add_argument("other_id", help="the other memory of the pair")
    p.add_argument("decision", choices=[d.value for d in Decision],
                   help="supersede: id replaces other_id, which is archived; keep_both: never raised again")


@command("resolve", "settle a conflict pair (memory_resolve)", _resolve_options, user_store=True)
def resolve(args: argparse.Namespace) -> int:
    from memory_mcp.truth import options  # here: a remember builds only a write's options (writeoptions.py)

    opts = options.Resolve(id=args.id, other_id=args.other_id, decision=args.decision)
    print(open_scopes(args).owner(args.id).resolve(opts).message)
    return 0


def _read_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("memory", help="its id, or its path (memories/name.md)")


@command("read", "a whole memory with its supersede chain and history (memory_read)", _read_options, user_store=True)
def read(args: argparse.Namespace) -> int:
    scopes = open_scopes(args)
    by_path = "/" in args.memory or args.memory.endswith(".md")
    store = scopes.owner_of_path(args.memory) if by_path else scopes.owner(args.memory)
    result = store.read(path=args.memory) if by_path else store.read(id=args.memory)
    print(render.read(result))
    return 0


def _conflicts_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--commit", help="only pairs on a memory this commit wrote (an import's: its report names it)")
    p.add_argument("--id", help="only pairs on this memory")
    p.add_argument("--limit", type=int, default=PAIRS_SHOWN, help=f"pairs shown (default {PAIRS_SHOWN})")
    p.add_argument("--offset", type=int, default=0, help="pairs skipped before the first shown")
    p.add_argument("--resolve", choices=[d.value for d in BulkDecision], dest="decision",
                   help="settle every selected pair: keep_both (never raised again) or newer (the newer "
                        "memory of each pair supersedes the older), as one commit")
    p.add_argument("--yes", action="store_true", help="with --resolve: do it (without it, a dry run)")


@command("conflicts", "list the open conflict pairs, or settle them in bulk (a dry run without --yes)",
         _conflicts_options, user_store=True)
def conflicts(args: argparse.Namespace) -> int:
    from memory_mcp.truth import options

    store = open_scopes(args).store()
    opts = options.Conflicts(commit=args.commit, id=args.id, limit=args.limit, offset=args.offset,
                             decision=args.decision, apply=args.yes)
    if args.decision is None:
        page = store.conflicts(opts)
        print(f"{render.count(page.total, 'open conflict pair', 'open conflict pairs')}"
              + (f"; showing {page.offset + 1}-{page.offset + len(page.pairs)}" if page.total > len(page.pairs) else ""))
        for p in page.pairs:
            print("  " + render.pair(p))
        rest = page.total - page.offset - len(page.pairs)
        if rest > 0:
            print(f"... and {rest} more (--offset {page.offset + len(page.pairs)})")
        return 0
    result = store.resolve_all(opts)
    verb = "settled" if result.applied else "would settle"
    print(f"{verb} {render.count(len(result.settled), 'pair', 'pairs')} with {result.decision}"
          + (f" (commit {result.commit[:12]})" if result.commit else ""))
    for p in result.settled[:args.limit]:
        print("  " + render.pair(p))
    if len(result.settled) > args.limit:
        print(f"... and {len(result.settled) - args.limit} more")
    for note in result.notes:
        print(f"note: {note}")
    if result.settled and not result.applied:
        print("Run it again with --yes to settle them, as one commit (`git revert` undoes it).")
    return 0


def _reorganize_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--yes", action="store_true", help="make the moves, as one commit of renames")


@command("reorganize", "move a flat store's memories into month folders (memories/YYYY/MM/; a dry run without "
         "--yes)", _reorganize_options)
def reorganize(args: argparse.Namespace) -> int:
    result = open_scopes(args).store().reorganize(apply=args.yes)
    verb = "moved" if result.applied else "would move"
    print(f"{verb} {render.count(len(result.moves), 'memory', 'memories')} into month folders"
          + (f" (commit {result.commit[:12]})" if result.commit else ""))
    for move in result.moves[:REORGANIZE_SHOWN]:
        print(f"  {move.path} -> {move.to}")
    if len(result.moves) > REORGANIZE_SHOWN:
        print(f"  ... and {len(result.moves) - REORGANIZE_SHOWN} more")
    for left in result.skipped:
        print(f"left in place: {left.path}: {left.detail}")
    if result.moves and not result.applied:
        print("Run `memory-mcp reorganize --yes` to move them: one commit of renames, which "
              "`git log --follow <file>` follows; ids and links stay as they are.")
    return 0
