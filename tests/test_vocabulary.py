"""Each vocabulary (types, states, trusts, forget modes, decisions, error codes) is defined once in
the code; the published tool schemas are derived from it and the user guide's list is checked against it."""

from __future__ import annotations

import asyncio
import re
from enum import StrEnum
from pathlib import Path

import pytest
from conftest import ROOT

from memory_mcp.adapters.serve.server import build_server
from memory_mcp.truth import errors
from memory_mcp.truth.model import Decision, ForgetMode, MemoryType, State, Trust

README = (ROOT / "README.md").read_text(encoding="utf-8")
GUIDE = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")


def _readme_list(label: str) -> list[str]:
    section = GUIDE[GUIDE.index("### The vocabulary"):]
    match = re.search(rf"^- {re.escape(label)}: (.*?)(?=^- |^#|\Z)", section, re.S | re.M)
    assert match, f"docs/guide.md's vocabulary has no '{label}' line"
    return re.findall(r"`([^`]+)`", match.group(1).split("(")[0])


@pytest.mark.parametrize(("label", "enum"), [("types", MemoryType), ("states", State), ("trust", Trust),
                                             ("forget modes", ForgetMode), ("resolve decisions", Decision)])
def test_the_guide_lists_each_enumeration_as_defined(label: str, enum: type[StrEnum]) -> None:
    assert _readme_list(label) == [e.value for e in enum]


def test_the_guide_lists_every_error_code() -> None:
    assert _readme_list("error codes") == list(errors.codes())


def test_tool_schemas_take_their_enumerations_from_the_model(tmp_path: Path) -> None:
    tools = {t.name: t.input_schema for t in asyncio.run(build_server(tmp_path / "s").list_tools())}

    def enum_of(tool: str, field: str) -> list[str]:
        prop = tools[tool]["properties"][field]
        for option in prop.get("anyOf", [prop]):
            if "enum" in option:
                return option["enum"]
            if option.get("type") == "array":
                return option["items"]["enum"]
        raise AssertionError(f"{tool}.{field} has no enum: {prop}")

    assert enum_of("memory_remember", "type") == [e.value for e in MemoryType]
    assert enum_of("memory_update", "type") == [e.value for e in MemoryType]
    assert enum_of("memory_recall", "types") == [e.value for e in MemoryType]
    assert enum_of("memory_remember", "trust") == [e.value for e in Trust]
    assert enum_of("memory_forget", "mode") == [e.value for e in ForgetMode]
    assert enum_of("memory_resolve", "decision") == [e.value for e in Decision]



def test_every_gotcha_the_docs_mention_says_its_type_is_knowledge() -> None:
    # README and the server once told agents to remember "gotchas", a type that does not exist, so an
    # agent wrote `type: gotcha` and was refused. Every paragraph that uses the word names the type.
    from memory_mcp.adapters.hooks.stop import STOP_NOTE
    from memory_mcp.adapters.serve.server import INSTRUCTIONS

    repo = ROOT
    texts = {"README.md": README, "docs/guide.md": GUIDE, "server instructions": INSTRUCTIONS,
             "Stop hook note": STOP_NOTE}
    for doc in ("plugin/skills/memory/SKILL.md", "plugin/commands/remember.md", "plugin/commands/recall.md"):
        texts[doc] = (repo / doc).read_text(encoding="utf-8")
    for name, text in texts.items():
        for paragraph in re.split(r"\n\s*\n|\n(?=- )", text):
            if "gotcha" in paragraph.lower():
                assert "knowledge" in paragraph, f"{name} says gotcha without its type: {paragraph!r}"
