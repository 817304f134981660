"""The output schemas the server publishes: rewritten for cheaper client-side validation, with the
same meaning as pydantic's."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from jsonschema.validators import validator_for
from pydantic import TypeAdapter

from memory_mcp.adapters.serve.toolargs import nullable_as_type_list
from memory_mcp.truth.recall import Hit, RecallResult


@dataclass
class _Sample:
    name: str | None
    count: int | None = None
    tags: list[str] | None = None  # not a plain type: stays anyOf
    either: int | str = 0  # no null: stays anyOf


SAMPLES = [
    {"name": None}, {"name": "x"}, {"name": 3}, {"name": "x", "count": None}, {"name": "x", "count": 2},
    {"name": "x", "count": 2.5}, {"name": "x", "count": "2"}, {"name": "x", "tags": None}, {"name": "x", "tags": ["a"]},
    {"name": "x", "tags": [1]}, {"name": "x", "either": "s"}, {"name": "x", "either": None}, {},
]


@pytest.mark.parametrize("model", [_Sample, RecallResult, Hit])
def test_type_lists_accept_and_refuse_what_the_anyof_form_does(model: type) -> None:
    published = TypeAdapter(model).json_schema()
    rewritten = nullable_as_type_list(published)
    old, new = (validator_for(s)(s) for s in (published, rewritten))
    for instance in SAMPLES:
        assert old.is_valid(instance) == new.is_valid(instance), instance


def test_only_a_plain_type_or_null_is_rewritten() -> None:
    props = nullable_as_type_list(TypeAdapter(_Sample).json_schema())["properties"]
    assert props["name"]["type"] == ["string", "null"] and "anyOf" not in props["name"]
    assert props["count"]["type"] == ["integer", "null"]
    assert "anyOf" in props["tags"] and "anyOf" in props["either"]


@dataclass
class _Nested:
    pairs: tuple[str, ...]
    inner: _Sample
    by_name: dict[str, list[_Sample]]


def test_structured_content_is_what_asdict_gives_without_its_copy(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`plain` replaced `dataclasses.asdict` in every tool answer (a recall's eight hits: 127 -> 69
    us); what a client receives must not change: the same JSON for real answers and nested shapes."""
    import json
    from dataclasses import asdict

    from memory_mcp.adapters.serve.answer import plain
    from memory_mcp.app.store import Store

    store = Store.open(tmp_path / "store")
    try:
        made = store.remember("Invoices round half-even to the cent.", title="Rounding", entities=["billing"])
        answers = [made, store.recall("rounding invoices"), store.recall(entities=["billing"]), store.status()]
    finally:
        store.close()
    nested = _Nested(("a", "b"), _Sample("x", tags=["t"]), {"k": [_Sample(None), _Sample("y", 2)]})
    for answer in [*answers, nested]:
        assert plain(answer) == json.loads(json.dumps(asdict(answer))), type(answer).__name__
    assert plain(answers[1])["results"], "the recall found the memory"
