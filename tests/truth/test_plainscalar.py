"""A write decides without YAML which values go into a file plain (plainscalar.py, files.scalar):
the decision must be the YAML library's own, so every memory file is written byte for byte as
before, when the library was asked each time (two round trips through the loader per value)."""

from __future__ import annotations

import itertools
import json

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_mcp.truth import files, strictyaml
from memory_mcp.truth.plainscalar import reads_as_text

# The characters YAML's implicit types are made of, and those that end or break a plain scalar.
TYPE_CHARS = "0123456789_.:-+eExXbBoaAfFyYnNtTrRuUlLsSOiI~<=\n /#,[]{}'\"!&*?|>%@`\t"
HOSTILE = [
    "yes", "No", "NO", "on", "OFF", "y", "n", "true", "False", "null", "Null", "NULL", "nul", "~", "", " ",
    "1", "0", "00", "017", "08", "0o17", "0b101", "0b", "0x1F", "0xg", "1_000", "_1", "1.", "1.5", ".5", "1e3",
    "1.0e+3", "1.0e3", "6.02e-23", "1:30", "1:30.5", "0:30", "190:20:30", "1:60", ".inf", "-.inf", "+.Inf", ".nan",
    ".NaN", "-.nan", "<<", "=", "2026-01-01", "2026-01-01T10:00:00Z", "2026-12-07T12:07:03Z", "2026-1-1 1:00:00",
    "12:30", "a:b", "a: b", "a:", ":a", "http://example.com/x", "C:/dir", "- x", "-x", "--", "---", "...", "#c",
    "a #b", "a#b", "C#", "c++", "it's", "'q'", '"dq"', "[a]", "{b: c}", "&a", "*a", "!tag", "%x", "@x", "`x",
    "? q", "| x", "> x", " lead", "trail ", "two  spaces", "a\nb", "yes\n", "1\n", "a\tb", "\u00e9t\u00e9",
    "\u043f\u0430\u043c\u044f\u0442\u044c", "\ud55c\uad6d\uc5b4", "\U0001f600", "\u0661\u0662", "\uff11",
    "\u2028", "\u0085", "\ufeffbom", "\x00", "\x1b[0m", "\x7f", "web-workspace", "pnpm", "node_modules/x.js",
    "01M986CZB9Z8JX7G4QSD322S4P", "01234567890123456789012345", "8cabc9070af71a7e3b0cfb70b793b39356967c39",
    "1234567", "1e10", "session 2026-08-24", "v1.2.3", "a/b:c d/e:f", "a:b:c", "a:1", "1:a",
]
# Text as a person's or a tool's value can hold it (what YAML can carry at all: no surrogates).
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=24)


def yaml_reads_as_text(value: str) -> bool:
    """The YAML library's answer: the tag the strict loader's resolver gives the plain scalar."""
    loader = strictyaml._StrictLoader
    tag = loader.resolve(loader, yaml.ScalarNode, value, (True, False))  # type: ignore[arg-type]
    return bool(tag == "tag:yaml.org,2002:str")


def scalar_by_yaml(value: str) -> str:
    """How a value was written before (files.scalar when it asked the YAML library): plain when both
    `k: value` and `k: [value]` read back as the value, else a double-quoted JSON string."""
    if value and value == value.strip() and "\n" not in value:
        try:
            if strictyaml.load(f"k: {value}") == {"k": value} and strictyaml.load(f"k: [{value}]") == {"k": [value]}:
                return value
        except strictyaml.YAMLError:
            pass
    return files._UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json.dumps(value, ensure_ascii=False))


@pytest.mark.parametrize("value", HOSTILE)
def test_plain_scalars_are_read_as_yaml_reads_them(value: str) -> None:
    assert reads_as_text(value) == yaml_reads_as_text(value)


def test_every_short_string_of_the_type_characters_is_read_as_yaml_reads_it() -> None:
    """Every string of up to three of the characters YAML's types are made of, and 20,000 longer ones."""
    short = ("".join(t) for n in range(4) for t in itertools.product("019_.:-+eExbon~<=", repeat=n))
    wrong = [v for v in short if reads_as_text(v) != yaml_reads_as_text(v)]
    assert not wrong


@given(st.text(TYPE_CHARS, max_size=12))
@settings(max_examples=2000, suppress_health_check=[HealthCheck.too_slow])
def test_generated_scalars_are_read_as_yaml_reads_them(value: str) -> None:
    assert reads_as_text(value) == yaml_reads_as_text(value)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_value_is_written_as_the_yaml_round_trip_decided(value: str) -> None:
    assert files.scalar(value) == scalar_by_yaml(value)


@given(st.one_of(st.sampled_from(HOSTILE), TEXT, st.text(TYPE_CHARS, max_size=16),
                 st.lists(st.sampled_from(["2026", "12", "07T12", "03Z", "a", "b1", "x.y", "-", "_"]), max_size=6)
                 .map(":".join)))
@settings(max_examples=3000, suppress_health_check=[HealthCheck.too_slow])
def test_generated_values_are_written_as_the_yaml_round_trip_decided(value: str) -> None:
    assert files.scalar(value) == scalar_by_yaml(value)
