"""`memory-mcp trust [PATH] | --list | --revoke [PATH]`: the person's consent for a project store
that came with a repository (`app/consent.py`).

Trusting asks on a terminal and is refused without one: an agent's shell tool has no terminal, so
an agent cannot trust a store it was shown; no MCP tool can either. The question shows what the
store holds (its path, remote, memories by author), which trusting accepts.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from memory_mcp.adapters.cli import terminal
from memory_mcp.adapters.cli.registry import command
from memory_mcp.app import consent
from memory_mcp.truth import identity, roots
from memory_mcp.truth.errors import InvalidArgument, UnsafeStore
from memory_mcp.truth.layout import config_dir, is_store
from memory_mcp.truth.visible import shown


def _options(t: argparse.ArgumentParser) -> None:
    t.add_argument("path", nargs="?", type=Path, help="the store (default: this folder's project store)")
    t.add_argument("--list", action="store_true", help="the stores this machine trusts")
    t.add_argument("--revoke", action="store_true", help="stop trusting the store")


@command("trust", "trust a project store that came with a repository (asks on a terminal); --list, --revoke",
         _options)
def run(args: argparse.Namespace) -> int:
    if args.list:
        decided = consent.decisions()
        for where, entry in sorted(decided.items()):
            print(shown(f"{where}  remote {entry.get('remote') or '(none)'}  {entry.get('how', '')} {entry.get('at', '')}"))
        if not decided:
            print(f"no project store is trusted on this machine ({config_dir() / consent.TRUST_FILE})")
        return 0
    path = Path(os.path.abspath((args.path or args.store or roots.project_store(Path.cwd())).expanduser()))
    if args.revoke:
        done = consent.revoke(path)
        print(f"{path}: no longer trusted" if done else f"{path}: was not trusted on this machine")
        return 0
    reason = identity.refusal(path)
    if reason:
        raise UnsafeStore(reason)
    if not is_store(path):
        raise InvalidArgument(f"no memory store at {path}; name a store (a folder with memories/ and .git).")
    if not consent.needs_consent(path) or consent.is_trusted(path):
        print(f"{path.resolve()} is already trusted on this machine (a store you made or named is yours)")
        return 0
    if not terminal.attached():
        return terminal.no_terminal("`memory-mcp trust`")
    held = consent.held(path.resolve())
    print(shown(consent.untrusted_line(path.resolve(), held)))
    print("Trusting it puts its memories in front of your agent at session start, on prompts and on file reads.")
    if not terminal.yes("Trust this store?"):
        print("not trusted; nothing changed")
        return 1
    consent.record(path.resolve(), "trusted by the person", held)
    from memory_mcp.app.store import Store

    # Trusting accepts what the store holds now (what the line counted); what arrives later is not.
    store = Store.open(path.resolve(), create=False)
    try:
        accepted = store.accept_held()
    finally:
        store.close()
    print(f"trusted: {path.resolve()} ({accepted} memor{'y' if accepted == 1 else 'ies'} accepted; "
          "`memory-mcp accept` lists what others add later)")
    return 0
