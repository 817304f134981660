"""`memory-mcp install CLIENT` and `uninstall CLIENT`: registering the server with an agent's client
(the work is adapters/install/installers.py's)."""

from __future__ import annotations

import argparse

from memory_mcp.adapters.cli.registry import command
from memory_mcp.adapters.install import installers


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("client", choices=installers.CLIENTS)
    p.add_argument("--scope", choices=["local", "project", "user"], default=None,
                   help="claude-code: local (default; you, this folder), project (.mcp.json at the git root, "
                        "shared) or user (you, every folder); codex, gemini, cursor: user (default) or project")


def _install_options(p: argparse.ArgumentParser) -> None:
    _common(p)
    p.add_argument("--hook", action="store_true",
                   help="claude-code: also add a SessionStart hook that puts the digest in front of every "
                        "session")


def _run(args: argparse.Namespace) -> int:
    return installers.run(args)


install = command("install", "register the server with a client", _install_options, user_store=True)(_run)
uninstall = command("uninstall", "remove what `install` wrote for a client", _common)(_run)
