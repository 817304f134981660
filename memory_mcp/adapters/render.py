"""Compact, readable text for results: what the model reads in `content`, and what the CLI prints."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, ParamSpec

from memory_mcp.adapters import framing
from memory_mcp.truth import budget, words
from memory_mcp.truth.model import parse_iso
from memory_mcp.truth.recall import Coverage, Hit, RecallResult, ReconcileReport
from memory_mcp.truth.standing import UNACCEPTED
from memory_mcp.truth.visible import shown

if TYPE_CHECKING:  # ~30 dataclasses a hook process has no use for (truth/recall.py says why)
    from memory_mcp.truth.results import (
        PendingConflict,
        ReadResult,
        ReindexResult,
        ShareResult,
        StatusResult,
        VectorCoverage,
        VectorsResult,
    )
    from memory_mcp.truth.writeresults import ForgetResult, RememberResult

_P = ParamSpec("_P")


def _printable(render: Callable[_P, str]) -> Callable[_P, str]:
    """Its text with each control and format character shown as an escape (`visible.shown`): a
    memory file may hold ESC sequences that steer a terminal, or zero-width, bidi and tag characters
    that a model reads and a person does not see."""
    @functools.wraps(render)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> str:
        return shown(render(*args, **kwargs))
    return wrapper


def count(n: int, one: str, many: str) -> str:
    """`1 memory`, `2 memories`: a count with the word that goes with it."""
    return f"{n} {one if n == 1 else many}"


def _value(value: object) -> str:
    """A frontmatter value as a person writes it: a list as `a, b`, a map as `a: x, b: y`, not Python's
    `['a', 'b']` and `{'a': 'x'}`."""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    return ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def coverage(c: Coverage) -> str:
    text = f"index: {count(c.indexed, 'memory', 'memories')}"
    if c.unindexed:
        text += f", {c.unindexed} file(s) unindexed"
    if c.changed:
        text += f", {c.changed} file change(s) picked up"
    return text + (f" ({c.note})" if c.note else "")


AUTHOR_CHARS = 24  # a longer git author name is cut: it is shown, never trusted, and costs tokens


def provenance(h: Hit) -> str:
    """What a memory's line says of where it came from, beyond its store: `, by NAME` when its
    author is not the person, `, unaccepted` when the person has not accepted this version (about 6
    tokens for both; nothing for the person's own and accepted memories), and `, flagged: KIND` when
    its text tries to steer the model (`truth/injection.py`; 4-6 tokens a kind)."""
    name = " ".join(h.author.split())
    by = f", by {name[:AUTHOR_CHARS]}" if name else ""
    flagged = f", flagged: {' + '.join(dict.fromkeys(h.flagged))}" if h.flagged else ""
    return by + (f", {UNACCEPTED}" if h.standing == UNACCEPTED else "") + flagged


def hit(h: Hit) -> str:
    """One recall line: id, title, state when not active, type, trust, age and provenance, so a stale
    memory looks stale and someone else's looks like someone else's."""
    flags = "" if h.state == "active" else f" [{h.state}]"
    flags += f" ({h.scope} scope)" if h.scope else ""
    ents = f" {{{', '.join(h.entities)}}}" if h.entities else ""
    flags += f" [changed since: {h.changed_since}]" if h.changed_since else ""
    flags += f" [superseded since: {h.superseded_since}]" if h.superseded_since else ""
    flags += f" [{h.changed}]" if h.changed else ""
    line = f"- [{h.id}] {h.title}{flags} ({h.type}, {h.trust}, {age(h.updated)}{provenance(h)}){ents}\n  {h.excerpt}"
    if h.supersedes:
        line += "\n  replaced: " + "; ".join(f"[{r.id}] {r.title}" for r in h.supersedes)
    return line


def age(updated: str | None, now: datetime | None = None) -> str:
    """How old a memory is, the way a person says it: `today`, `3d old`, `5mo old`, `2y old`."""
    then = parse_iso(updated)  # a date alone (written by hand) is midnight UTC, like an unmarked time
    if then is None:
        return "age unknown"
    days = ((now or datetime.now(UTC)) - then).days
    if days < 1:
        return "today"
    if days < 60:
        return f"{days}d old"
    return f"{days // 30}mo old" if days < 730 else f"{days // 365}y old"


@_printable
def recall(r: RecallResult) -> str:
    if not r.results:
        lines = ["no memories match. " + coverage(r.coverage)]
    else:
        lines = [hit(h) for h in r.results]
        if r.truncated:
            lines.append("(more results were cut by max_tokens)")
        lines.append(coverage(r.coverage))
    if r.pending_conflicts:
        lines.append(f"{r.pending_conflicts} pending conflict(s): see {words.op('status')}")
    if r.unknown_entities:
        lines.append("entities not in dictionary.md: " + ", ".join(r.unknown_entities))
    return "\n".join(lines)


@_printable
def remember(r: RememberResult) -> str:
    if r.duplicate:
        return f"already remembered as [{r.id}] {r.title} ({r.path}); nothing written"
    lines = [f"remembered [{r.id}] {r.title} -> {r.path}"]
    if r.superseded:
        lines.append("supersedes (now archived): " + ", ".join(r.superseded))
    for c in r.conflicts:
        shared = f"shared entities {', '.join(c.shared_entities)}; " if c.shared_entities else ""
        lines.append(f"possible conflict with [{c.id}] {c.title}: {shared}{c.age_days} days apart; "
                     f"latest wins: {'yes' if c.latest_wins_eligible else 'unclear'}\n  {c.excerpt}")
    if r.unknown_entities:
        lines.append("entities not in dictionary.md: " + ", ".join(r.unknown_entities))
    lines += r.warnings
    return "\n".join(lines)


@_printable
def read(r: ReadResult) -> str:
    lines = [f"[{r.id}] {r.path} ({r.state})"]
    if r.author or r.standing:
        lines.append(f"author: {r.author or '(not committed yet)'}" + (f" ({r.standing})" if r.standing else ""))
    if r.chain.superseded_by:
        lines.append("superseded by: " + " -> ".join(r.chain.superseded_by))
    if r.chain.supersedes:
        lines.append("supersedes: " + ", ".join(r.chain.supersedes))
    lines += [f"{k}: {_value(v)}" for k, v in r.frontmatter.items() if k not in ("id", "state")]
    lines += ["", r.body.rstrip(), ""]
    lines += [f"{h.date[:10]} {h.commit[:10]} {h.message}" for h in r.history[:10]]
    lines += r.warnings
    return "\n".join(lines)


@_printable
def share(r: ShareResult) -> str:
    return (f"{r.message} (team store commit {r.team_commit[:10]}, your store's commit {r.own_commit[:10]})")


@_printable
def forget(r: ForgetResult) -> str:
    return "\n".join([r.message, *r.warnings])


def _committed(committed: bool) -> str:
    return ("already in git history: rewrite it too, and change the credential" if committed
            else "not committed: git history does not have it")


@_printable
def pair(p: PendingConflict) -> str:
    """One open conflict pair on one line."""
    return f"[{p.id}] {p.title} <> [{p.other_id}] {p.other_title}"


def _pending_heading(shown: int, total: int) -> str:
    if total <= shown:
        return "pending conflicts"
    return (f"pending conflicts ({shown} of {total}, {total - shown} more: `memory-mcp conflicts` lists them all "
            "and settles them in bulk)")


@_printable
def status(r: StatusResult) -> str:
    c = r.counts
    by_state = ", ".join(f"{k} {v}" for k, v in sorted(c.get("by_state", {}).items())) or "empty"
    lines = [f"store {r.store}: {count(c.get('total', 0), 'memory', 'memories')} ({by_state})", coverage(r.coverage)]
    sections = [
        ("notices (where the store and its index came from)", r.notices),
        ("unindexed files", [f"{u.path}: {u.reason}" for u in r.unindexed]),
        ("files without an id", [f"{p.path}: {p.detail}" for p in r.provisional]),
        (_pending_heading(len(r.pending_conflicts), r.pending_conflicts_total),
         [pair(p) for p in r.pending_conflicts]),
        ("due for review", [f"[{x.id}] {x.title} ({x.detail})" for x in r.review_due]),
        ("distillation candidates", [f"[{x.id}] {x.title}" for x in r.distill_candidates]),
        ("withheld (misleading)", [f"[{x.id}] {x.title} ({x.detail})" for x in r.withheld]),
        ("file memories whose files changed since they were written",
         [f"[{x.id}] {x.title} ({x.detail})" for x in r.files_changed]),
        (f"credentials in files (remove them; recall and {words.op('read')} show them masked)",
         [f"{f.path}: {f.kind} ({_committed(f.committed)})" for f in r.secrets]),
        ("dictionary.md lines not read (indented; remove the indent to make them entries)", r.dictionary_skipped),
        ("flagged (text that tries to steer the model: kept, marked wherever shown; read it, then fix, keep or "
         f"{words.op('forget')} it)", [f"[{f.id}] {f.path}: {f.kind} on line {f.line}, {f.reason}"
                                      for f in r.flagged]),
    ]
    for name, items in sections:
        if items:
            lines.append(f"{name}:")
            lines += [f"  - {i}" for i in items]
    if r.distill_candidates:
        lines.append("  hint: distil related old episodes into one knowledge memory that supersedes them")
    lines.append(vector_coverage(r.vectors))
    g = r.git
    lines.append(f"git: {g.get('branch')} @ {g.get('head')}" + (" (memory files changed)" if g.get("memory_files_dirty") else ""))
    last = g.get("last_sync")
    if isinstance(last, dict):
        lines.append(f"last sync: {last.get('at')} ({last.get('why')}): {last.get('outcome')}, pulled "
                     f"{last.get('pulled')} commit(s), pushed {last.get('pushed')}"
                     + (f"; {str(last['news']).removeprefix('sync: ')}" if last.get("news") else ""))
    return "\n".join(lines)


@_printable
def reconcile(r: ReconcileReport) -> str:
    parts = [f"{len(r.reindexed)} indexed", f"{len(r.removed)} removed"]
    if r.new_errors:
        parts.append(f"{len(r.new_errors)} unindexed ({', '.join(r.new_errors[:3])})")
    if r.promoted:
        parts.append(f"{len(r.promoted)} archived made active")
    return "reconciled: " + ", ".join(parts) + (f"; {r.aborted}" if r.aborted else "")


def vectors(r: VectorsResult) -> str:
    return (f"vectors ({r.model}): {r.embedded} embedded; {r.with_vectors} memories have one"
            + (f", {r.without_vectors} still without" if r.without_vectors else ""))


def vector_coverage(v: VectorCoverage) -> str:
    if not v.model:
        return f"vectors: {v.note}"
    return f"vectors ({v.model}): {v.with_vectors} of {v.with_vectors + v.without_vectors} memories" + (
        f"; {v.note}" if v.note else "")


def reindex(r: ReindexResult) -> str:
    text = f"{r.mode}: {count(r.indexed, 'memory', 'memories')} indexed, {r.unindexed} unindexed, {r.seconds}s"
    if r.mode == "verify":
        text += "\n" + ("drift: " + ", ".join(r.drift) if r.drift else "no drift")
    return text


DIGEST_TOKENS = 1000
DIGEST_HEADING = "# Memory digest"


@_printable
def digest(hits: list[Hit], max_tokens: int = DIGEST_TOKENS, max_chars: int = 1 << 30) -> str:
    """The session digest: a heading, then one framed block (`framing.block`) with one line per
    memory, in the order given, cut to `max_tokens` (at least one memory is always shown) and the
    whole text to `max_chars`. The CLI, the resource, the prompt and the SessionStart hook all print this."""
    if not hits:
        return f"{DIGEST_HEADING}\n\nNo memories yet."
    lines: list[str] = []
    more = ""
    spent = budget.estimate_tokens(DIGEST_HEADING + "\n")
    last_scope = None
    for n, h in enumerate(hits):
        # The store once for each run of its lines, not on every line.
        where = f", {h.scope}" if h.scope and h.scope != last_scope else ""
        last_scope = h.scope
        line = framing.data_line(f"- **{h.title}** ({h.type}{where}{provenance(h)}) [{h.id}]: {h.excerpt}")
        cost = budget.estimate_tokens(line)
        if n and spent + cost > max_tokens:
            more = f"({len(hits) - n} more; {words.op('recall')} finds them)"
            break
        spent += cost
        lines.append(line)
    body = framing.block("The session digest, the most important memories first.", lines,
                         max_chars - len(DIGEST_HEADING) - 2, more)
    return f"{DIGEST_HEADING}\n\n{body}"
