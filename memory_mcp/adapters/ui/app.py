"""`memory-mcp ui`: the local page, a Starlette app over the facade served by uvicorn on loopback.

The layers of its door, outermost first: the HTTP server's guard (`serve/httpguard`: a deadline on
headers, a cap on idle connections), Host and Origin checked (`serve/httpserve.LoopbackOnly`: a
DNS-rebinding page is refused), the token and the strict headers (`guard.TokenGate`), and on every
POST the CSRF token (`actions.action`)."""

from __future__ import annotations

import socket
import sys
import threading
import webbrowser
from importlib.resources import files

from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from memory_mcp.adapters.serve.httpserve import LoopbackOnly
from memory_mcp.adapters.ui import actions, overview, pages
from memory_mcp.adapters.ui.guard import Keys, TokenGate
from memory_mcp.adapters.ui.state import Ui
from memory_mcp.app.scopes import Scopes

HOST = "127.0.0.1"


def build(scopes: Scopes, keys: Keys) -> tuple[ASGIApp, Ui]:
    """The page's ASGI app for `scopes`, behind its guards, and the state it keeps."""
    ui = Ui(scopes, keys)
    static = StaticFiles(directory=str(files("memory_mcp.adapters.ui") / "static"))
    app = Starlette(routes=[
        Route("/", pages.timeline),
        Route("/m/{id}", pages.memory),
        Route("/m/{id}/diff/{commit}", pages.version_diff),
        Route("/m/{id}/edit", actions.edit, methods=["POST"]),
        Route("/m/{id}/forget", actions.forget, methods=["POST"]),
        Route("/m/{id}/resolve", actions.resolve, methods=["POST"]),
        Route("/m/{id}/decide", actions.decide, methods=["POST"]),
        Route("/undo", actions.undo, methods=["POST"]),
        Route("/strip", overview.strip),
        Route("/inbox", overview.inbox),
        Route("/see", overview.seen),
        Route("/asof", overview.as_of),
        Route("/insights", overview.insights),
        Route("/compare", overview.compare),
        Route("/favicon.ico", pages.favicon),
        Mount("/static", static, name="static"),
    ])
    app.state.ui = ui
    return LoopbackOnly(TokenGate(app, keys)), ui


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def serve(scopes: Scopes, port: int = 0, open_browser: bool = True, log_level: str = "warning") -> None:
    """Serve the page on loopback until interrupted; print its address (with the token) and open it."""
    import uvicorn

    from memory_mcp.adapters.serve.httpguard import guarded_protocol

    keys = Keys()
    app, _ = build(scopes, keys)
    port = port or free_port()
    url = keys.url(HOST, port)
    config = uvicorn.Config(app, host=HOST, port=port, log_level=log_level, http=guarded_protocol(lambda h: True),
                            ws="none", timeout_keep_alive=5, lifespan="off")
    server = uvicorn.Server(config)
    print(f"memory-mcp ui: {url}\n(the address carries this run's token: keep it to yourself; Ctrl-C stops)",
          file=sys.stderr, flush=True)
    if open_browser:
        threading.Timer(0.5, webbrowser.open, (url,)).start()
    server.run()
