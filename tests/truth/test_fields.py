"""The frontmatter fields are declared once (model.FIELDS); files, the index and sync follow it."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from memory_mcp.index import schema
from memory_mcp.index.db import Index
from memory_mcp.index.schema import FileStat, Row
from memory_mcp.truth import files, strictyaml
from memory_mcp.truth.errors import ParseError
from memory_mcp.truth.model import FIELDS, FieldSpec, Memory, settable
from memory_mcp.vcs import merge as memmerge

ID = "01JD2K3A9FZQ4W8XVBH5T6N7RM"
OTHER_ID = "01JD2K3A9FZQ4W8XVBH5T6N7RN"


def _value(f: FieldSpec, variant: int) -> object:
    """A value of `f` (variant 0: never its default); variants 0, 1 and 2 give different values."""
    if f.kind == "id":
        return ID
    if f.kind == "enum":
        assert f.enum is not None
        members = [*(e for e in f.enum if e != f.default), f.default]  # variants 0, 1, 2 differ
        return members[variant % len(members)]
    if f.kind == "list":
        return [f"name-{variant}", f"other-{variant}"]
    if f.kind == "date":
        return f"2026-0{1 + variant}-02T03:04:05Z"
    if f.kind == "number":
        return round(0.1 * (variant + 1), 2)
    if f.kind == "map":
        return {"client": f"client-{variant}", "session": f"S{variant}", "branch": f"feature/x{variant}"}
    return f"{f.name} text {variant}"


def _every_field_set(variant: int = 0) -> Memory:
    mem = Memory(id=ID, body="# Title\n\nText.\n")
    for f in FIELDS:
        setattr(mem, f.name, _value(f, variant))
    return mem


def test_fields_are_the_frontmatter_keys_of_the_file_format_in_order() -> None:
    # The order of ../shared/design.md section 2: a contract, so it is spelled out here once more.
    assert files.KEY_ORDER == (
        "id", "type", "state", "trust", "entities", "source", "created", "updated", "review_after",
        "conflicts_with", "distinct_from", "supersedes", "superseded_by", "deprecated_reason", "feedback",
        "paths", "written_by")
    assert [f.name for f in FIELDS] == [f.name for f in fields(Memory) if f.name not in ("body", "extra", "provisional")]


def test_every_field_round_trips_through_a_file() -> None:
    mem = _every_field_set()
    text = files.serialize(mem)
    assert [line.split(":", 1)[0] for line in text.split("\n")[1:len(FIELDS) + 1]] == list(files.KEY_ORDER)
    assert files.parse(text, "memories/a.md") == mem
    fm, _ = files.split(text)
    assert files._simple_frontmatter(fm or "") == strictyaml.load(fm or "")  # the fast reader takes it all


def test_only_always_written_fields_appear_when_empty() -> None:
    fm, _ = files.split(files.serialize(Memory(id=ID, body="x\n")))
    written = [line.split(":", 1)[0] for line in (fm or "").split("\n") if line]
    assert written == [f.name for f in FIELDS if f.always_written]


def test_numbers_are_checked_before_the_other_fields() -> None:
    # A file with several mistakes reports the same one it always did.
    with pytest.raises(ParseError) as e:
        files.parse(f"---\nid: {ID}\ntype: nonsense\nfeedback: x\n---\n", "memories/a.md")
    assert e.value.message == "feedback must be a number between -1 and 1, not 'x'"


def test_index_columns_are_row_and_hold_every_indexed_field(tmp_path: Path) -> None:
    ix = Index.open(tmp_path / "index.db")
    try:
        columns = [name for _, name, *_ in ix.conn.execute("PRAGMA table_info(memories)")]
        assert columns == list(Row.__dataclass_fields__)
        assert {f.name for f in FIELDS if f.indexed} <= set(columns)
        mem = _every_field_set()
        ix.upsert("memories/a.md", mem, mem.entities, FileStat(1, 2, "sha"))
        row = ix.get(ID)
    finally:
        ix.close()
    assert row is not None
    for f in FIELDS:
        value = getattr(mem, f.name)
        assert getattr(row, f.name) == (value.value if f.kind == "enum" else value), f.name
    assert (row.path, row.title, row.provisional) == ("memories/a.md", "Title", False)


def test_index_column_types_follow_the_kinds() -> None:
    for f in FIELDS:
        assert f"{f.name} {schema._column_type(f)}" in schema.SCHEMA
    assert "feedback REAL NOT NULL" in schema.SCHEMA and "created TEXT," in schema.SCHEMA


def test_sync_merge_lists_are_the_declared_rules() -> None:
    assert tuple(f.name for f in FIELDS if f.merge == "set") == memmerge.LIST_FIELDS
    compared = {f.name for f in fields(Memory)} - memmerge.NOT_COMPARED
    assert compared == {f.name for f in FIELDS if f.merge == "same"}


@pytest.mark.parametrize("f", [f for f in FIELDS if f.merge == "same"], ids=lambda f: f.name)
def test_sync_a_compared_field_both_sides_set_differently_does_not_merge(f: FieldSpec) -> None:
    base = _every_field_set(0)
    ours, theirs = replace(base), replace(base)
    setattr(ours, f.name, _value(f, 1))
    setattr(theirs, f.name, _value(f, 2))
    assert memmerge.merge_fields(None, base, ours, theirs) is None  # type: ignore[arg-type]  # same body: no git
    setattr(theirs, f.name, getattr(base, f.name))
    merged = memmerge.merge_fields(None, base, ours, theirs)  # type: ignore[arg-type]
    assert merged is not None and getattr(merged, f.name) == _value(f, 1)


def test_sync_merges_each_ruled_field_by_its_rule() -> None:
    base = _every_field_set(0)
    ours, theirs = _every_field_set(1), _every_field_set(2)
    for f in FIELDS:
        if f.merge == "same":
            setattr(ours, f.name, getattr(base, f.name))
            setattr(theirs, f.name, getattr(base, f.name))
    merged = memmerge.merge_fields(None, base, ours, theirs)  # type: ignore[arg-type]
    assert merged is not None
    for f in FIELDS:
        got, mine, other, was = (getattr(m, f.name) for m in (merged, ours, theirs, base))
        if f.merge == "set":
            assert got == [*mine, *other], f.name  # both sides dropped the base's names and added their own
        elif f.merge == "earliest":
            assert got == min(mine, other), f.name
        elif f.merge == "latest":
            assert got == max(mine, other), f.name
        elif f.merge == "sum":
            assert got == round(was + (mine - was) + (other - was), 2), f.name
        elif f.merge == "version":
            assert got == other, f.name  # both changed it: the side with the later `updated` (theirs)


def test_settable_names_the_tool_parameters() -> None:
    assert [f.name for f in settable("remember")] == ["type", "trust", "entities", "source", "review_after",
                                                      "supersedes", "paths"]
    assert [f.name for f in settable("update")] == ["type", "trust", "entities", "source", "review_after", "paths"]
    assert all(f.description for f in FIELDS)


def _tool_schemas(tmp_path: Path) -> dict[str, dict[str, Any]]:
    import asyncio

    from memory_mcp.adapters.serve.server import build_server

    server = build_server(tmp_path / "store")  # the store opens on the first call only
    return {t.name: t.input_schema for t in asyncio.run(server.list_tools())}


def test_a_settable_field_is_a_tool_parameter_with_its_declared_type_and_description(tmp_path: Path) -> None:
    # Declaring a field settable is the whole change: the tool schemas follow from the declaration.
    schemas = _tool_schemas(tmp_path)
    for tool, own in (("remember", {"content", "title", "scope"}), ("update", {"id", "content", "title"})):
        props = schemas[f"memory_{tool}"]["properties"]
        assert set(props) == own | {f.name for f in settable(tool)}
        for f in settable(tool):
            assert props[f.name]["description"].startswith(f.description)
            text = json.dumps(props[f.name])
            if f.enum is not None:
                assert all(f'"{e.value}"' in text for e in f.enum), f.name
            assert ('"array"' in text) == (f.kind == "list"), f.name
        assert schemas[f"memory_{tool}"]["required"] == (["content"] if tool == "remember" else ["id"])
    assert schemas["memory_remember"]["properties"]["type"]["default"] == "fact"


@pytest.mark.parametrize(("given", "message"), [
    ({"colour": "red"}, "memory_remember cannot set colour"),
    ({"entities": "ci"}, "entities must be a list of strings"),
    ({"source": 3}, "source must be a string"),
    ({"type": "gotcha"}, "type"),
])
def test_settable_values_refuses_what_the_declaration_does_not_allow(given: dict[str, object], message: str) -> None:
    from memory_mcp.truth.errors import InvalidArgument
    from memory_mcp.truth.validate import settable_values

    with pytest.raises(InvalidArgument, match=message):
        settable_values(given, "remember")
