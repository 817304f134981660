"""The stores a command works on, as its command line names them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from memory_mcp.app import scopes
from memory_mcp.truth import roots

if TYPE_CHECKING:
    from memory_mcp.app.store import Store
    from memory_mcp.truth.stamp import Writer


def chosen(args: argparse.Namespace) -> roots.Chosen:
    """The stores of a command: --store, else $MEMORY_MCP_ROOT, else those of the working folder's
    project (the plugin's), else the default store (roots.chosen_scopes)."""
    return roots.chosen_scopes(args.store, getattr(args, "user_store", None), roots.working_folder())


def open_scopes(args: argparse.Namespace) -> scopes.Scopes:
    """The command's stores (`chosen`), opened."""
    return scopes.Scopes.open(chosen(args).config)


def open_store(args: argparse.Namespace) -> Store:
    """The one store a command that changes it works on: the first of `chosen` (a stand-in that
    refuses, naming `memory-mcp trust`, for a project store not trusted on this machine)."""
    return scopes.open_trusted(chosen(args).config.project)


def cli_writer() -> Writer:
    """Who a command writes as: client `cli`, a session of its own (one command, one session), in the
    working folder's project."""
    from memory_mcp.truth.stamp import (  # a write's only: the parser loads this module
        CLI,
        Writer,
        new_session,
    )

    return Writer(CLI, new_session(), roots.working_folder())
