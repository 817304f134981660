"""memory-mcp: long-term memory for coding agents, kept as markdown files in a git repository."""

__version__ = "0.1.0"
