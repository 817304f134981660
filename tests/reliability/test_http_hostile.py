"""`memory-mcp serve --http` against hostile clients, each over real sockets to a real server process:
DNS rebinding on every spelling of loopback, short tokens, and connections that never finish their
headers."""

from __future__ import annotations

import contextlib
import http.client
import os
import resource
import socket
import subprocess
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXE, free_port, server_env

from memory_mcp.adapters.serve.httpguard import HEADER_TIMEOUT, PENDING_MAX
from memory_mcp.adapters.serve.httpserve import BACKLOG

TOKEN = "Zq8Rk2Vx9Nm4Lb7Pw3Tc6Yf1Hd5Js0Ga8Pe2Uo7"
INIT = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        b'"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}')


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def connect(host: str, port: int, timeout: float = 5) -> socket.socket:
    sock = socket.socket(_family(host), socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect((host, port))
    except OSError:
        sock.close()  # a server not yet listening: the caller tries again with a new socket
        raise
    return sock


@contextlib.contextmanager
def serving(tmp_path: Path, host: str, *args: str, env: dict[str, str] | None = None,
            nofile: int | None = None) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """`memory-mcp serve --http --host host` (optionally with a lower open-file limit); yields the port
    and the process once it accepts connections on `host`."""
    port = free_port()
    store = tmp_path / "store"
    log = tmp_path / f"http-{port}.log"

    def limit() -> None:
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    with open(log, "wb") as err:
        proc = subprocess.Popen([str(EXE), "serve", "--http", "--host", host, "--port", str(port), *args],
                                env=server_env(store, tmp_path, env), stdout=subprocess.DEVNULL, stderr=err,
                                preexec_fn=limit)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, f"server exited: {log.read_text(errors='replace')[-800:]}"
            try:
                connect(host, port, 0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "server did not start listening"
                time.sleep(0.1)
        yield port, proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def post(host: str, port: int, headers: dict[str, str], timeout: float = 10) -> int:
    """The status of an initialize POST to host:port/mcp with exactly these extra headers (Host too)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("POST", "/mcp", INIT, {"Content-Type": "application/json",
                                            "Accept": "application/json, text/event-stream", **headers})
        return conn.getresponse().status
    finally:
        conn.close()


def netloc(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


LOOPBACK_SPELLINGS = ["127.0.0.2", "0:0:0:0:0:0:0:1", "127.0.0.1", "::1", "localhost"]


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS, ids=lambda h: h.replace(".", "_").replace(":", "_"))
def test_dns_rebinding_refused_on(tmp_path: Path, host: str) -> None:
    # `--host 127.0.0.2` or `--host 0:0:0:0:0:0:0:1` counted as loopback (no token needed) but skipped
    # the SDK's Host/Origin check: a request with `Host: evil.example` got 200.
    with serving(tmp_path, host) as (port, _):
        addr = "127.0.0.1" if host == "localhost" else host
        here = netloc(addr, port)
        assert post(addr, port, {"Host": f"evil.example:{port}"}) == 421
        assert post(addr, port, {"Host": "evil.example"}) == 421
        assert post(addr, port, {"Host": f"127.0.0.1.evil.example:{port}"}) == 421
        assert post(addr, port, {"Host": f"user@127.0.0.1:{port}"}) == 421
        assert post(addr, port, {"Host": here, "Origin": "http://evil.example"}) == 403
        assert post(addr, port, {"Host": here, "Origin": "null"}) == 403
        assert post(addr, port, {"Host": here}) == 200
        assert post(addr, port, {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}"}) == 200
        assert post(addr, port, {"Host": netloc("::1", port), "Origin": f"http://{netloc('::1', port)}"}) == 200


@pytest.mark.parametrize(("host", "token"), [
    ("0.0.0.0", "x"), ("0.0.0.0", "   "), ("0.0.0.0", "a" * 31), ("192.0.2.1", "short-token"),
    ("127.0.0.1", "x"),  # a token, once given, is one that cannot be guessed, on loopback too
])
def test_short_or_blank_token_refused_at_start(tmp_path: Path, host: str, token: str) -> None:
    # Off loopback a one-character or blank token was accepted.
    done = subprocess.run([str(EXE), "serve", "--http", "--host", host, "--port", "9"], capture_output=True,
                          text=True, env=server_env(tmp_path / "store", tmp_path, {"MEMORY_MCP_TOKEN": token}),
                          timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "32" in done.stderr, done.stderr
    if token.strip():
        assert f" {token} " not in done.stderr and f"'{token}'" not in done.stderr


def test_headers_that_never_finish_are_cut_after_10_s(tmp_path: Path) -> None:
    # uvicorn arms no timer before the first request's headers: a connection that sent half a request
    # line stayed open for good.
    with serving(tmp_path, "127.0.0.1") as (port, _):
        with connect("127.0.0.1", port, timeout=HEADER_TIMEOUT + 20) as sock:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            start = time.monotonic()
            assert sock.recv(1024) == b""  # closed by the server
            took = time.monotonic() - start
        assert HEADER_TIMEOUT - 1 < took < HEADER_TIMEOUT + 5, took
        # A client that does finish its headers is served, and kept alive past a first answer.
        assert post("127.0.0.1", port, {}) == 200


def open_fds(proc: subprocess.Popen[bytes]) -> int:
    return len(os.listdir(f"/proc/{proc.pid}/fd"))


def fd_kinds(proc: subprocess.Popen[bytes]) -> dict[str, int]:
    """What the server's descriptors point at (`socket`, `anon_inode`, a file), counted."""
    kinds: dict[str, int] = {}
    folder = f"/proc/{proc.pid}/fd"
    for fd in os.listdir(folder):
        with contextlib.suppress(OSError):  # closed between listing and reading
            kind = os.readlink(f"{folder}/{fd}").split(":")[0]
            kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts the server's descriptors in /proc")
@pytest.mark.parametrize(("host", "args"), [("0.0.0.0", ("--token", TOKEN)), ("127.0.0.1", ())],
                         ids=["off-loopback-with-token", "loopback"])
def test_1100_connections_that_never_finish_headers_do_not_lock_out_the_client(
        tmp_path: Path, host: str, args: tuple[str, ...]) -> None:
    # 1,100 connections that never finished their headers used up the server's file descriptors
    # (limit 1,024) and the client with the token could no longer connect.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1400:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    with serving(tmp_path, host, *args, nofile=1024) as (port, proc):
        own = open_fds(proc)
        floods: list[socket.socket] = []
        try:
            for _ in range(1100):
                sock = connect("127.0.0.1", port)
                sock.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and never the blank line
                floods.append(sock)
            flooded = time.monotonic()
            # The client is served now, while every flood connection is still inside its header deadline:
            # without the cap the server sits at its descriptor limit until the first deadlines pass.
            auth = {"Authorization": f"Bearer {TOKEN}"} if args else {}
            assert post("127.0.0.1", port, {"Host": f"127.0.0.1:{port}", **auth}) == 200
            served = time.monotonic() - flooded
            # Bounded by the cap plus what asyncio may have accepted and not yet handed to a protocol
            # (up to two accept batches of httpserve.BACKLOG); without the cap, 699-742 were held here.
            held = open_fds(proc)
            assert held < own + PENDING_MAX + 2 * BACKLOG, (own, held, fd_kinds(proc))
            assert served < 5, served
            if args:  # without the token the answer is 401, and the flood changes nothing
                assert post("127.0.0.1", port, {"Host": f"127.0.0.1:{port}"}) == 401
            # Here the count falls to the cap within a second, and to nothing once the header deadline
            # passes. CI once counted about 175 beside the server's own 45 s after the flood, which no
            # run here has shown: if that happens again, say what those descriptors are.
            deadline = time.monotonic() + HEADER_TIMEOUT + 5
            while open_fds(proc) >= own + PENDING_MAX + 16 and time.monotonic() < deadline:
                time.sleep(0.2)
            if open_fds(proc) >= own + PENDING_MAX + 16:
                log = next(tmp_path.glob("http-*.log")).read_text(errors="replace")[-1500:]
                warnings.warn(f"flood: {open_fds(proc)} descriptors held (own {own}) {HEADER_TIMEOUT + 5:.0f} s"
                              f" after the last: {fd_kinds(proc)}; server log: {log}", stacklevel=1)
        finally:
            for sock in floods:
                sock.close()


def test_connections_past_the_pending_cap_close_the_oldest_first() -> None:
    # The cap itself, in-process and without the header deadline: the subprocess flood above can only
    # show it on a machine quick enough to evict before the 10 s deadline cuts every connection anyway.
    import asyncio

    import uvicorn
    from uvicorn.server import ServerState

    from memory_mcp.adapters.serve.httpguard import guarded_protocol

    async def scenario() -> list[bool]:
        async def app(scope: object, receive: object, send: object) -> None:  # never reached: no headers end
            raise AssertionError

        config = uvicorn.Config(app, ws="none")
        config.load()
        protocol = guarded_protocol(lambda headers: True, header_timeout=600, pending_max=3)
        state = ServerState()
        server = await asyncio.get_running_loop().create_server(
            lambda: protocol(config=config, server_state=state, app_state={}), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        clients = []
        for _ in range(5):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            await writer.drain()
            clients.append((reader, writer))
            await asyncio.sleep(0.05)
        closed = []
        for reader, _ in clients:
            try:
                closed.append(await asyncio.wait_for(reader.read(), 1) == b"")
            except TimeoutError:
                closed.append(False)
        for _, writer in clients:
            writer.close()
        server.close()
        return closed

    assert asyncio.run(scenario()) == [True, True, False, False, False]
