"""The tool list a starting server answers `tools/list` with while it still registers its tools.

Registering the tools builds their argument and output schemas with pydantic, most of what a cold
start costs beyond a bare SDK server (benchmarks/bench_startup.py). The list those schemas make
depends only on the code, so the first server to build it keeps a copy in the user's cache folder,
keyed by the package's source files (name, size, mtime) and the SDK's and pydantic's versions; a
server started later on the same code answers from that copy at once. Tool calls still wait for the
real registration. A copy that is missing, unreadable or from other code is ignored and rewritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path

import mcp.types
import pydantic
from mcp.server.mcpserver.utilities import func_metadata
from mcp.types import Tool

from memory_mcp.truth.layout import cache_home

_PACKAGE = Path(__file__).resolve().parents[2]  # memory_mcp/


def _key() -> str:
    """What the tool list is made from: our sources, the SDK's schema code, pydantic and Python. Files
    are named by size and mtime (an upgrade rewrites them); reading package metadata took longer."""
    parts = [sys.version, pydantic.VERSION]
    sdk = [Path(str(mcp.types.__file__)), Path(str(func_metadata.__file__))]
    for file in [*sorted(_PACKAGE.rglob("*.py")), *sdk]:
        st = file.stat()
        parts.append(f"{file}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:20]


def path() -> Path:
    """Where the copy for this code lives."""
    return cache_home() / f"tools-{_key()}.json"


def load() -> list[Tool] | None:
    """The kept tool list for this code, or None."""
    try:
        return [Tool.model_validate(t) for t in json.loads(path().read_text(encoding="utf-8"))]
    except (OSError, ValueError, TypeError):
        return None


def save(tools: list[Tool]) -> None:
    """Keep `tools` for the next start; a cache that cannot be written is only a slower start."""
    target = path()
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = target.with_suffix(f".{os.getpid()}.tmp")
        scratch.write_text(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]),
                           encoding="utf-8")
        os.replace(scratch, target)
