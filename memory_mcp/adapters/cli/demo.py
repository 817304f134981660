"""`memory-mcp demo`: a guided run on a fresh store, for a newcomer to see the whole loop."""

from __future__ import annotations

import tempfile
from pathlib import Path

from memory_mcp.adapters import render
from memory_mcp.adapters.install.claude_code import server_command
from memory_mcp.app.store import Store

EXAMPLES = [
    ("Use pnpm, never npm, in the web workspace",
     "The web workspace uses pnpm workspaces; running npm install there breaks the lockfile.",
     "preference", ["pnpm", "web-workspace"]),
    ("Migrations go through alembic",
     "Schema changes go through alembic revisions, reviewed by hand before they are merged.",
     "decision", ["alembic", "postgres"]),
    ("Session cache TTL is 30 minutes",
     "User sessions are cached in Redis with a TTL of 1800 seconds (getSessionTtl in config/cache.py).",
     "fact", ["redis"]),
]


def run() -> str:
    """On a new temporary store (never a real one: the demo writes memories and edits a file by
    hand): remember, recall, edit a file, recall again, show git log."""
    store = Store.open(Path(tempfile.mkdtemp(prefix="memory-mcp-demo-")) / "store")
    out = [f"store: {store.root}", ""]
    ids = []
    for title, content, kind, entities in EXAMPLES:
        r = store.remember(content, title=title, type=kind, entities=entities, trust="user-stated")
        ids.append(r)
        out.append(render.remember(r))
    out += ["", "$ recall 'session ttl'", render.recall(store.recall("session ttl"))]
    target = store.root / ids[2].path
    target.write_text(target.read_text(encoding="utf-8").rstrip("\n") + "\nRaised to 3600 seconds for the admin app.\n",
                      encoding="utf-8")
    out += ["", f"(edited {ids[2].path} by hand)", "$ recall 'admin app'", render.recall(store.recall("admin app"))]
    out += ["", "$ git log", store.history.short_log().rstrip(), "",
            f"Open {store.root}/memories in an editor, or point the server at it: "
            f"MEMORY_MCP_ROOT={store.root} {server_command()} serve"]
    store.close()
    return "\n".join(out)
