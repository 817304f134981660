"""Rescue refs: what a sync keeps before it lets a remote delete memories here, or when it cannot
merge, so no local commit and no memory is ever reachable only through the reflog.

A rescue is a pair of refs under `refs/memory-mcp/rescue/<UTC time>/`: `local` (HEAD before the
sync) and `remote` (the commit fetched). Refs, not branches: `git branch` stays the person's, `git
gc` keeps their commits, and `git log refs/memory-mcp/rescue/...` or `git checkout REF -- memories`
brings a memory back.

How many deletions a sync takes without asking: a remote that deletes a few memories (a teammate
purged some) is merged and the count is told; one that deletes more than `DELETE_LIMIT` memories,
or more than a quarter of a small store's (at least two), is refused until the person runs
`memory-mcp sync --allow-deletions`. A remote that deletes every memory (an emptied or force-pushed
branch) is always above that line.
"""

from __future__ import annotations

from datetime import UTC, datetime

from memory_mcp.vcs.history import History

PREFIX = "refs/memory-mcp/rescue"
DELETE_LIMIT = 20


def keep(history: History, local: str, remote: str, why: str) -> str:
    """Keep `local` and `remote` under a new rescue prefix; returns the prefix (`.../local`, `.../remote`)."""
    prefix = f"{PREFIX}/{datetime.now(UTC).strftime('%Y%m%dT%H%M%S.%fZ')}"
    history.set_ref(f"{prefix}/local", local, f"memory-mcp sync: {why}")
    history.set_ref(f"{prefix}/remote", remote, f"memory-mcp sync: {why}")
    return prefix


def too_many(deleted: int, held: int) -> bool:
    """Whether a remote deleting `deleted` of the `held` memory files here is refused (see the module)."""
    return deleted >= 2 and deleted > min(DELETE_LIMIT, held // 4)
