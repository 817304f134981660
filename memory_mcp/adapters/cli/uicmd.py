"""`memory-mcp ui`: the local page over the stores this folder uses (the plugin's choice), served on
loopback with a token in the printed address (memory_mcp/adapters/ui/)."""

from __future__ import annotations

import argparse

from memory_mcp.adapters.cli.registry import command
from memory_mcp.truth.errors import InvalidArgument


def _options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", type=int, default=0, help="loopback port (default: a free one)")
    p.add_argument("--no-browser", dest="browser", action="store_false", help="print the address, open no browser")


@command("ui", "a local page to browse, search, edit and settle the memories (loopback, token)", _options,
         user_store=True)
def run(args: argparse.Namespace) -> int:
    try:
        from memory_mcp.adapters.ui.app import serve
    except ImportError as e:  # Jinja2 or markdown-it-py missing: the `ui` extra
        raise InvalidArgument(f"the page needs the `ui` extra ({e.name} is not installed): "
                              "install it from this checkout with pip install -e '.[ui]'.") from None
    from memory_mcp.adapters.cli.stores import chosen
    from memory_mcp.app.scopes import Scopes

    scopes = Scopes.open(chosen(args).config, watch=None)
    try:
        serve(scopes, port=args.port, open_browser=args.browser)
    finally:
        scopes.close()
    return 0
