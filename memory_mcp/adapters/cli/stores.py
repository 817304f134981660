"""The stores a command works on, as its command line names them."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from memory_mcp.app import scopes
from memory_mcp.truth import roots

if TYPE_CHECKING:
    from memory_mcp.app.store import Store


def open_scopes(args: argparse.Namespace) -> scopes.Scopes:
    """--store (or the default) and, when configured, the user store."""
    return scopes.Scopes.open(roots.ScopeConfig(
        args.store, roots.configured_user_root(getattr(args, "user_store", None))))


def open_store(args: argparse.Namespace) -> Store:
    """The one store a command that changes it works on: --store, or the default (a stand-in that
    refuses, naming `memory-mcp trust`, for a project store not trusted on this machine)."""
    return scopes.open_trusted(args.store)
