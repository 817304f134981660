"""The local page served by uvicorn on a free loopback port in a thread of this process, and the
Debian Chromium Playwright drives through `executable_path` (browsers are never downloaded here):
shared by tests/adapters/test_ui_browser.py and benchmarks/ui_screenshots.py."""

from __future__ import annotations

import contextlib
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import uvicorn

from memory_mcp.adapters.serve.httpguard import guarded_protocol
from memory_mcp.adapters.ui.app import build, free_port
from memory_mcp.adapters.ui.guard import Keys
from memory_mcp.app.scopes import Scopes
from memory_mcp.app.store import Store

REBIND_HOST = "rebind.test"  # the browser resolves it to 127.0.0.1, as a DNS-rebinding page would be
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         f"--host-resolver-rules=MAP {REBIND_HOST} 127.0.0.1"]


def chromium() -> str | None:
    """Debian's headless shell or its chromium, whichever is installed."""
    return shutil.which("chromium-headless-shell") or shutil.which("chromium")


def missing() -> str:
    """Why the browser tests cannot run here ("" when they can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[ui-test]')"
    if chromium() is None:
        return "no chromium or chromium-headless-shell on PATH (apt-get install chromium)"
    return ""


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    """A headless Chromium with a user-data folder of its own, for as long as the block runs."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as profile, sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(profile, executable_path=chromium(), headless=True,
                                                        args=FLAGS, viewport={"width": 1200, "height": 900})
        try:
            yield context
        finally:
            context.close()


class Served:
    """The page over `store`, served until `stop`; `url(path)` carries the token the first time."""

    def __init__(self, store: Store) -> None:
        self.keys = Keys()
        app, self.ui = build(Scopes({"project": store}), self.keys)
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning", ws="none",
                                http=guarded_protocol(lambda headers: True), lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def login(self) -> str:
        return self.url(f"/?token={self.keys.token}")

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


