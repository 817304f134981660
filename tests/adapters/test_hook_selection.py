"""What the prompt and file hooks choose to inject: the most specific file memory first (issue 33),
through the real hook commands on stdin, over stores written with Store.remember."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import EXE, hook_env

from memory_mcp.app.store import Store
from memory_mcp.truth import globs

ID = re.compile(r"\[([0-9A-Z]{26})\]")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return hook_env(tmp_path, monkeypatch)


def hook(env: dict[str, str], event: str, payload: dict, *args: str) -> str:
    done = subprocess.run([str(EXE), "hook", event, *args], input=json.dumps(payload), capture_output=True,
                          text=True, env=env, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


# ------------------------------------------------------------------ the file hook
def test_file_hook_shows_the_exact_path_first_and_cuts_the_broader_ones(env: dict[str, str], tmp_path: Path) -> None:
    # File memories came newest first under the 300-token cap: the one memory whose paths is exactly
    # src/billing/tax.py, written first, was cut while the broader src/** and src/billing/** were shown.
    store_root = tmp_path / "store"
    store = Store.open(store_root)
    long = "x " * 70  # each line near its 160-character excerpt: a few fill the token cap
    exact = store.remember(f"Tax is rounded per line here. {long}", title="Tax rounding", type="fact",
                           paths=["src/billing/tax.py"]).id
    near = store.remember(f"Billing code is reviewed twice. {long}", title="Billing reviews", type="fact",
                          paths=["src/billing/**"]).id
    broad = [store.remember(f"Source rule {n}. {long}", title=f"Source rule {n}", type="fact",
                            paths=["src/**"]).id for n in range(4)]
    anywhere = store.remember(f"Every file has a licence header. {long}", title="Licence headers", type="fact",
                              paths=["**"]).id
    store.close()
    project = Path(env["PROJECT"])
    out = hook(env, "PreToolUse", {"session_id": "s1", "cwd": str(project), "tool_name": "Read",
                                   "tool_input": {"file_path": str(project / "src/billing/tax.py")}},
               "--store", str(store_root))
    shown = ID.findall(json.loads(out)["hookSpecificOutput"]["additionalContext"])
    assert shown[:2] == [exact, near] and set(shown[2:]) < set(broad) and anywhere not in shown
    # recall --file gives the same order, the cap aside: the most specific first, newest first within a level.
    done = subprocess.run([str(EXE), "--store", str(store_root), "recall", "--file", "src/billing/tax.py"],
                          capture_output=True, text=True, cwd=project, timeout=60,
                          env={"HOME": env["HOME"], "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"})
    assert done.returncode == 0, done.stderr
    assert ID.findall(done.stdout) == [exact, near, *reversed(broad), anywhere]


@pytest.mark.parametrize(("patterns", "level"), [
    (["src/billing/tax.py"], (0, 0)), (["/src/billing/tax.py"], (0, 0)), (["src/billing/**"], (1, -12)),
    (["src/billing/"], (1, -12)), (["src/*/tax.py"], (1, -4)), (["src/**"], (1, -4)), (["**"], (1, 0)),
    (["**/tax.py"], (1, 0)), (["docs/**"], (2, 0)), (["src/**", "src/billing/tax.py"], (0, 0))])
def test_glob_specificity_orders_exact_then_longest_literal_prefix(patterns: list[str], level: tuple[int, int]) -> None:
    assert globs.specificity(patterns, "src/billing/tax.py") == level
