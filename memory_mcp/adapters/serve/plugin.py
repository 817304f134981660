"""The Claude Code plugin's server (started as `python -m memory_mcp.plugin`): the stores are chosen from
the session's project with no flags, the project's store (created on first use) and the user's.

Claude Code starts plugin MCP servers with $CLAUDE_PROJECT_DIR set to the session's folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from memory_mcp.truth import roots


def main() -> int:
    """Serve the project's store and the user's over stdio."""
    named = roots.named_root()  # $MEMORY_MCP_ROOT overrides the project's store here as on every path
    config = roots.ScopeConfig(named) if named else roots.project_scopes(roots.working_folder() or Path.home())
    from memory_mcp.adapters.serve.launch import serve
    from memory_mcp.truth import logs
    from memory_mcp.truth.errors import StoreError

    logs.configure(os.environ.get("MEMORY_MCP_LOG_LEVEL") or "info")
    try:
        serve(config.project, user_root=config.user, team_root=config.team)
    except StoreError as e:
        print(f"memory-mcp: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
