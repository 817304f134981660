"""What each operation is asked to do: one typed object per operation, built at the edge (the MCP
server or the CLI) and passed whole through the facade down to the search and the SQL.

Values arrive as the caller sent them (strings for enums); the use case validates them, so a bad
value is refused with the same coded error whichever adapter built the object.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

# Called with (done, total) as a long operation (reindex, import, sync) goes.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Remember:
    """memory_remember: a new memory and what it replaces."""

    content: str
    title: str | None = None
    type: str = "fact"
    entities: Sequence[str] = ()
    trust: str = "agent-inferred"
    source: str = ""
    supersedes: Sequence[str] = ()
    review_after: str | None = None


@dataclass(frozen=True)
class Update:
    """memory_update: the fields to change; None leaves a field as it is."""

    id: str
    content: str | None = None
    title: str | None = None
    entities: Sequence[str] | None = None
    type: str | None = None
    trust: str | None = None
    source: str | None = None
    review_after: str | None = None


@dataclass(frozen=True)
class Recall:
    """memory_recall: the text, the filters (applied in SQL, before ranking), size and budget."""

    query: str = ""
    limit: int = 8
    types: Sequence[str] = ()
    entities: Sequence[str] = ()
    include_archived: bool = False
    include_deprecated: bool = False
    max_tokens: int = 0
    diversity: float = 0.0
    min_score: float = 0.0


@dataclass(frozen=True)
class Forget:
    """memory_forget: a state move, or a purge (which needs `confirm`)."""

    id: str
    mode: str = "archive"
    reason: str = ""
    confirm: bool = False


@dataclass(frozen=True)
class Resolve:
    """memory_resolve: settle a pair the conflict gate raised."""

    id: str
    other_id: str
    decision: str


@dataclass(frozen=True)
class Feedback:
    """memory_feedback: whether a recalled memory helped."""

    id: str
    helpful: bool
    note: str = ""


T = TypeVar("T")


def build(kind: type[T], args: tuple[Any, ...], kwargs: dict[str, Any]) -> T:
    """`kind` from a facade call: either the options object itself, or its fields (what a test or a
    script writes: `store.remember("text", type="decision")`)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], kind):
        return args[0]
    return kind(*args, **kwargs)
