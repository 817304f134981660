"""The hooks' lock-free read (memory_mcp/app/glance.py), driven as a hook is: `memory-mcp hook EVENT` as
a subprocess, with `-X importtime` showing which path answered (the store's path loads the session)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXE, open_server
from reliability_support import needs_capsh, unprivileged

from memory_mcp.app.store import Store


def _hook(store: Path, home: Path, prompt: str, session: str, wrap: list[str] | None = None) -> tuple[str, set[str]]:
    """Run the prompt hook on `store` in a session: (its output, the modules it imported)."""
    payload = {"session_id": session, "cwd": str(home), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    return _run(store, home, payload, wrap)


def _run(store: Path, home: Path, payload: dict[str, str], wrap: list[str] | None = None) -> tuple[str, set[str]]:
    """Run the hook of `payload`'s event on `store`: (its output, the modules it imported)."""
    cmd = [sys.executable, "-X", "importtime", str(EXE), "hook", payload["hook_event_name"], "--store", str(store)]
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run([*(wrap or []), *cmd], input=json.dumps(payload), capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return done.stdout, loaded


def _set_back(store: Path) -> None:
    """Files and folders older than the racy margin, as they are once time has passed."""
    past = time.time() - 60
    for path in [*(store / "memories").rglob("*"), store / "memories"]:
        os.utime(path, (past, past))


# What the prompt hook's read must not import (a hook is a new process on every prompt): the store's
# own path (git, YAML, the credential rules, the session), the MCP SDK and the dense model, and what
# was once on this path and took a share of its time (importlib.metadata, argparse, the walk, the
# conflict gate; docs/performance.md, "Hooks").
HEAVY = {"git", "yaml", "ulid", "mcp", "pydantic", "anyio", "numpy", "subprocess", "importlib.metadata", "argparse",
         "memory_mcp.app.store", "memory_mcp.app.session", "memory_mcp.truth.secrets", "memory_mcp.truth.files", "memory_mcp.index.walk",
         "memory_mcp.recall.conflicts", "memory_mcp.adapters.cli.parser", "memory_mcp.adapters.cli.commands"}


def test_prompt_hook_on_a_current_index_imports_none_of_the_heavy_modules(tmp_path: Path) -> None:
    store, home = tmp_path / "store", tmp_path / "home"
    home.mkdir()
    s = Store.open(store)
    s.remember("Stripe webhook retries caused duplicate invoices; the handler is idempotent now.",
               title="Stripe webhook retries", type="knowledge")
    s.close()
    _set_back(store)
    subprocess.run([str(EXE), "status", "--store", str(store)], capture_output=True, check=True,
                   env={"HOME": str(home), "PATH": os.environ["PATH"]})
    out, loaded = _hook(store, home, "customers are getting duplicate invoices from stripe again", "a")
    assert "Stripe webhook retries" in out and "memory_mcp.app.glance" in loaded
    assert sorted(loaded & HEAVY) == []
    # Of the layers below the derived index, only the hooks' read, the store finder and the person's
    # decisions about the stores and the memories (app/consent.py, app/authorship.py, standard library
    # only), the provenance put on what is shown (app/provenance.py) and the record of the last sync,
    # whose news the prompt tells once (app/syncrecord.py, standard library only).
    below = {m for m in loaded if m.startswith(("memory_mcp.vcs.", "memory_mcp.app."))}
    assert sorted(below) == ["memory_mcp.app.authorship", "memory_mcp.app.consent", "memory_mcp.app.glance",
                             "memory_mcp.app.provenance", "memory_mcp.app.scopes", "memory_mcp.app.syncrecord"]


def test_session_start_on_a_current_index_reads_it_without_the_store_unless_a_note_waits(tmp_path: Path) -> None:
    # SessionStart opened the store (git, YAML) and walked every file to list 40 memories; on a current
    # index it reads the digest as the prompt hook reads. A Claude Code auto-memory note waiting to be
    # imported still takes the store's path, which imports it.
    store, home, project = tmp_path / "store", tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    project.mkdir()
    s = Store.open(store)
    s.remember("Money amounts are integer cents; never floats.", title="Money is integer cents", type="preference",
               trust="user-stated")
    s.close()
    _set_back(store)
    subprocess.run([str(EXE), "status", "--store", str(store)], capture_output=True, check=True,
                   env={"HOME": str(home), "PATH": os.environ["PATH"]})
    start = {"session_id": "a", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    out, loaded = _run(store, home, start)
    assert "Money is integer cents" in out and "memory_mcp.app.glance" in loaded
    assert sorted(loaded & HEAVY) == []
    notes = home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(project.resolve())) / "memory"
    notes.mkdir(parents=True)
    (notes / "MEMORY.md").write_text("- [Build tool](build.md) - which tool builds\n")
    (notes / "build.md").write_text("---\nname: Build with make\ndescription: The project builds with make "
                                    "targets.\ntype: project\n---\nRun make all.\n")
    out, loaded = _run(store, home, {**start, "session_id": "b"})
    assert "imported 1 new Claude Code auto-memory note" in out and "memory_mcp.app.session" in loaded
    assert "Money is integer cents" in out


@needs_capsh
def test_prompt_hook_on_a_read_only_store_reads_its_cache_folder_index_without_opening_it(tmp_path: Path) -> None:
    # On a store this user cannot write the session keeps the index in the cache folder; the fast path
    # looked in the store's .derived/ instead, so every prompt took the slow path (or found nothing).
    store, home = tmp_path / "store", tmp_path / "home"
    home.mkdir()
    s = Store.open(store)
    s.remember("Stripe webhook retries caused duplicate invoices; the handler is idempotent now.",
               title="Stripe webhook retries", type="knowledge")
    s.close()
    _set_back(store)
    subprocess.run(["chmod", "-R", "a-w", str(store)], check=True)
    try:
        prompt = "customers are getting duplicate invoices from stripe again"
        first, _ = _hook(store, home, prompt, "a", unprivileged([]))  # builds the cache folder's index
        assert "Stripe webhook retries" in first
        second, loaded = _hook(store, home, prompt, "b", unprivileged([]))
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(store)], check=True)
    assert "Stripe webhook retries" in second
    assert "memory_mcp.app.glance" in loaded
    assert not loaded & {"git", "yaml", "memory_mcp.app.store", "memory_mcp.app.session"}
    assert list((home / ".cache" / "memory-mcp" / "stores").glob("store-*/index.sqlite3"))


@pytest.mark.anyio
async def test_a_hand_edit_in_place_reaches_the_next_tool_call_and_then_the_hooks(tmp_path: Path) -> None:
    # The hooks' read checks folders, not every file (one stat per file was most of the prompt hook's
    # time at 10k memories): an edit in place is seen by the next tool call, which reconciles, and
    # from then on by the hooks too. This pins that trade-off (docs/design-notes.md).
    store, home = tmp_path / "store", tmp_path / "home"
    home.mkdir()
    s = Store.open(store)
    m = s.remember("Stripe webhook retries caused duplicate invoices; the handler is idempotent now.",
                   title="Stripe webhook retries", type="knowledge")
    s.close()
    _set_back(store)
    subprocess.run([str(EXE), "status", "--store", str(store)], capture_output=True, check=True,
                   env={"HOME": str(home), "PATH": os.environ["PATH"]})
    path = store / m.path
    path.write_text(path.read_text().replace("Stripe webhook retries caused duplicate invoices",
                                             "Paddle webhook retries caused duplicate receipts"))
    prompt = "paddle webhook retries made duplicate receipts again"
    before, loaded = _hook(store, home, prompt, "a")
    assert "Paddle" not in before and "memory_mcp.app.session" not in loaded  # the index as it was
    async with open_server(store, home) as session:
        found = await session.call("memory_recall", query="paddle receipts")
        assert [h["id"] for h in found["results"]] == [m.id]
    after, loaded = _hook(store, home, prompt, "b")
    assert "Paddle webhook retries caused duplicate receipts" in after
    assert "memory_mcp.app.session" not in loaded
    assert subprocess.run(["git", "-C", str(store), "status", "--porcelain"], capture_output=True,
                          text=True).stdout == ""  # the tool call committed the edit; no hook wrote
