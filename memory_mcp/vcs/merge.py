"""The three-way merge of one memory's versions (base, this machine's, the remote's), field by field
as each field's declaration says (model.FieldSpec.merge), the body as text through git's line merge.

What cannot be merged without choosing comes back as None (or Unmergeable for a version that does
not parse): sync then keeps both versions as an open conflict pair."""

from __future__ import annotations

from dataclasses import fields, replace

from memory_mcp.truth import files
from memory_mcp.truth.errors import ParseError
from memory_mcp.truth.model import FIELDS, Memory, parse_iso
from memory_mcp.vcs.history import History

# Set-like fields: a three-way merge keeps what either side added and drops what either side removed.
LIST_FIELDS = tuple(f.name for f in FIELDS if f.merge == "set")
# Fields that are not compared (model.FieldSpec.merge): the identity, fields merged by a rule, and
# what is not a frontmatter field (the body is merged as text, unknown keys one by one, parse state).
NOT_COMPARED = {"body", "extra", "provisional", *(f.name for f in FIELDS if f.merge != "same")}

class Unmergeable(Exception):
    """A conflicted path this module does not decide for a person."""


def parse_version(data: bytes, path: str) -> Memory:
    """One side's version of a conflicted memory file; Unmergeable when it cannot be merged by id."""
    try:
        mem = files.parse(files.decode(data), path)
    except ParseError as e:
        raise Unmergeable(f"{path} changed on both sides and one version does not parse ({e.message})") from None
    if mem.provisional:
        raise Unmergeable(f"{path} changed on both sides and has no id to tell its versions apart")
    return mem


def merge_fields(history: History, base: Memory | None, ours: Memory, theirs: Memory) -> Memory | None:
    """The three-way merge of one memory's versions, or None when both sides changed the same thing."""
    if ours.id != theirs.id:
        return None
    out = replace(theirs, extra={})
    body = merge_text(history, base.body if base else "", ours.body, theirs.body)
    if body is None:
        return None
    out.body = body
    for f in fields(Memory):
        if f.name in NOT_COMPARED:
            continue
        value, clash = _three(getattr(base, f.name) if base else None, getattr(ours, f.name), getattr(theirs, f.name))
        if clash:
            return None
        setattr(out, f.name, value)
    for name in LIST_FIELDS:
        setattr(out, name, _merge_set(getattr(base, name) if base else [], getattr(ours, name), getattr(theirs, name)))
    for key in dict.fromkeys([*ours.extra, *theirs.extra]):
        value, clash = _three((base.extra if base else {}).get(key), ours.extra.get(key), theirs.extra.get(key))
        if clash:
            return None
        if value is not None:
            out.extra[key] = value
    for spec in FIELDS:
        mine, other = getattr(ours, spec.name), getattr(theirs, spec.name)
        if spec.merge == "earliest":
            setattr(out, spec.name, min(filter(None, (mine, other)), default=None))
        elif spec.merge == "latest":
            setattr(out, spec.name, max(filter(None, (mine, other)), key=_when, default=None))
        elif spec.merge == "version":
            value, clash = _three(getattr(base, spec.name) if base else None, mine, other)
            newer = _when(ours.updated or "") >= _when(theirs.updated or "")
            setattr(out, spec.name, (mine if newer else other) if clash else value)
        elif spec.merge == "sum":
            start = getattr(base, spec.name) if base else 0.0
            low, high = spec.bounds or (float("-inf"), float("inf"))
            setattr(out, spec.name, round(max(low, min(high, start + (mine - start) + (other - start))), 2))
    return out


def _when(stamp: str) -> str:
    dt = parse_iso(stamp)
    return dt.isoformat() if dt else ""


def _three(base: object, ours: object, theirs: object) -> tuple[object, bool]:
    """(merged value, whether both sides changed it differently)."""
    if ours == theirs or theirs == base:
        return ours, False
    if ours == base:
        return theirs, False
    return None, True


def _merge_set(base: list[str], ours: list[str], theirs: list[str]) -> list[str]:
    removed = (set(base) - set(ours)) | (set(base) - set(theirs))
    return [v for v in dict.fromkeys([*ours, *theirs]) if v not in removed]


def merge_text(history: History, base: str, ours: str, theirs: str, union: bool = False) -> str | None:
    """git's line merge of three texts; None when it conflicts (never with `union`)."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return history.merge_texts(ours, base, theirs, union=union)


def union(history: History, base: bytes, ours: bytes, theirs: bytes) -> bytes:
    """dictionary.md from both sides: conflicting hunks keep both sides' lines."""
    texts = [files.decode(x) if x else "" for x in (base, ours, theirs)]
    merged = merge_text(history, texts[0], texts[1], texts[2], union=True)
    return (merged or "").encode("utf-8")
