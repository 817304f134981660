"""The hooks' lock-free read (memory_mcp/glance.py), driven as a hook is: `memory-mcp hook EVENT` as
a subprocess, with `-X importtime` showing which path answered (the store's path loads the session)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import EXE
from reliability_support import needs_capsh, unprivileged

from memory_mcp.store import Store


def _hook(store: Path, home: Path, prompt: str, session: str, wrap: list[str] | None = None) -> tuple[str, set[str]]:
    """Run the prompt hook on `store` in a session: (its output, the modules it imported)."""
    payload = {"session_id": session, "cwd": str(home), "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    cmd = [sys.executable, "-X", "importtime", str(EXE), "hook", "UserPromptSubmit", "--store", str(store)]
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run([*(wrap or []), *cmd], input=json.dumps(payload), capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return done.stdout, loaded


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
    past = time.time() - 60  # older than the racy margin, as files are once time has passed
    for path in (store / "memories").rglob("*.md"):
        os.utime(path, (past, past))
    subprocess.run(["chmod", "-R", "a-w", str(store)], check=True)
    try:
        prompt = "customers are getting duplicate invoices from stripe again"
        first, _ = _hook(store, home, prompt, "a", unprivileged([]))  # builds the cache folder's index
        assert "Stripe webhook retries" in first
        second, loaded = _hook(store, home, prompt, "b", unprivileged([]))
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(store)], check=True)
    assert "Stripe webhook retries" in second
    assert "memory_mcp.glance" in loaded
    assert not loaded & {"git", "yaml", "memory_mcp.store", "memory_mcp.session"}
    assert list((home / ".cache" / "memory-mcp" / "stores").glob("store-*/index.sqlite3"))
