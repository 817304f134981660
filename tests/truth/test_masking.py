"""A credential that reaches a memory file by a hand edit or a sync is flagged in memory_status and
never shown: recall, memory_read, export, the digest and the hooks all mask the value. Status says
whether git history already has the file (a sync brings it committed) or not."""

from __future__ import annotations

import json
import random
import string
import subprocess
from pathlib import Path

import pytest
from conftest import EXE, git, make_store, open_server, server_env

from memory_mcp.app.store import Store

pytestmark = pytest.mark.anyio


def _password() -> str:
    """Made up at test time, so no realistic credential is ever committed to this repository."""
    rng = random.Random()
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(20))


def _hand_file(store: Path, secret: str) -> None:
    (store / "memories" / "staging-db.md").write_text(
        "---\ntype: fact\nentities: [petrelbase]\n---\n# Staging petrelbase\n\n"
        f"The staging petrelbase login: DB_PASSWORD={secret} for the ops account.\n")


async def test_a_hand_written_credential_is_masked_in_every_answer(tmp_path: Path) -> None:
    store = make_store(tmp_path / "store")
    secret = _password()
    _hand_file(store, secret)
    async with open_server(store) as s:
        recall = await s.raw("memory_recall", query="staging petrelbase login")
        assert "staging-db.md" in json.dumps(recall.structured_content)
        [hit] = recall.structured_content["results"]
        read = await s.raw("memory_read", id=hit["id"])
        status = await s.call("memory_status")
        for answer in (recall, read):
            shown = json.dumps(answer.structured_content) + "".join(getattr(c, "text", "") for c in answer.content)
            assert secret not in shown and "[redacted" in shown
        assert "[redacted" in read.structured_content["body"]
        [flag] = status["secrets"]
        assert flag["path"] == "memories/staging-db.md" and flag["committed"] is False
        assert await s.recall_ids(secret) == []  # the value is not even searchable
    env = server_env(store, tmp_path)
    for args in (["export"], ["digest"], ["recall", "petrelbase"], ["status"]):
        done = subprocess.run([str(EXE), *args, "--store", str(store)], capture_output=True, text=True,
                              env=env, timeout=60)
        assert done.returncode == 0 and secret not in done.stdout + done.stderr, (args, done.stderr)
    assert "not committed" in done.stdout
    assert secret in (store / "memories" / "staging-db.md").read_text()  # the person's file is as they left it
    payload = {"session_id": "s1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(tmp_path),
               "hook_event_name": "SessionStart", "source": "startup"}
    done = subprocess.run([str(EXE), "hook", "SessionStart", "--store", str(store)], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and "petrelbase" in done.stdout and secret not in done.stdout, done.stdout


def test_a_credential_that_came_by_sync_is_reported_as_already_committed(tmp_path: Path) -> None:
    a = Store.open(tmp_path / "a")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    git(a.root, "remote", "add", "origin", str(bare))
    a.remember("The shearwater raft gathers at dusk.")
    a.sync()
    subprocess.run(["git", "clone", "-q", str(bare), str(tmp_path / "other")], check=True)
    secret = _password()
    _hand_file(tmp_path / "other", secret)
    git(tmp_path / "other", "add", "-A")
    git(tmp_path / "other", "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "notes")
    git(tmp_path / "other", "push", "-q", "origin", "main")
    a.sync()
    [flag] = a.status().secrets
    assert flag.path == "memories/staging-db.md" and flag.committed
    [hit] = a.recall("staging petrelbase").results
    assert secret not in json.dumps(a.read(hit.id).body) and secret not in a.export_text(a.export())
