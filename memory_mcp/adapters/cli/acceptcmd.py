"""`memory-mcp accept [ID ...] | --all | --reject ID ... | --unreject ID ... | --rejected`: the
person's decision on memories someone else added or changed in a store they trust
(`app/accepting.py`, `truth/standing.py`).

Without arguments it lists them (id, author, date, title, store). Accepting (ids or all) and
un-rejecting ask for a terminal and are refused without one, as `trust` is: a memory could tell an
agent to run `memory-mcp accept --all` from its shell tool, which has no terminal. `--all` also asks
to confirm, after the list. Rejecting needs no terminal (it only hides a memory from this person);
retiring one for everyone is `forget`. No MCP tool accepts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from memory_mcp.adapters.cli import terminal
from memory_mcp.adapters.cli.registry import command
from memory_mcp.truth import roots
from memory_mcp.truth.errors import InvalidArgument, Untrusted
from memory_mcp.truth.visible import shown

if TYPE_CHECKING:
    from memory_mcp.app.scopes import Scopes
    from memory_mcp.truth.recall import Hit


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument("ids", nargs="*", help="the memories to accept (default: list the ones not accepted)")
    p.add_argument("--all", action="store_true", help="accept every memory listed (asks to confirm)")
    p.add_argument("--reject", action="store_true", help="hide the memories named from your hooks, digest and recall")
    p.add_argument("--unreject", action="store_true", help="take a rejection back (the memory shows again, marked)")
    p.add_argument("--rejected", action="store_true", help="list the memories you rejected")


def _scopes(args: argparse.Namespace) -> Scopes:
    """The stores the hooks read here: --store, else this folder's project store and its team store;
    and the user store."""
    from memory_mcp.app.scopes import Scopes
    from memory_mcp.truth.layout import is_store

    config = roots.project_scopes(Path.cwd())
    project = args.store or config.project
    user = roots.configured_user_root(args.user_store) if args.user_store is not None else config.user
    # Only stores that exist: listing must not make an empty one.
    keep = user is not None and is_store(user) and (project is None or user != project.expanduser().resolve())
    team = config.team if args.store is None and keep else None  # the project's team store, joined here
    return Scopes.open(roots.ScopeConfig(project, user if keep else None, team))


def line(h: Hit) -> str:
    """One memory of the list: id, author, date, title, store."""
    return shown(f"{h.id}  {h.author}  {(h.updated or '')[:10]}  {h.title}  ({h.scope or 'project'} store)")


@command("accept", "list memories others added or changed; accept, reject or un-reject them", _options,
         user_store=True)
def run(args: argparse.Namespace) -> int:
    decisions = [d for d, on in (("reject", args.reject), ("unreject", args.unreject)) if on]
    if len(decisions) > 1 or (decisions and (args.all or not args.ids)) or (args.all and args.ids):
        raise InvalidArgument("give ids to accept, --all, or --reject / --unreject with ids; one at a time.")
    scopes = _scopes(args)
    try:
        if not args.ids and not args.all:
            return _list(scopes, "rejected" if args.rejected else "unaccepted")
        decision = decisions[0] if decisions else "accept"
        if decision != "reject" and not terminal.attached():
            return terminal.no_terminal("`memory-mcp accept`")
        ids = list(args.ids)
        if args.all:
            listed = _listed(scopes, "unaccepted")
            if not listed:
                print("nothing to accept: every memory is yours or accepted")
                return 0
            for h in listed:
                print(line(h))
            if not terminal.yes(f"Accept these {len(listed)} memories?"):
                print("nothing accepted")
                return 1
            ids = [h.id for h in listed]
        for name, store in scopes.stores.items():
            mine = [i for i in ids if store.peek(i) is not None]
            for said in store.decide(decision, mine) if mine else []:
                print(shown(f"{said} ({name} store)"))
            ids = [i for i in ids if i not in mine]
        if ids:
            raise InvalidArgument(f"no memory with id {', '.join(ids[:5])} in these stores; "
                                  "`memory-mcp accept` lists the memories not accepted yet.")
        return 0
    finally:
        scopes.close()


def _listed(scopes: Scopes, standing: str) -> list[Hit]:
    from dataclasses import replace

    out: list[Hit] = []
    for name, store in scopes.stores.items():
        try:
            out += [replace(h, scope=name) for h in store.unaccepted(standing)]
        except Untrusted as e:  # nothing of it reaches the model: `trust` comes first
            print(shown(f"{name} store: {e.message}"), file=sys.stderr)
    return out


def _list(scopes: Scopes, standing: str) -> int:
    listed = _listed(scopes, standing)
    for h in listed:
        print(line(h))
    if not listed:
        print("no memory is rejected" if standing == "rejected" else
              "every memory is yours or accepted: nothing someone else added or changed waits for you")
    elif standing == "unaccepted":
        print(f"{len(listed)} not accepted: hooks show them after yours, marked unaccepted. `memory-mcp accept ID` "
              "accepts one, `--all` every one, `--reject ID` hides one from you.")
    return 0
