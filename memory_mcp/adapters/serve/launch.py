"""Starting the server: one log line saying what is served, then stdio (ended cleanly by SIGINT or
SIGTERM) or streamable HTTP (httpserve.py).

Nothing here loads the store (git, SQLite, YAML): the first tool call does, so `initialize` and
`tools/list` are answered without waiting for it."""

from __future__ import annotations

import logging
import os
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import memory_mcp
from memory_mcp.truth.errors import InvalidArgument
from memory_mcp.truth.layout import default_root
from memory_mcp.truth.roots import ScopeConfig

if TYPE_CHECKING:
    from memory_mcp.adapters.serve.server import ScopesHandle

log = logging.getLogger("memory_mcp")
# How long a stop waits for the store call in progress (a write and its commit) before exiting anyway;
# a write cut short is safe (files are replaced whole, recovery commits them), only slower to finish.
STOP_WAIT_SECONDS = 5.0


def serve(root: Path | None = None, http: bool = False, host: str = "127.0.0.1", port: int = 8765,
          token: str | None = None, user_root: Path | None = None, watch: bool | None = None,
          team_root: Path | None = None) -> None:
    """Run the server over stdio (default) or streamable HTTP on `host:port/mcp`.

    `watch` keeps a file watcher on each store (None: $MEMORY_MCP_WATCH decides; on by default).

    Off loopback HTTP needs a bearer `token` (anyone who can reach the port could otherwise read and
    write the memories); with a token, every request must carry it, on loopback too."""
    from memory_mcp.adapters.serve.httpserve import check_http
    from memory_mcp.adapters.serve.server import ScopesHandle, build_server

    config = ScopeConfig(root, user_root, team_root if user_root is not None else None)
    config.check()
    if http:
        if not 0 < port < 65536:
            raise InvalidArgument(f"--port {port} is not a TCP port; give one from 1 to 65535 (e.g. 8765).")
        check_http(host, token)  # before a store or a watcher starts
    handle = ScopesHandle(config, watch=watch)
    server = build_server(scopes=handle, tools_in_background=not http)
    project = (config.project or default_root()).expanduser().resolve()
    log.info("version %s, serving %s%s over %s", memory_mcp.__version__, project,
             (f" and the team store {config.team}" if config.team else "")
             + (f" and the user store {config.user}" if config.user else ""),
             f"http://{host}:{port}/mcp" if http else "stdio")
    try:
        if not http:
            _stop_on_signals(handle)
            server.run()
            return
        from memory_mcp.adapters.serve.httpserve import serve_http

        serve_http(server, host, port, token, logging.getLevelName(log.getEffectiveLevel()).lower())
    finally:
        handle.close()


def _stop_on_signals(handle: ScopesHandle) -> None:
    """SIGINT and SIGTERM end a stdio server at once, after the store call in progress.

    The process exits with os._exit: the SDK reads stdin in a worker thread that no cancellation
    reaches, so a normal exit would wait for the client's next line (Ctrl-C seemed ignored, a second
    one hung in a traceback). The stores need no closing: the index is SQLite in WAL mode and every
    memory file is written whole."""

    def stop(signum: int, frame: object) -> None:
        waiter = threading.Thread(target=handle.stop_calls, daemon=True)
        waiter.start()
        waiter.join(STOP_WAIT_SECONDS)
        log.info("stopped (%s)", signal.Signals(signum).name)
        logging.shutdown()
        os._exit(0)

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
