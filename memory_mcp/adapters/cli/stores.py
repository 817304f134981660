"""The stores a command works on, as its command line names them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from memory_mcp.app import scopes
from memory_mcp.truth import roots

if TYPE_CHECKING:
    from memory_mcp.app.store import Store


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
