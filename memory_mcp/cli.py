"""The `memory-mcp` console script, kept at this name: editable installs and every registration that
`install` wrote import `memory_mcp.cli:main`. The commands live in memory_mcp/adapters/cli/."""

import sys

from memory_mcp.adapters.cli.main import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
