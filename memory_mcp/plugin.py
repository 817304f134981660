"""The Claude Code plugin's server entry, kept at this name: a marketplace checkout runs
`python -m memory_mcp.plugin` (plugin/bin/memory-mcp-plugin), old ones included. The server lives in
memory_mcp/adapters/serve/plugin.py."""

import sys

from memory_mcp.adapters.serve.plugin import main

if __name__ == "__main__":
    sys.exit(main())
