"""Streamable HTTP for clients that connect by URL: loopback by default, a bearer token off loopback."""

from __future__ import annotations

import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import httpx2
import pytest
from conftest import EXE, http_server, server_env
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio

TOKEN = "s3cret-token-for-the-test-at-least-32-chars"  # the server refuses shorter ones
INIT = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        b'"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}')


def post_status(url: str, headers: dict[str, str]) -> int:
    """The HTTP status of an initialize POST with `headers`."""
    request = urllib.request.Request(url, data=INIT, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


async def test_loopback_http_serves_the_tools_without_a_token(tmp_path: Path) -> None:
    with http_server(tmp_path / "store") as port:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            r = await client.call_tool("memory_remember", {"content": "HTTP clients share the same store."})
            assert not r.is_error
            r = await client.call_tool("memory_recall", {"query": "HTTP clients"})
            assert r.structured_content["results"][0]["title"].startswith("HTTP clients")


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1", "example.org"])
def test_off_loopback_without_a_token_refuses_to_start(tmp_path: Path, host: str) -> None:
    done = subprocess.run([str(EXE), "serve", "--http", "--host", host, "--port", "9"], capture_output=True,
                          text=True, env=server_env(tmp_path / "store", tmp_path), timeout=60)
    assert done.returncode == 2
    assert "needs a bearer token" in done.stderr and "MEMORY_MCP_TOKEN" in done.stderr


async def test_off_loopback_with_a_token_answers_401_without_it(tmp_path: Path) -> None:
    with http_server(tmp_path / "store", "--host", "0.0.0.0", env={"MEMORY_MCP_TOKEN": TOKEN}) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        assert post_status(url, {}) == 401
        assert post_status(url, {"Authorization": f"Bearer {TOKEN}x"}) == 401
        assert post_status(url, {"Authorization": f"Bearer {TOKEN[:-1]}"}) == 401
        assert post_status(url, {"Authorization": f"Basic {TOKEN}"}) == 401
        assert post_status(url, {"Authorization": f"Bearer {TOKEN}"}) == 200
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            r = await client.call_tool("memory_remember", {"content": "Tokens guard the HTTP port."})
            assert not r.is_error, r.content
            names = {t.name for t in (await client.list_tools()).tools}
            assert {"memory_recall", "memory_remember"} <= names


async def test_token_flag_is_enforced_on_loopback_too(tmp_path: Path) -> None:
    with http_server(tmp_path / "store", "--token", TOKEN) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        assert post_status(url, {}) == 401
        assert post_status(url, {"Authorization": f"bearer {TOKEN}"}) == 200  # the scheme is case-insensitive
