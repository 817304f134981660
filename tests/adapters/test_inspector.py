"""A third-party client: the official MCP Inspector CLI (TypeScript SDK) drives `memory-mcp serve`
over stdio and over streamable HTTP: list tools, remember, recall, read the digest, get the prompt.

The Inspector comes from npm (`.ci/install-inspector` puts it in .ci/node-tools; CI runs that first).
$MEMORY_MCP_INSPECTOR may point at another `mcp-inspector` executable. Without node and npm the tests
skip and say so; with them, a missing Inspector is installed rather than skipped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXE, ROOT, http_server

INSTALLED = ROOT / ".ci" / "node-tools" / "node_modules" / ".bin" / "mcp-inspector"
TOOLS = {"memory_remember", "memory_recall", "memory_read", "memory_update", "memory_forget", "memory_resolve",
         "memory_feedback", "memory_status", "memory_reindex", "memory_share"}


@pytest.fixture(scope="session")
def inspector() -> Path:
    given = os.environ.get("MEMORY_MCP_INSPECTOR")
    if given:
        return Path(given)
    if not INSTALLED.exists():
        if not (shutil.which("node") and shutil.which("npm")):
            pytest.skip("node and npm are not installed: the MCP Inspector CLI (third-party client) tests cannot run")
        subprocess.run([str(ROOT / ".ci" / "install-inspector")], check=True, timeout=600)
    return INSTALLED


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[str]]:
    """How the Inspector reaches a server on a new store. Over stdio it starts the server from the
    `.mcp.json` that `install claude-code --scope project` writes (it reads that file as Claude Code
    does), so the file is checked by a third-party reader too; over HTTP it gets the URL."""
    store = tmp_path / "store"
    if request.param == "stdio":
        project = tmp_path / "project"
        project.mkdir()
        # The store lies outside HOME: a store under it would be written as ${HOME}/..., which Claude
        # Code expands and the Inspector does not.
        (tmp_path / "home").mkdir()
        env = {"HOME": str(tmp_path / "home"), "PATH": str(Path(shutil.which("git")).parent), "GIT_CONFIG_NOSYSTEM": "1"}
        done = subprocess.run([str(EXE), "install", "claude-code", "--scope", "project", "--store", str(store)],
                              capture_output=True, text=True, cwd=project, env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        yield ["--config", str(project / ".mcp.json"), "--server", "memory"]
    else:
        with http_server(store) as port:
            yield [f"http://127.0.0.1:{port}/mcp"]


def inspect(inspector: Path, target: list[str], *method: str) -> dict:
    """Run one Inspector CLI method and return its JSON answer."""
    # A project-scope .mcp.json names `memory-mcp` from PATH, as a person's shell finds it.
    env = {**os.environ, "PATH": f"{EXE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(inspector), "--cli", *target, *method], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, f"inspector {method}: {done.stderr[-800:]}"
    return json.loads(done.stdout)


def test_inspector_lists_remembers_recalls_reads_the_digest_and_gets_the_prompt(
        inspector: Path, target: list[str]) -> None:
    tools = inspect(inspector, target, "--method", "tools/list")["tools"]
    assert {t["name"] for t in tools} == TOOLS
    remembered = inspect(inspector, target, "--method", "tools/call", "--tool-name", "memory_remember", "--tool-arg",
                         "content=The osprey build caches wheels in /var/cache/osprey.", "type=preference",
                         'entities=["osprey"]')
    assert remembered["isError"] is False
    mem_id = remembered["structuredContent"]["id"]
    recalled = inspect(inspector, target, "--method", "tools/call", "--tool-name", "memory_recall", "--tool-arg",
                       "query=osprey wheels cache", "limit=3")
    assert recalled["isError"] is False
    assert [h["id"] for h in recalled["structuredContent"]["results"]] == [mem_id]
    digest = inspect(inspector, target, "--method", "resources/read", "--uri", "memory://digest")
    assert f"[{mem_id}]" in digest["contents"][0]["text"]
    prompt = inspect(inspector, target, "--method", "prompts/get", "--prompt-name", "memory", "--prompt-args",
                     "topic=osprey")
    text = prompt["messages"][0]["content"]["text"]
    assert f"[{mem_id}]" in text and "memory_recall with query 'osprey'" in text

