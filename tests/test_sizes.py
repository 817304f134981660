"""Sizes a newcomer can read: no module of memory_mcp over 450 lines, no function over 60 (its
decorators and docstring included). Until issue 29, history.py had 610 lines, index.py 546,
query.py 463 and walk.walk_tree 71; a module that grows past the limit splits along what it holds."""

from __future__ import annotations

import ast

from conftest import ROOT

MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60
PACKAGE = ROOT / "memory_mcp"


def _sources() -> list[tuple[str, str]]:
    return [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.rglob("*.py"))
            if "store_template" not in p.parts]


def test_no_module_is_over_the_limit() -> None:
    long = {name: text.count("\n") for name, text in _sources() if text.count("\n") > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines: {long}"


def test_no_function_is_over_the_limit() -> None:
    long = {}
    for name, text in _sources():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lines = (node.end_lineno or node.lineno) - first + 1
                if lines > MAX_FUNCTION_LINES:
                    long[f"{name}:{node.name}"] = lines
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"
