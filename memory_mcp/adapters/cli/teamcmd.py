"""`memory-mcp team init --remote URL | join | accept all|none|EMAIL... | show` and `memory-mcp share ID
--to team`: a project's team store over the git host the team already runs (`app/teamstores.py`,
`truth/teams.py`).

`join` and an `accept` rule other than `none` ask on a terminal and are refused without one, as
`trust` is: the pointer file came with a clone, and a memory or a README could tell an agent to run
them from its shell tool, which has no terminal.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from memory_mcp.adapters import render
from memory_mcp.adapters.cli import terminal
from memory_mcp.adapters.cli.registry import command
from memory_mcp.adapters.cli.stores import open_scopes
from memory_mcp.truth import options, roots, teams
from memory_mcp.truth.errors import InvalidArgument
from memory_mcp.truth.visible import shown

if TYPE_CHECKING:
    from memory_mcp.app.teamstores import TeamDone

ACTIONS = ("init", "join", "accept", "show")


def _team_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=ACTIONS, help="init: make or attach the team store and write the pointer file; "
                   "join: clone the store the pointer file names (asks); accept: whose memories in it you accept "
                   "without asking; show: the pointer, the store, the rule")
    p.add_argument("authors", nargs="*", metavar="RULE",
                   help="with accept: all, none (the default), or the authors' e-mails")
    p.add_argument("--remote", metavar="URL", help="with init: the team store's git URL (an empty repository on "
                   "your git host makes a new store; one that holds a store is attached)")


def _folder() -> Path:
    folder = roots.working_folder()
    if folder is None:
        raise InvalidArgument("the working folder is gone; run this in the project's folder.")
    return folder


def _refused(question: str, what: str, declined: str) -> int | None:
    """None when the person answers yes to `question` at a terminal; else the exit code, said why:
    2 when there is no terminal, 1 when they said no."""
    if not terminal.attached():
        return terminal.no_terminal(what)
    if terminal.yes(shown(question)):
        return None
    print(declined)
    return 1


@command("team", "the project's team store: init --remote URL, join, accept all|none|EMAIL..., show", _team_options)
def team(args: argparse.Namespace) -> int:
    from memory_mcp.app import teamstores

    if args.action != "accept" and args.authors:
        raise InvalidArgument(f"`team {args.action}` takes no other words; `team accept` takes a rule.")
    if (args.remote is not None) != (args.action == "init"):
        raise InvalidArgument("`team init` needs --remote URL, and only it takes one.")
    if args.action == "init":
        done = teamstores.init(_folder(), args.remote)
        print(shown(_done_text(done)))
        if done.wrote_pointer:
            print(shown(f"commit the pointer file so teammates can join: git add {done.pointer.name} && git commit"))
        return 0
    if args.action == "join":
        return _join(_folder())
    if args.action == "accept":
        return _accept(_folder(), args.authors)
    return _show(_folder())


def _done_text(done: TeamDone) -> str:
    what = {"made": "made a new team store and pushed it to", "attached": "attached the team store at",
            "joined": "joined the team store at", "already here": "the team store is already here, from"}[done.how]
    total = sum(done.held.values())
    by = ", ".join(f"{name} {n}" for name, n in sorted(done.held.items(), key=lambda x: (-x[1], x[0]))[:5])
    return (f"{what} {done.remote}: {done.store} ({total} memor{'y' if total == 1 else 'ies'}"
            + (f" by {by}" if by else "") + "). Memories others wrote there show marked unaccepted until "
            "`memory-mcp accept` (or `memory-mcp team accept`).")


def _join(folder: Path) -> int:
    from memory_mcp.app import teamstores

    found = teamstores.pending(folder)
    if found is None or found.error:
        teamstores.join(folder)  # says why: no pointer file, or one that is refused
        return 2
    refused = _refused(f"{found.pointer} names the team store {found.remote}. Join it: clone it to {found.store} "
                       "and let its memories reach your agent (others' marked unaccepted)?",
                       "`memory-mcp team join`", "not joined; nothing was fetched")
    if refused is not None:
        return refused
    print(shown(_done_text(teamstores.join(folder))))
    return 0


def _accept(folder: Path, rule: list[str]) -> int:
    """Set whose memories in the joined team store are accepted without `memory-mcp accept`."""
    from memory_mcp.app.store import Store

    located = roots.locate(folder, record=False)
    store = roots.team_root(located)
    if store is None:
        raise InvalidArgument("this project has no team store joined here: `memory-mcp team join` first.")
    if not rule:
        print(shown(f"{store}: accepts {_rule_text(teams.accepts(store))} without asking"))
        return 0
    lowered = [r.strip().lower() for r in rule]
    value: str | list[str] = lowered[0] if lowered in ([teams.ACCEPT_ALL], [teams.ACCEPT_NONE]) else lowered
    if isinstance(value, list) and not all("@" in r and r not in (teams.ACCEPT_ALL, teams.ACCEPT_NONE) for r in value):
        raise InvalidArgument("`team accept` takes all, none, or authors' e-mails (name@host), one or more.")
    if value != teams.ACCEPT_NONE:
        refused = _refused(f"Accept the memories {_rule_text(value)} write in {store} without asking? Author names "
                           "and e-mails come from git commits and can be forged by anyone who can push there.",
                           "`memory-mcp team accept`", "nothing changed")
        if refused is not None:
            return refused
    teams.set_accepts(store, value)
    opened = Store.open(store, create=False)
    try:
        opened.accept_by_rule()
    finally:
        opened.close()
    print(shown(f"{store}: accepts {_rule_text(value)} without asking"))
    return 0


def _rule_text(rule: str | frozenset[str] | list[str]) -> str:
    if rule == teams.ACCEPT_ALL:
        return "every author's memories"
    if rule == teams.ACCEPT_NONE or not rule:
        return "no one's memories (each waits for `memory-mcp accept`)"
    return "the memories of " + ", ".join(sorted(rule))


def _show(folder: Path) -> int:
    located = roots.locate(folder, record=False)
    found = roots.team(located)
    if found is None:
        print(f"{located.project} has no {teams.POINTER}: `memory-mcp team init --remote URL` makes a team store")
        return 0
    if found.error:
        print(shown(found.error))
        return 2
    print(shown(f"pointer  {found.pointer}\nremote   {found.remote}\nstore    {found.store}"
                + ("" if found.store is not None and found.store.exists() else " (not cloned here)")))
    if found.joined and found.store is not None:
        print(shown(f"joined   yes; accepts {_rule_text(teams.accepts(found.store))} without asking"))
    else:
        print("joined   no: `memory-mcp team join` (in a terminal) clones it and uses it here")
    return 0


def _share_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="the memory to move (its id stays)")
    p.add_argument("--to", choices=["team"], default="team", help="the store to move it to: the project's team store")


@command("share", "move one of your memories into the project's team store (the memory_share tool)", _share_options,
         user_store=True)
def share(args: argparse.Namespace) -> int:
    scopes = open_scopes(args)
    try:
        print(render.share(scopes.share(options.Share(id=args.id, to=args.to))))
    finally:
        scopes.close()
    return 0
