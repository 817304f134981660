"""Claude Code's own auto memory (~/.claude/projects/<project>/memory/*.md) beside memory-mcp: by
default its new and changed notes are imported into the project store at session start; with
MEMORY_MCP_AUTO_MEMORY=redirect, writes into that folder are answered with a pointer to memory_remember.
Used by the hooks (events.py)."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_mcp.adapters.hooks import state as hookstate

WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})


def mode() -> str:
    """`import` (default): new auto-memory notes are imported at session start; `redirect`: writes
    into the auto-memory folder are answered with a pointer to memory_remember; `off`."""
    mode = (os.environ.get("MEMORY_MCP_AUTO_MEMORY") or "import").strip().lower()
    return mode if mode in ("import", "redirect", "off") else "import"


def folder(project_folder: Path) -> Path:
    """Claude Code's auto-memory folder of the project holding `project_folder`:
    ~/.claude/projects/<the project root's path, every other character than letters and digits as ->/memory.
    The git root is tried first (all worktrees of a repository share one), then the folder itself."""
    from memory_mcp.truth.roots import project_root

    base = Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "projects"
    candidates = [project_root(project_folder), project_folder.expanduser().resolve()]
    folders = [base / re.sub(r"[^A-Za-z0-9]", "-", str(c)) / "memory" for c in candidates]
    return next((f for f in folders if f.is_dir()), folders[0])


def personal(roots: dict[str, Path]) -> Path | None:
    """The store auto-memory notes are imported into: the session's project store when it is the
    person's own. A project's `.memory` folder is not: it sits in the code repository, where a team
    shares it through its remote, and Claude Code's notes are machine-local and personal (the team
    store is never one either; `memory-mcp import claude-code` puts them anywhere on request)."""
    from memory_mcp.app import consent

    root = roots.get("project")
    return root if root is not None and not consent.needs_consent(root) else None


def not_imported(roots: dict[str, Path], folder: Path) -> list[tuple[str, Callable[[], str]]]:
    """The SessionStart notice (told once) that auto-memory notes waiting in `folder` are not imported
    into the session's project store, one a team shares (`personal`)."""
    store_root = roots.get("project")
    if store_root is None or personal(roots) is not None or not pending(store_root, folder):
        return []
    said = (f"Claude Code's auto-memory notes in {folder} are not imported into {store_root}: it is a project store "
            "a team can share, and personal notes stay personal. `memory-mcp import claude-code "
            f"{folder} --store PATH` imports them into a store you choose.")
    return [(f"auto-memory kept out of {store_root}", lambda: said)]


def pending(store_root: Path, folder: Path) -> bool:
    """Whether the auto-memory folder has a note that is new or changed since its last import into
    the store at `store_root` (read without opening the store)."""
    return bool(_notes(hookstate.ImportLedger(store_root), folder)[1])


def _notes(ledger: hookstate.ImportLedger, folder: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(every note's sha256 by file name, those new or changed since the ledger's import)."""
    import hashlib

    if not folder.is_dir():
        return {}, {}
    notes = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.glob("*.md"))
             if p.is_file() and not p.is_symlink()}
    return notes, {name: sha for name, sha in notes.items() if ledger.notes.get(name, {}).get("sha") != sha}


def import_notes(store: Any, folder: Path, by: Any = None) -> str:
    """Import the notes of an auto-memory folder that are new or changed since the last import;
    a changed note's new memory supersedes the one imported from its earlier text. Returns a
    one-line account for the session (empty when nothing was new). `by`: the `stamp.Writer` the
    imported memories are stamped with (the Claude Code session that found them)."""
    ledger = hookstate.ImportLedger(store.root)
    notes, changed = _notes(ledger, folder)
    if not changed:
        return ""
    report = store.import_memories("claude-code", folder, by=by)
    superseded = 0
    for new_id in report.imported:
        source = str(store.read(new_id).frontmatter.get("source", ""))
        name = source.removeprefix("claude-code memory: ")
        if name == source or name not in notes:
            continue  # a MEMORY.md line: a note of its own, nothing earlier to replace
        old = ledger.notes.get(name, {}).get("id")
        if old and old != new_id:
            with contextlib.suppress(Exception):  # the old import may have been purged by hand
                store.resolve(new_id, old, "supersede")
                superseded += 1
        ledger.notes[name] = {"sha": notes[name], "id": new_id}
    for name, sha in changed.items():  # unchanged in meaning (a duplicate) or MEMORY.md: seen at this text
        ledger.notes.setdefault(name, {})["sha"] = sha
    ledger.save()
    if not report.imported:
        return ""
    return (f"memory-mcp imported {len(report.imported)} new Claude Code auto-memory note(s) from {folder}"
            + (f"; {superseded} replace their earlier import." if superseded else "."))


def redirect(payload: dict[str, Any], session_folder: Path) -> str:
    """With MEMORY_MCP_AUTO_MEMORY=redirect, a write into the auto-memory folder is denied with a
    pointer to memory_remember (the person chose that memory lives in memory-mcp)."""
    if mode() != "redirect" or payload.get("tool_name") not in WRITE_TOOLS:
        return ""
    tool_input = payload.get("tool_input") or {}
    target = tool_input.get("file_path") if isinstance(tool_input, dict) else None
    if not target:
        return ""
    projects = folder(session_folder).parent.parent  # ~/.claude/projects
    path = Path(str(target)).expanduser()
    if not (path.resolve().is_relative_to(projects.resolve()) and "memory" in path.parts):
        return ""
    return json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "Long-term memory for this project is kept by the memory-mcp server: the "
        "memory_remember tool records this note there (searched with memory_recall in every session)."}})
