"""Consent per store, once: a project's `.memory` the person did not make on this machine (it came
with a clone, a submodule or an archive) gives nothing to the model until they trust it.

Whoever can commit to a repository can put a `.memory/` in it, and every session start, prompt and
file read would put its text in front of the agent. So a project store is read only when this
machine has a decision for it, kept where only the person writes: the user's config folder
(`$XDG_CONFIG_HOME/memory-mcp/trust.json`, else `~/.config/memory-mcp/`), keyed by the store's real
path and its remote URL (a different clone at the same path is a different store). A store `init`,
the plugin or a hook makes on this machine is recorded when made; `memory-mcp trust` records one
after asking on a terminal; no MCP tool can.

Stores that are not a project's `.memory` are the person's own choice and need no decision: the
user store, the stores under the memory home (where this program makes them), and a path the person
names (`--store`, `MEMORY_MCP_ROOT`, `install`). That is also the upgrade rule: those are trusted
as they are, and an existing `.memory` made by an earlier version is listed once (status and the
SessionStart line) until it is trusted.

Standard library only, and no git process on the common path: every hook reads this.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from memory_mcp.truth.identity import PROJECT_FOLDER, git_dir
from memory_mcp.truth.layout import config_dir, save_config

TRUST_FILE = "trust.json"


def needs_consent(root: Path) -> bool:
    """Whether the store at `root` is one whose text needs the person's decision: a project's own."""
    return Path(os.path.abspath(root.expanduser())).name == PROJECT_FOLDER


def remote_url(root: Path) -> str:
    """The store's `origin` URL as its git config holds it ("" without one); read from the file, not
    through git."""
    gitdir = git_dir(root)
    if gitdir is None:
        return ""
    try:
        text = (gitdir / "config").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    section = re.search(r'^\[remote "origin"\]\s*$(.*?)(?=^\[|\Z)', text, re.M | re.S)
    url = re.search(r"^\s*url\s*=\s*(.+?)\s*$", section.group(1), re.M) if section else None
    return url.group(1) if url else ""


def _load() -> dict[str, Any]:
    try:
        data = json.loads((config_dir() / TRUST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"stores": {}}
    return data if isinstance(data, dict) and isinstance(data.get("stores"), dict) else {"stores": {}}


def _save(data: dict[str, Any]) -> None:
    save_config(TRUST_FILE, data)


def is_trusted(root: Path) -> bool:
    """Whether the store at `root` may reach the model: it needs no decision, or this machine
    trusted it at this real path with this remote."""
    if not needs_consent(root):
        return True
    entry = _load()["stores"].get(str(root.resolve()))
    return isinstance(entry, dict) and entry.get("remote") == remote_url(root)


def record(root: Path, how: str, held: dict[str, int] | None = None) -> None:
    """Trust the store at `root` from now on (`how`: made here by init, or trusted by the person;
    `held`: the memories by author it held then, which trusting accepts)."""
    if not needs_consent(root):
        return
    data = _load()
    data["stores"][str(root.resolve())] = {"remote": remote_url(root), "how": how,
                                           "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                           **({"held": held} if held is not None else {})}
    _save(data)


def revoke(root: Path) -> bool:
    """Forget the decision for the store at `root`; whether there was one."""
    data = _load()
    gone = data["stores"].pop(str(root.resolve()), None)
    if gone is not None:
        _save(data)
    return gone is not None


def decisions() -> dict[str, dict[str, Any]]:
    """Every store this machine trusts, by real path."""
    return {k: v for k, v in _load()["stores"].items() if isinstance(v, dict)}


def untrusted_line(root: Path, authors: dict[str, int] | None = None) -> str:
    """The one line that says a store is not trusted, for SessionStart, status and the tools'
    refusals: its path, its remote, how many memories by whom (when counted), the command."""
    remote = remote_url(root)
    where = f"{root.resolve()}" + (f" (remote {remote})" if remote else " (no remote)")
    held = ""
    if authors is not None:
        total = sum(authors.values())
        by = ", ".join(f"{name} {n}" for name, n in sorted(authors.items(), key=lambda x: (-x[1], x[0]))[:5])
        held = f" It holds {total} memor{'y' if total == 1 else 'ies'}" + (f" (by {by})" if by else "") + "."
    return (f"the project store at {where} was not made or trusted on this machine (it came with the repository, "
            f"a submodule or an archive), so nothing from it reaches the model.{held} To use it, read it, then run "
            f"`memory-mcp trust {root.resolve()}` in a terminal.")



def held(root: Path) -> dict[str, int]:
    """The memory files of the store at `root`, counted by the git author who last wrote each (for
    the line that asks the person to trust it). Runs git: only when that line is given."""
    from memory_mcp.vcs.history import History

    memories = root / "memories"
    present = {p.relative_to(root).as_posix() for p in memories.rglob("*.md") if p.is_file()}
    return History(root).authors("memories", present) if present else {}
