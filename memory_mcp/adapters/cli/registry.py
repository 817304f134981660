"""The one table of `memory-mcp` commands. A command is a function that runs it, registered with
`@command` beside the function that adds its options; the parser (parser.py) and the dispatch
(main.py) read this table and nothing else. The modules that hold commands are listed in MODULES,
in the order `memory-mcp --help` shows them."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the hook's fast path imports this table's module and must not pay for argparse
    import argparse

Run = Callable[["argparse.Namespace"], int]
Options = Callable[["argparse.ArgumentParser"], None]

MODULES = ("basics", "commands", "installcmd", "trustcmd", "acceptcmd", "teamcmd", "wherecmd", "uicmd", "hookcmd")


@dataclass(frozen=True)
class Command:
    """One command: its name, its line in the command list, how it runs and which options it takes.
    `user_store`: it can serve the user's store beside --store (`--user-store [PATH]`); `store_help`:
    what --store defaults to, where that is not the usual rule."""

    name: str
    help: str
    run: Run
    options: Options | None = None
    user_store: bool = False
    store_help: str | None = None


COMMANDS: dict[str, Command] = {}


def command(name: str, help: str, options: Options | None = None, user_store: bool = False,
            store_help: str | None = None) -> Callable[[Run], Run]:
    """Register the decorated function as the command `name`."""
    def register(run: Run) -> Run:
        if name in COMMANDS:
            raise ValueError(f"the command {name!r} is registered twice")
        COMMANDS[name] = Command(name, help, run, options, user_store, store_help)
        return run
    return register


def load(name: str | None = None) -> dict[str, Command]:
    """The commands of MODULES, imported in order up to the one that holds the command `name`
    (every command without a name, or for a name no module holds): a command's own process loads
    the modules before it, never the installers or the hooks of those after it."""
    for module in MODULES:
        if name is not None and name in COMMANDS:
            break
        importlib.import_module(f"{__package__}.{module}")
    return COMMANDS
