"""The local page's door: a random token, given once in the printed URL and then kept in a cookie;
a CSRF token on every POST; and headers that keep the browser strict (a Content-Security-Policy
with no inline script, no framing, no referrer, nothing cached). Host and Origin are checked before
this, by the HTTP server's own guard (`serve/httpserve.LoopbackOnly`: DNS rebinding)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlencode

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# script-src 'self': the vendored htmx and nothing inline (a memory's text can never run);
# img-src 'self' data: a markdown image from elsewhere is not fetched (it would tell that host you looked).
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"), (b"cache-control", b"no-store")]
PUBLIC = "/static/"  # the vendored script and the style sheet: nothing of the store


class Denied(Exception):
    """A POST without the page's CSRF token: refused with 403."""


class Keys:
    """The page's secrets for one run: the token in the URL (kept in a cookie named after it, so two
    pages on two ports keep theirs) and the CSRF token its forms carry."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token or secrets.token_urlsafe(32)
        self.cookie = "memory_mcp_ui_" + hashlib.sha256(self.token.encode()).hexdigest()[:10]
        self.csrf = secrets.token_urlsafe(32)

    def url(self, host: str, port: int) -> str:
        return f"http://{host}:{port}/?{urlencode({'token': self.token})}"

    def check_form(self, form: FormData) -> None:
        given = form.get("csrf")
        if not isinstance(given, str) or not hmac.compare_digest(given.encode(), self.csrf.encode()):
            raise Denied("this form is missing the page's CSRF token: reload the page and try again")


class TokenGate:
    """ASGI middleware: a request carrying `?token=` sets the cookie and is sent on without it; any
    other (but the static files) must carry the cookie, else 401. Every answer gets `HEADERS`."""

    def __init__(self, app: ASGIApp, keys: Keys) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def strict(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        request = Request(scope)
        given = request.query_params.get("token")
        if given is not None and _same(given, self.keys.token):
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = scope["path"] + ("?" + urlencode(rest) if rest else "")
            cookie = f"{self.keys.cookie}={self.keys.token}; Path=/; HttpOnly; SameSite=Strict"
            await _answer(strict, 303, b"", [(b"location", target.encode()), (b"set-cookie", cookie.encode())])
            return
        if not scope["path"].startswith(PUBLIC) and not _same(request.cookies.get(self.keys.cookie, ""), self.keys.token):
            await _answer(strict, 401, b"Open the address `memory-mcp ui` printed (it carries this page's token).\n",
                          [(b"content-type", b"text/plain; charset=utf-8")])
            return
        await self.app(scope, receive, strict)


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
