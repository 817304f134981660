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
