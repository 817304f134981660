"""What the tools and commands get for a store the person has not trusted on this machine
(`consent`): the store is never opened (no index is built, no hand edit committed in it, no watcher),
and this stand-in takes its place in the scopes.

Reads say so: recall and status answer with nothing from the store and a note naming the command
that trusts it, the digest leaves it out; every other call, writes first, is refused with
`Untrusted` and the same sentence. No tool can trust a store: `memory-mcp trust` asks on a terminal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_mcp.app.store import Store
from memory_mcp.truth.errors import Untrusted
from memory_mcp.truth.options import Progress
from memory_mcp.truth.recall import Coverage, Hit, RecallResult
from memory_mcp.truth.results import Listed, ReindexResult, StatusResult

# The calls that answer (with nothing from the store); any other public attribute refuses.
_ANSWERS = frozenset({"root", "message", "recall", "preview", "digest", "status", "peek", "reindex", "close"})


class UntrustedStore(Store):
    """A stand-in for the store at `root`, which is not trusted; `message` says so and how to trust it."""

    def __init__(self, root: Path, message: str) -> None:
        # Nothing of Store's is set up: the store must not be opened.
        self.root = root
        self.message = message

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("_") or name in _ANSWERS:
            return object.__getattribute__(self, name)
        raise Untrusted(object.__getattribute__(self, "message"))

    def _coverage(self) -> Coverage:
        return Coverage(indexed=0, unindexed=0, changed=0, complete=False, note=f"untrusted: {self.message}")

    def recall(self, *args: Any, **fields: Any) -> RecallResult:
        return RecallResult(results=[], coverage=self._coverage(), pending_conflicts=0)

    def preview(self, *args: Any, **fields: Any) -> RecallResult:
        return self.recall()

    def digest(self, limit: int = 0) -> list[Hit]:
        return []

    def peek(self, id: str) -> Listed | None:
        return None

    def status(self) -> StatusResult:
        return StatusResult(store=str(self.root), counts={"total": 0}, coverage=self._coverage(), unindexed=[],
                            provisional=[], pending_conflicts=[], review_due=[], distill_candidates=[],
                            withheld=[], git={}, notices=[f"untrusted: {self.message}"])

    def reindex(self, verify: bool = False, progress: Progress | None = None) -> ReindexResult:
        return ReindexResult(mode="skipped", indexed=0, unindexed=0, seconds=0.0, drift=[],
                             note=f"untrusted: {self.message}")

    def close(self) -> None:
        return None

