"""What the agent will see: exactly the text the hooks would inject (the SessionStart digest, the
UserPromptSubmit lines for a prompt, the PreToolUse lines for a file), built by the hooks' own
functions, for a new session, with nothing recorded: no session state, no usage."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memory_mcp.adapters import render
from memory_mcp.adapters.hooks import events, relevance
from memory_mcp.app.scopes import Scopes
from memory_mcp.truth.recall import Recall


@dataclass(frozen=True)
class Seen:
    """What one hook would inject ("" for nothing), its cost in tokens as the hooks count it
    (characters / 4), and why it is empty when it is."""

    text: str
    why_empty: str = ""

    @property
    def tokens(self) -> int:
        return len(self.text) // 4


def digest(scopes: Scopes) -> Seen:
    text = render.digest(events.named(scopes.digest(), scopes.stores), render.DIGEST_TOKENS, events.OUTPUT_CAP)
    return Seen(text, "" if text else "the stores hold no active memory to load")


def prompt(scopes: Scopes, typed: str) -> Seen:
    typed = typed.strip()
    if not typed:
        return Seen("", "type a prompt")
    if relevance.wants_nothing(typed):
        return Seen("", "the prompt hook stays quiet on this prompt (nothing left to search once chatter is set aside)")
    found = scopes.recall(None, Recall(relevance.query(typed)[:2000], limit=8), record=False).results
    lines = events.select(events.named(found, scopes.stores), typed, set())
    return Seen(events.prompt_block(lines) if lines else "", "" if lines else "no memory clears the prompt hook's bar")


def file(scopes: Scopes, path: str, project: Path | None) -> Seen:
    """The file hook's lines for `path` in `project` (the folder `memory-mcp ui` runs in, as a
    session's folder: a memory whose file changed since it was written is marked so)."""
    rel = path.strip().removeprefix("./")
    if not rel:
        return Seen("", "type a path inside the project (src/app.py)")
    opts = Recall(file=rel, limit=events.FILE_MEMORIES, project=str(project) if project else "")
    found = scopes.recall(None, opts, record=False).results
    lines = events.file_lines(events.named(found, scopes.stores), lambda _: False)
    return Seen(events.file_block(rel, lines) if lines else "", "" if lines else "no memory's paths globs match it")
