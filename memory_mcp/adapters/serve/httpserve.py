"""`memory-mcp serve --http`: streamable HTTP, guarded against the network.

- **Loopback** (127.0.0.0/8, ::1 in any spelling, `localhost`) needs no token, so a web page the user
  visits must not reach it: every request's Host (and Origin, when sent) must name this machine,
  else 421 (403). A DNS-rebinding page sends `Host: evil.example`. The MCP SDK does this check only
  when the bind address is spelled `127.0.0.1`, `localhost` or `::1`, and only on `/mcp`; this one
  runs for every spelling and every path, and replaces the SDK's.
- **Off loopback** a bearer token of at least `TOKEN_MIN` characters is required (checked before the
  server starts); with a token, every request must carry it, on loopback too.
- **Connections**: uvicorn bounds nothing before the first request's headers (its keep-alive timeout
  starts after a response), so a peer that opens connections and never finishes them holds a file
  descriptor each until the server cannot accept its real client. Here the headers of every request
  must arrive within `httpguard.HEADER_TIMEOUT` seconds, and at most `httpguard.PENDING_MAX` connections
  may be open that
  have not yet sent a request with a valid token (any complete request, without a token); a new one
  beyond that closes the oldest. Not per address: on loopback every client is 127.0.0.1.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from memory_mcp.truth.errors import InvalidArgument

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp, Receive, Scope, Send

TOKEN_MIN = 32
BACKLOG = 128
_TOKEN = re.compile(r"[\x21-\x7e]+")  # what an HTTP header carries unchanged: visible ASCII


def is_loopback(host: str) -> bool:
    """Whether `host` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve to anything


def check_http(host: str, token: str | None) -> None:
    """InvalidArgument, before anything starts, when `host` and `token` would serve an open door."""
    if token is not None:
        if not _TOKEN.fullmatch(token.strip() or " "):
            raise InvalidArgument("the bearer token must be visible ASCII characters (no spaces); generate one with "
                                  "`python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`.")
        if len(token.strip()) < TOKEN_MIN:
            # The length only: the token itself is never printed.
            raise InvalidArgument(f"the bearer token has {len(token.strip())} characters; it needs at least "
                                  f"{TOKEN_MIN} (a short one can be guessed): generate one with "
                                  "`python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`.")
    elif not is_loopback(host):
        raise InvalidArgument(f"serving on {host} (not loopback) needs a bearer token: set MEMORY_MCP_TOKEN "
                              "or pass --token, and give clients the header 'Authorization: Bearer <token>'.")


def bearer_ok(headers: list[tuple[bytes, bytes]], token: bytes) -> bool:
    """Whether the request headers carry `Authorization: Bearer <token>` (scheme in any case)."""
    header = dict(headers).get(b"authorization", b"")
    kind, _, given = header.partition(b" ")
    # compare_digest: the time taken must not tell a caller how much of a guess was right
    return kind.lower() == b"bearer" and hmac.compare_digest(given.strip(), token)


async def _refuse(send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), *(headers or [])]})
    await send({"type": "http.response.body", "body": text.encode() + b"\n"})


class BearerAuth:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`, else 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.strip().encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not bearer_ok(scope["headers"], self.token):
            await _refuse(send, 401, "missing or wrong bearer token", [(b"www-authenticate", b"Bearer")])
            return
        await self.app(scope, receive, send)


def _names_this_machine(host: str | None) -> bool:
    """Whether a Host header value (`name[:port]`, `[v6]:port`) names a loopback address."""
    if not host:
        return False
    try:
        parts = urlsplit("//" + host)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return False
    return (parts.hostname is not None and parts.netloc == host and "@" not in host
            and is_loopback(parts.hostname))


def _origin_is_this_machine(origin: str) -> bool:
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.hostname is not None and is_loopback(parts.hostname)


class LoopbackOnly:
    """ASGI middleware for a loopback server: Host must name this machine (421), and Origin too when
    a browser sends one (403). What a DNS-rebinding page sends is its own name."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if not _names_this_machine(headers.get(b"host", b"").decode("latin-1")):
                await _refuse(send, 421, "Invalid Host header: this server answers only requests addressed "
                                         "to this machine")
                return
            origin = headers.get(b"origin")
            if origin is not None and not _origin_is_this_machine(origin.decode("latin-1")):
                await _refuse(send, 403, "Invalid Origin header: pages of other sites may not call this server")
                return
        await self.app(scope, receive, send)


def serve_http(server: MCPServer, host: str, port: int, token: str | None, log_level: str = "info") -> None:
    """Serve `server` over streamable HTTP at `host:port/mcp` until interrupted (see the docstring)."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    check_http(host, token)
    secret = token.strip().encode() if token else None
    # The SDK's own Host check is off: LoopbackOnly does it for every loopback spelling.
    app: ASGIApp = server.streamable_http_app(
        host=host, transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    if secret:
        app = BearerAuth(app, token or "")
    if is_loopback(host):
        app = LoopbackOnly(app)
    from memory_mcp.adapters.serve.httpguard import guarded_protocol

    protocol = guarded_protocol((lambda headers: bearer_ok(headers, secret)) if secret else (lambda headers: True))
    # backlog: asyncio accepts up to that many connections in one go before any protocol sees one, so
    # uvicorn's 2,048 could open more descriptors than the process may have before a single eviction.
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level, http=protocol, ws="none",
                            timeout_keep_alive=5, backlog=BACKLOG)
    uvicorn.Server(config).run()
