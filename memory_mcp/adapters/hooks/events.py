"""Claude Code hook commands: `memory-mcp hook EVENT` reads the hook's JSON on stdin and prints
what the hooks reference says reaches the model, or nothing.

- SessionStart (startup, resume, clear, compact): imports new Claude Code auto-memory notes, then
  the digest as `additionalContext`. After a compaction the model lost what was injected, so the
  digest comes back and the session's "already injected" list starts again from it.
- UserPromptSubmit: recall on the prompt; only memories above a relevance floor and not injected
  earlier in the session, one line each, under a token cap. Nothing for short prompts and slash
  commands.
- Stop: once per session, after real work (3+ edit, write or shell calls) with no memory written,
  a factual note that memory_remember exists. Non-blocking: `additionalContext`, never `decision`.
- PreToolUse (Read, Edit, Write and the like): the memories whose `paths:` globs match the file,
  each once per session. With MEMORY_MCP_AUTO_MEMORY=redirect, a write into Claude Code's
  auto-memory folder is answered with a pointer to memory_remember instead (automemory.py).

A hook must never break or stall a session: the store lock is waited for 1 s at most, a watchdog
ends a slow hook, and any error means no output, exit 0 and one line in the hook log.
The module imports only the standard library at the top; the store loads when an event needs it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_mcp.adapters import framing
from memory_mcp.adapters.hooks import automemory, relevance, syncing
from memory_mcp.adapters.hooks import state as hookstate
from memory_mcp.adapters.hooks import stop as stop_note
from memory_mcp.adapters.hooks.watchdog import watchdog
from memory_mcp.adapters.render import age, provenance
from memory_mcp.truth import globs, standing
from memory_mcp.truth.recall import Recall

if TYPE_CHECKING:
    from memory_mcp.app.scopes import Scopes
    from memory_mcp.truth.recall import Hit

LOCK_WAIT_SECONDS = 1.0
OUTPUT_CAP = 10_000  # Claude Code caps additionalContext at 10,000 characters
PROMPT_TOKENS = int(os.environ.get("MEMORY_MCP_PROMPT_TOKENS") or 300)
EXCERPT_CHARS = 160
FILE_TOOLS = frozenset({"Read", "Edit", "MultiEdit", "Write", "NotebookEdit"})
FILE_MEMORIES = 8  # the most memories one file brings
# A notice about a store for SessionStart: its key (told once per key) and its text, made only when told.
Notice = tuple[str, Callable[[], str]]
_ID = re.compile(r"\[([0-9A-HJKMNP-TV-Z]{26})\]")


@dataclass
class Options:
    """How the hook finds its stores: named ones (a settings file written by `install claude-code`),
    else chosen from the session's folder (the plugin)."""

    store: Path | None = None
    user_store: Path | None = None


# ------------------------------------------------------------------ entry point
def main(event: str, options: Options | None = None, stdin: str | None = None) -> int:
    """Run one hook: read its JSON, print its answer (or nothing). Returns 0, or 1 for an event it
    does not know: a typo in a settings file must be seen (a line on stderr, which Claude Code shows),
    yet must not block the session, as exit 2 would."""
    options = options or Options()
    name = _event_name(event)
    if name not in EVENTS:
        shown = f"unknown hook event {event!r}"
        print(f"memory-mcp hook: {shown}; use one of {', '.join(EVENTS)}.", file=sys.stderr)
        hookstate.log(f"{shown} (one of {', '.join(EVENTS)})")
        return 1
    try:
        with watchdog(EVENTS[name].watchdog_s):
            payload = json.loads(sys.stdin.read() if stdin is None else stdin or "{}")
            if not isinstance(payload, dict):
                raise ValueError("hook input is not a JSON object")
            out = handle(name, payload, options)
    except BaseException as e:  # noqa: BLE001 - a hook's failure must never reach the session
        if isinstance(e, KeyboardInterrupt):
            raise
        hookstate.log(f"{name}: {type(e).__name__}: {e}")
        return 0
    if out:
        sys.stdout.write(out + "\n")
    return 0


def _event_name(event: str) -> str:
    """`session-start`, `SessionStart` and `sessionstart` all name the same event."""
    flat = event.replace("-", "").replace("_", "").lower()
    return next((e for e in EVENTS if e.lower() == flat), event)


def handle(event: str, payload: dict[str, Any], options: Options) -> str:
    """The text to print for one hook event (empty: nothing)."""
    if event not in EVENTS:
        raise ValueError(f"unknown hook event {event!r}; one of {', '.join(EVENTS)}")
    return EVENTS[event].handler(payload, options)


def _output(event: str, context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context[:OUTPUT_CAP]}})


# ------------------------------------------------------------------ stores
def session_folder(payload: dict[str, Any]) -> Path:
    """The folder the session works in: the hook's `cwd`, else $CLAUDE_PROJECT_DIR, else ours."""
    return Path(payload.get("cwd") or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())


def store_roots(payload: dict[str, Any], options: Options, create: bool = False,
                notices: list[Notice] | None = None) -> dict[str, Path]:
    """The stores of this session that exist, by scope, the project's first (a hook reads; it
    creates the project store only to import auto memory into it, and only the one found from the
    git root: a store the command line names and that is gone was moved, and recreating it empty
    would hide the memories). Stores `admitted` leaves out are told in `notices`."""
    from memory_mcp.truth import roots
    from memory_mcp.truth.layout import is_store

    if options.store is None and roots.named_root() is not None:  # as on every path: it overrides the project's
        options = Options(roots.named_root(), options.user_store)
    if options.store is not None:
        pairs: list[tuple[str, Path | None]] = [(roots.PROJECT, options.store.expanduser())]
        if options.user_store is not None:
            pairs.append((roots.USER, options.user_store.expanduser()))
    else:
        folder = session_folder(payload)
        located = roots.locate(folder)
        project: Path | None = located.store
        if not folder.is_dir():
            # A session folder that is gone or is a file names no project: a store made for it
            # would be an empty one under ~/.memory-mcp/projects/ that no session finds again.
            hookstate.log(f"the session folder {folder} is not a folder; no project store for it")
            project = None
        team = roots.team(located)  # a pointer file not joined here is told, and its URL never fetched
        if team is not None and not team.joined and notices is not None:
            notices.append((f"team not joined {team.pointer} {team.remote} {team.error}", team.unjoined_line))
        pairs = [(roots.PROJECT, project), (roots.TEAM, team.store if team and team.joined else None),
                 (roots.USER, roots.user_root())]
    pairs = admitted(pairs, [] if notices is None else notices)
    found = {name: root for name, root in pairs if root is not None
             and (is_store(root) or (create and name == roots.PROJECT and options.store is None))}
    for name, root in pairs:
        if options.store is not None and root is not None and name not in found:
            hookstate.log(f"no memory store at {root} (named on the hook's command line); it is skipped")
    return found


def admitted(pairs: list[tuple[str, Path | None]], notices: list[Notice]) -> list[tuple[str, Path | None]]:
    """The stores a hook may read, their paths resolved. A project's `.memory` that is not a store
    of its own (a link, the project itself, its git directory, a gitlink never checked out) is
    checked on its path as given, before anything in it is opened; a store the person has not
    trusted on this machine (`consent`) is not read. Either is logged, left out and told in `notices`."""
    from memory_mcp.app import consent
    from memory_mcp.truth import identity
    from memory_mcp.truth.layout import is_store

    out: list[tuple[str, Path | None]] = []
    for name, root in pairs:
        reason = identity.refusal(root) if root is not None else None
        if reason:
            hookstate.log(f"the {name} store is refused: {reason}")
            notices.append((reason, functools.partial(str, reason)))
            continue
        if root is not None and is_store(root) and not consent.is_trusted(root):
            real = root.resolve()
            hookstate.log(f"the {name} store at {real} is not trusted on this machine; nothing from it is injected")
            notices.append((f"untrusted {real} {consent.remote_url(real)}",
                            functools.partial(_untrusted_line, real)))
            continue
        out.append((name, root.resolve() if root is not None else None))
    return out


def _untrusted_line(real: Path) -> str:
    from memory_mcp.app import consent

    return consent.untrusted_line(real, consent.held(real))


def new_notices(notices: list[Notice]) -> str:
    """The notices not given on this machine before (by key), as lines of ours outside any memory
    block; their paths and names came from a repository, so they are shown as data lines are."""
    keys: set[str] = set()
    lines = []
    for key, text in notices:
        if key not in keys and hookstate.first_time(key):
            lines.append(framing.data_line(f"memory-mcp: {text()}"))
        keys.add(key)
    return "\n".join(lines)


def open_scopes(roots: dict[str, Path]) -> Scopes:
    """The stores of `roots` (not empty), opened; a missing project store is created."""
    from memory_mcp.app.scopes import Scopes
    from memory_mcp.app.store import Store

    # Store calls wait up to a minute for a busy store; a hook waits a second, then gives up.
    opened = {name: Store.open(root, lock_timeout=LOCK_WAIT_SECONDS) for name, root in roots.items()}
    return Scopes(opened)


# ------------------------------------------------------------------ SessionStart
def session_start_event(payload: dict[str, Any], options: Options) -> str:
    """SessionStart: the digest of the session's stores, with any notice about them told once."""
    importing = automemory.mode() == "import"
    notices: list[Notice] = []
    roots = store_roots(payload, options, create=importing, notices=notices)
    notes = automemory.folder(session_folder(payload))
    notices += automemory.not_imported(roots, notes) if importing else []
    told = "\n".join(x for x in (new_notices(notices), syncing.news(roots)) if x)
    syncing.start(roots, "session start")  # the pull runs beside the session; the next prompt tells what came
    if not roots:
        return _output("SessionStart", told) if told else ""
    from memory_mcp.app import glance

    # The index as it is, when it is current and no auto-memory note waits (as the prompt hook reads).
    waiting = importing and automemory.personal(roots) is not None and automemory.pending(roots["project"], notes)
    hits = None if waiting else glance.digest(roots)
    if hits is not None:
        return session_start_output(payload, named(hits, roots), told=told)
    scopes = open_scopes(roots)
    try:
        return session_start(payload, scopes, told)
    finally:
        scopes.close()


def session_start(payload: dict[str, Any], scopes: Scopes, told: str = "") -> str:
    """Import new auto-memory notes, then return the digest as SessionStart additionalContext."""
    from memory_mcp.truth.stamp import HOOK, Writer, new_session

    imported = ""
    if automemory.mode() == "import" and automemory.personal({n: s.root for n, s in scopes.stores.items()}):
        with contextlib.suppress(Exception):  # the digest matters more than the import
            folder = session_folder(payload)
            by = Writer(HOOK, str(payload.get("session_id") or "") or new_session(), folder)
            imported = automemory.import_notes(scopes.stores["project"], automemory.folder(folder), by)
    return session_start_output(payload, named(scopes.digest(), scopes.stores), imported, told)


def session_start_output(payload: dict[str, Any], hits: list[Hit], imported: str = "", told: str = "") -> str:
    """The digest of `hits` as SessionStart additionalContext, after the notices `told` about the
    stores; what it shows is the session's "already injected" list from now on (started over after
    a compaction or /clear)."""
    from memory_mcp.adapters import render

    hookstate.prune()
    hits = [h for h in hits if relevance.injectable(h)]
    tokens = int(os.environ.get("MEMORY_MCP_DIGEST_TOKENS", "0") or 0) or render.DIGEST_TOKENS
    # The cap leaves room for the import note, so the cut at OUTPUT_CAP never reaches the block.
    text = render.digest(hits, tokens, OUTPUT_CAP - sum(len(x) + 2 for x in (imported, told) if x))
    state = hookstate.SessionState(str(payload.get("session_id", "")))
    shown = _ID.findall(text)
    if payload.get("source") in ("compact", "clear") or not state.injected:
        state.reset(shown)
    else:
        state.add(shown)
    state.save()
    return _output("SessionStart", (f"{told}\n\n" if told else "") + text + (f"\n\n{imported}" if imported else ""))


# ------------------------------------------------------------------ UserPromptSubmit
def select(hits: list[Hit], prompt: str, seen: set[str], max_tokens: int = PROMPT_TOKENS,
           now: datetime | None = None) -> list[str]:
    """The lines to inject: the hits that clear the floor (`relevance.chosen`), not injected
    before, one line each, until the token cap."""
    lines: list[str] = []
    spent = 0
    last_scope = None
    for h in in_order(relevance.chosen([h for h in hits if relevance.injectable(h)], prompt)):
        if h.id in seen:
            continue
        line = prompt_line(h, now, last_scope)
        last_scope = h.scope
        cost = len(line) // 4 + 1
        if spent + cost > max_tokens:
            break
        spent += cost
        lines.append(line)
    return lines


def named(hits: list[Hit], stores: dict[str, Any]) -> list[Hit]:
    """Hits named by their store (one store's too: a block says once which store its lines are from)."""
    return [h if h.scope else replace(h, scope=next(iter(stores))) for h in hits]


def in_order(hits: list[Hit]) -> list[Hit]:
    """Hits as a hook shows them: within the order recall gave, the person's own first, then
    accepted, then not accepted (`standing.rank`, the one key for this order; the file hook's path
    specificity, when it has one, goes before it)."""
    return sorted(hits, key=lambda h: standing.rank(h.standing))


def prompt_line(h: Hit, now: datetime | None = None, last_scope: str | None = None) -> str:
    """`- [id] type, 3d old: Title - excerpt`; the state is named when it is not active, the store
    when it differs from the line before's, the author when not the person and `unaccepted` when the
    person has not accepted this version (`render.provenance`). Ready to go inside the frame
    (`framing.data_line`), so its cost is counted as it will be shown."""
    excerpt = " ".join(h.excerpt.split())
    if len(excerpt) > EXCERPT_CHARS:
        excerpt = excerpt[:EXCERPT_CHARS].rsplit(" ", 1)[0] + "..."
    state = "" if h.state == "active" else f", {h.state}"
    scope = f", {h.scope} scope" if h.scope and h.scope != last_scope else ""
    changed = f", {h.changed}" if h.changed else ""
    return framing.data_line(f"- [{h.id}] {h.type}{state}{scope}, {age(h.updated, now)}{provenance(h)}{changed}: "
                             f"{h.title} - {excerpt}")


def user_prompt_submit(payload: dict[str, Any], options: Options) -> str:
    """Recall on the prompt; the memories that clear the floor and are new to the session."""
    prompt = str(payload.get("prompt", "")).strip()
    if not prompt:
        return ""
    roots = store_roots(payload, options)
    told = syncing.news(roots)  # what a background sync brought since the last hook
    if relevance.wants_nothing(prompt):
        return _output("UserPromptSubmit", told) if told else ""
    state = hookstate.SessionState(str(payload.get("session_id", "")))
    lines = select(recall_hits(roots, Recall(relevance.query(prompt)[:2000], limit=8)), prompt, set(state.injected))
    if not lines:
        return _output("UserPromptSubmit", told) if told else ""
    state.add(_ID.findall("\n".join(lines)))
    state.save()
    return _output("UserPromptSubmit", (f"{told}\n\n" if told else "") + prompt_block(lines, OUTPUT_CAP - len(told) - 2))


def prompt_block(lines: list[str], cap: int = OUTPUT_CAP) -> str:
    """The prompt hook's block of `lines`."""
    return framing.block("memory-mcp: stored memories that match this prompt.", lines, cap)


def recall_hits(roots: dict[str, Path], opts: Recall) -> list[Hit]:
    """Recall over the session's stores: from their indexes as they are when those are current (no
    git, YAML or lock to load: the prompt hook's budget is 250 ms), else through the stores, which
    reconcile first; nothing when an index is another version's and must be rebuilt whole."""
    from memory_mcp.app import glance

    if not roots:
        return []
    hits = glance.recall(roots, opts)
    if hits is not None:
        return named(hits, roots)
    stale = glance.other_version(roots)
    if stale is not None:
        # After an upgrade (a new index schema) the first reader rebuilds the index: at 10,000 memories
        # that outlasts the hook's own watchdog, on every prompt until one finishes, and two versions
        # sharing a store would rebuild it in turn. SessionStart, the server and the CLI rebuild it; a
        # prompt goes without its memories meanwhile.
        hookstate.log(f"the index of {stale} is from another version or was not built on this machine for "
                      "this store; this hook leaves its rebuild to the session start, the server or "
                      "`memory-mcp reindex`")
        return []
    scopes = open_scopes(roots)
    try:
        return named(scopes.recall(None, opts).results, roots)
    finally:
        scopes.close()


# ------------------------------------------------------------------ Stop
def stop(payload: dict[str, Any], options: Options) -> str:
    """At most once per session, after real work with no memory written: a non-blocking note. And a
    background push of each store written to since its last sync."""
    with contextlib.suppress(Exception):  # the note matters more than the push, which the next start retries
        syncing.start(store_roots(payload, options), "stop", only_moved=True)
    note = stop_note.note(payload)
    return _output("Stop", note) if note else ""


# ------------------------------------------------------------------ PreToolUse
def pre_tool_use(payload: dict[str, Any], options: Options) -> str:
    """A write into Claude Code's auto-memory folder, in redirect mode, is denied with a pointer to
    memory_remember; otherwise a file the tool reads or edits brings the memories whose `paths`
    globs match it, each once per session."""
    return automemory.redirect(payload, session_folder(payload)) or file_memories(payload, options)


def file_memories(payload: dict[str, Any], options: Options) -> str:
    """The memories about the file a Read, Edit or Write call names, not injected before in this session."""
    from memory_mcp.truth.roots import project_root

    tool_input = payload.get("tool_input")
    file = (tool_input.get("file_path") or tool_input.get("notebook_path")) if isinstance(tool_input, dict) else None
    if not file or payload.get("tool_name") not in FILE_TOOLS:
        return ""
    rel = globs.project_relative(str(file), project_root(session_folder(payload)))
    roots = store_roots(payload, options)
    if rel.startswith("/") or not roots:
        return ""  # outside the project no glob matches
    state = hookstate.SessionState(str(payload.get("session_id", "")))
    opts = Recall(file=rel, limit=FILE_MEMORIES, project=str(session_folder(payload)))
    lines = file_lines(recall_hits(roots, opts), state.seen)
    if not lines:
        return ""
    state.add(_ID.findall("\n".join(lines)))
    state.save()
    return _output("PreToolUse", file_block(rel, lines))


def file_lines(hits: list[Hit], seen: Callable[[str], bool]) -> list[str]:
    """The lines the file hook injects for `hits` (the memories about one file), those `seen` before
    left out, one line each, until the token cap."""
    lines, spent, last_scope = [], 0, None
    for h in in_order(hits):
        if seen(h.id) or not relevance.injectable(h):
            continue
        line = prompt_line(h, None, last_scope)
        last_scope = h.scope
        cost = len(line) // 4 + 1
        if spent + cost > PROMPT_TOKENS:
            break
        spent += cost
        lines.append(line)
    return lines


def file_block(rel: str, lines: list[str]) -> str:
    """The file hook's block of `lines` about the project file `rel`."""
    about = framing.data_line(rel)
    return framing.block(f"memory-mcp: stored memories about {about}, from their paths globs.", lines, OUTPUT_CAP)


@dataclass(frozen=True)
class Event:
    """A hook event: what answers it, and how long it may run before the watchdog ends it with no
    output (under the timeout plugin/hooks/hooks.json gives Claude Code, which would discard it)."""

    handler: Callable[[dict[str, Any], Options], str]
    watchdog_s: float


# The one table of hook events: main, the watchdog, `memory-mcp hook --help` and the installers read
# it; tests/adapters/test_hooks.py checks plugin/hooks/hooks.json against it.
EVENTS: dict[str, Event] = {
    "SessionStart": Event(session_start_event, 20),
    "UserPromptSubmit": Event(user_prompt_submit, 8),
    "Stop": Event(stop, 5),
    "PreToolUse": Event(pre_tool_use, 5),
}
