"""The use cases that write: remember, update, forget, feedback (settling a pair is `settling`'s).
Each checks its arguments before taking the lock, writes whole files, indexes them in one transaction
and makes one commit."""

from __future__ import annotations

import re

from memory_mcp.app.access import Loaded, load, new_path, write
from memory_mcp.app.session import Session
from memory_mcp.index.db import Index
from memory_mcp.recall import conflicts, ranking
from memory_mcp.truth import injection, lifecycle, words
from memory_mcp.truth.errors import ConfirmRequired, InvalidArgument
from memory_mcp.truth.model import (
    ForgetMode,
    Memory,
    State,
    check_id,
    compose_body,
    content_key,
    derive_title,
    enum_value,
    now_iso,
    settable,
    text_key,
)
from memory_mcp.truth.stamp import Writer, stamp
from memory_mcp.truth.ulids import new_ulid
from memory_mcp.truth.validate import check_short, check_text, settable_values
from memory_mcp.truth.writeoptions import Feedback, Forget, Remember, Update
from memory_mcp.truth.writeresults import Conflict, FeedbackResult, ForgetResult, RememberResult

_STATE_OF = {ForgetMode.ARCHIVE: State.ARCHIVED, ForgetMode.DEPRECATE: State.DEPRECATED,
             ForgetMode.RESTORE: State.ACTIVE}


def remember(session: Session, opts: Remember) -> RememberResult:
    """Write a new memory (or return the existing one with the same content), run the conflict gate."""
    check_text(opts.content, opts.title, None)
    values = settable_values(opts.fields, "remember")
    # Linked by lifecycle.apply_supersede, once each target is checked.
    targets = [check_id(t) for t in values.pop("supersedes", [])]  # type: ignore[attr-defined]
    body = compose_body(opts.content, opts.title)
    with session.call(write=True) as index:
        names, unknown = session.dictionary.normalise_all(list(values.pop("entities", [])))  # type: ignore[call-overload]
        if not targets:
            # Without a title (passed or as a heading) the body's heading is derived, so the same
            # text under another title is the same memory too.
            untitled = not (opts.title or "").strip() and not opts.content.lstrip().startswith("#")
            same = [*index.by_content(content_key(body)), *(index.by_text(text_key(body)) if untitled else [])]
            dup = next((r for r in same if r.state != State.DEPRECATED), None)
            if dup:
                return RememberResult(id=dup.id, path=dup.path, title=dup.title, state=dup.state,
                                      duplicate=True, unknown_entities=unknown,
                                      warnings=["the same content is already remembered; nothing was written"])
        losers = [load(session, index, t) for t in targets]
        now = now_iso()
        mem = Memory(id=new_ulid(), body=body, state=State.ACTIVE, entities=names, created=now, updated=now,
                     written_by=written_by(opts.by) or {}, **values)  # type: ignore[arg-type]
        if losers:
            # The reads' module only for a supersede: a plain remember needs none of it (2 ms).
            from memory_mcp.app.reads import superseded_by

            for loser in losers:
                lifecycle.check_supersede(mem.id, loser.mem, lambda i: superseded_by(index, i))
        found = conflicts.neighbours(index, conflicts.Subject(mem.id, mem.title, mem.excerpt, names, now, []))
        found = [n for n in found if n.row.id not in targets]
        mem.conflicts_with = [n.row.id for n in found]
        new = Loaded(mem, new_path(session.root, mem.title, mem.id, mem.created))
        for loser in losers:
            lifecycle.apply_supersede(mem, loser.mem, now)
        tries = write(session, index, [new, *losers], fresh=frozenset({mem.id})).get(new.rel, [])
        session.history.commit_paths([item.rel for item in (new, *losers)], f"remember: {mem.title}",
                                     [mem.id, *(loser.mem.id for loser in losers)])
        warnings = []
        if found:
            warnings.append(f"possible conflicts: decide each with {words.op('resolve')} (supersede or keep_both), "
                            "asking the user when unsure")
        if tries:
            warnings.append(injection.note(tries))
        return RememberResult(
            id=mem.id, path=new.rel, title=mem.title, state=mem.state.value, duplicate=False,
            superseded=[loser.mem.id for loser in losers], conflicts=[_conflict(n) for n in found],
            unknown_entities=unknown, warnings=warnings, flagged=[f.kind for f in tries])


def update(session: Session, opts: Update) -> str:
    """Change a memory's text or fields in place (state moves go through forget/resolve); returns
    the memory's id (a file without an id of its own gets a permanent one)."""
    check_text(opts.content, opts.title, None)
    settable_values(opts.fields, "update")  # refuse a bad value before taking the lock
    with session.call(write=True) as index:
        loaded = load(session, index, opts.id, expected_sha=opts.expected_sha)
        mem = loaded.mem
        changed = _apply_update(session, mem, opts)
        if mem.id != opts.id:
            changed.append("id")  # a hand-made file without an id got a permanent one
        if not changed:
            fields = ["content", "title", *(f.name for f in settable("update"))]
            raise InvalidArgument(f"nothing to change: pass {', '.join(fields[:-1])} or {fields[-1]}.")
        mem.updated = now_iso()
        mem.written_by = written_by(opts.by) or mem.written_by
        write(session, index, [loaded])
        session.history.commit_paths([loaded.rel], f"update: {mem.title}", [mem.id],
                                     "changed: " + ", ".join(changed))
        return mem.id


def _apply_update(session: Session, mem: Memory, opts: Update) -> list[str]:
    """Set the fields `opts` names on `mem`; the names of those that changed, in order."""
    changed: list[str] = []
    if opts.content is not None:
        # New content with its own heading takes that title; otherwise the old title stays.
        keep = None if opts.content.lstrip().startswith("#") else mem.title
        mem.body = compose_body(opts.content, opts.title or keep)
        changed.append("content")
    elif opts.title is not None and opts.title.strip() and opts.title.strip() != mem.title:
        mem.body = _retitle(mem.body, opts.title.strip())
        changed.append("title")
    for name, value in settable_values(opts.fields, "update").items():
        if name == "entities":
            value = session.dictionary.normalise_all(value)[0]  # type: ignore[arg-type]
        setattr(mem, name, value)
        changed.append(name)
    return changed


def forget(session: Session, opts: Forget) -> ForgetResult:
    """archive, deprecate (reason required), restore to active, or purge (confirm required)."""
    mode = enum_value(ForgetMode, opts.mode, "mode")
    check_short(reason=opts.reason)
    with session.call(write=True) as index:
        # A purged file needs no permanent id: it is about to go, under the id it had.
        loaded = load(session, index, opts.id, for_write=mode != ForgetMode.PURGE, expected_sha=opts.expected_sha)
        mem = loaded.mem
        if mode == ForgetMode.PURGE:
            return _purge(session, index, loaded, opts)
        notes = lifecycle.transition(mem, _STATE_OF[mode], opts.reason, now_iso())
        write(session, index, [loaded])
        session.history.commit_paths([loaded.rel], f"forget: {mode} {mem.title}", [mem.id],
                                     f"reason: {mem.deprecated_reason}" if mem.deprecated_reason else "")
        if mem.id != opts.id:
            notes.append(f"the file had no id of its own; it is now {mem.id}")
        return ForgetResult(id=mem.id, mode=mode.value, state=mem.state.value, purged=False,
                            message=f"{mem.id} is now {mem.state.value}", warnings=notes)


def _purge(session: Session, index: Index, loaded: Loaded, opts: Forget) -> ForgetResult:
    mem = loaded.mem
    lifecycle.check_purge(mem)
    if not opts.confirm:
        raise ConfirmRequired(
            f"purge deletes {loaded.rel} (git keeps it). {words.confirm_again()}")
    session.history.check_idle()
    (session.root / loaded.rel).unlink()
    index.remove_path(loaded.rel)
    session.history.commit_paths([loaded.rel], f"forget: purge {mem.title}", [mem.id],
                                 f"reason: {opts.reason}" if opts.reason.strip() else "")
    return ForgetResult(id=mem.id, mode=ForgetMode.PURGE.value, state=None, purged=True,
                        message=f"deleted {loaded.rel}; `git log --all -- {loaded.rel}` still has it")


def feedback(session: Session, opts: Feedback) -> FeedbackResult:
    """+0.1 when a memory helped, -0.2 when it misled; at -0.5 or below it is withheld from recall."""
    check_short(note=opts.note)
    with session.call(write=True) as index:
        loaded = load(session, index, opts.id)
        mem = loaded.mem
        mem.feedback = round(max(-1.0, min(1.0, mem.feedback + (0.1 if opts.helpful else -0.2))), 2)
        write(session, index, [loaded])
        session.history.commit_paths([loaded.rel], f"feedback: {'helpful' if opts.helpful else 'misleading'} "
                                     f"{mem.title}", [mem.id], opts.note)
        return FeedbackResult(id=mem.id, feedback=mem.feedback, withheld=ranking.withheld(mem.feedback))


def written_by(by: Writer | None) -> dict[str, str] | None:
    """The `written_by` stamp of a write by `by` now (None: no writer, nothing to stamp): the
    project's branch and HEAD commit are read from git's files, no process."""
    if by is None:
        return None
    from memory_mcp.vcs import project

    return stamp(by, project.place(by.folder))


def _conflict(n: conflicts.Neighbour) -> Conflict:
    return Conflict(id=n.row.id, title=n.row.title, excerpt=n.row.excerpt, shared_entities=n.shared_entities,
                    age_days=n.age_days, latest_wins_eligible=n.latest_wins_eligible, similarity=n.similarity)


def _retitle(body: str, title: str) -> str:
    """Replace the body's first heading (or put one in front) so the memory reads as `title`."""
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if line.strip():
            if re.match(r"^#{1,6}\s", line.strip()):
                lines[i] = f"# {title}"
                return "\n".join(lines)
            break
    return f"# {title}\n\n{body.lstrip()}" if derive_title(body) != title else body
