"""The facade is typed: each `Store` method's parameters are its options object's fields (same names,
order and defaults), and mypy refuses a misspelt keyword. Until issue 29 the methods took
`*args, **fields`, so `store.remember("x", tpye="decision")` passed mypy and travelled on as a
frontmatter key."""

from __future__ import annotations

import dataclasses
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from memory_mcp.app.store import Store
from memory_mcp.truth import model, options, writeoptions
from memory_mcp.truth.recall import Recall

# method -> (its options object, the name its fields mapping travels under, if any)
FACADE = {
    "remember": writeoptions.Remember, "update": writeoptions.Update, "forget": writeoptions.Forget,
    "resolve": options.Resolve, "resolve_all": options.Conflicts, "feedback": writeoptions.Feedback, "recall": Recall,
    "conflicts": options.Conflicts, "timeline": options.Timeline,
}


@pytest.mark.parametrize("method", sorted(FACADE))
def test_each_facade_method_takes_its_options_fields(method: str) -> None:
    kind = FACADE[method]
    params = list(inspect.signature(getattr(Store, method)).parameters.values())[1:]
    declared = [f for f in dataclasses.fields(kind) if f.name != "fields"]
    assert [p.name for p in params if p.kind is not p.VAR_KEYWORD] == [f.name for f in declared]
    for p, f in zip(params, declared, strict=False):
        if f.default is not dataclasses.MISSING:
            assert p.default == f.default, f"{method}({p.name}=...) defaults to {p.default!r}, {kind.__name__} to {f.default!r}"
    has_fields = any(f.name == "fields" for f in dataclasses.fields(kind))
    assert (params[-1].kind is params[-1].VAR_KEYWORD) == has_fields


def test_the_facade_keywords_are_the_settable_fields() -> None:
    """A field declared settable in model.Memory is one more key of the facade's TypedDict."""
    assert set(writeoptions.RememberFields.__annotations__) == {f.name for f in model.settable("remember")}
    assert set(writeoptions.UpdateFields.__annotations__) == {f.name for f in model.settable("update")}


def test_a_facade_call_without_a_needed_argument_says_which(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "s")
    try:
        with pytest.raises(TypeError, match="needs other_id, decision"):
            store.resolve("01JD2K3A9FZQ4W8XVBH5T6N7RM")
    finally:
        store.close()


@pytest.mark.slow
def test_mypy_refuses_a_misspelt_field_at_the_facade(tmp_path: Path) -> None:
    script = tmp_path / "caller.py"
    script.write_text("from memory_mcp.app.store import Store\n\n\n"
                      "def call(store: Store) -> None:\n"
                      "    store.remember('Use pnpm.', type='preference', entities=['pnpm'])\n"
                      "    store.remember('Use pnpm.', tpye='preference')\n"
                      "    store.recall('pnpm', limt=3)\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--config-file", str(ROOT / "pyproject.toml"),
                          str(script)], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "MYPYPATH": str(ROOT)})
    errors = [line for line in out.stdout.splitlines() if ": error:" in line and "caller.py" in line]
    assert len(errors) == 2, out.stdout
    assert '"tpye"' in errors[0] and ":6:" in errors[0]
    assert '"limt"' in errors[1] and ":7:" in errors[1]
