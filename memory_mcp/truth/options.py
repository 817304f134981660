"""What each operation is asked to do: one typed object per operation, built at the edge (the MCP
server or the CLI) and passed whole through the facade down to the search and the SQL.

Values arrive as the caller sent them (strings for enums); the use case validates them, so a bad
value is refused with the same coded error whichever adapter built the object. A recall's object
(`Recall`) lives in truth/recall.py beside what a recall returns: every hook asks for one, and loading
this module's other classes would cost each hook process about 3 ms. A write of one memory's
(`Remember`, `Update`, `Forget`, `Feedback`) live in truth/writeoptions.py, for a one-shot
`memory-mcp remember` likewise.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Called with (done, total) as a long operation (reindex, import, sync) goes.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Share:
    """memory_share: move a memory from the person's own store into the project's team store."""

    id: str
    to: str = "team"


@dataclass(frozen=True)
class Resolve:
    """memory_resolve: settle a pair the conflict gate raised."""

    id: str
    other_id: str
    decision: str


@dataclass(frozen=True)
class Conflicts:
    """`memory-mcp conflicts`: which open pairs to list (a page of them) or settle all at once.

    `commit` keeps the pairs on a memory that commit wrote (an import's, say: its report names the
    commit); `id` the pairs on one memory. With `decision`, `apply` settles every selected pair
    (keep_both, or newer: the newer memory of each pair supersedes the older); without `apply`,
    the same call is a dry run that lists what it would settle."""

    commit: str | None = None
    id: str | None = None
    limit: int = 50
    offset: int = 0
    decision: str | None = None
    apply: bool = False


@dataclass(frozen=True)
class Timeline:
    """The local page's list of memories: newest change first, filtered, a page at a time; with a
    `query`, the recall pipeline's best matches under the same filters (no usage recorded).

    Empty filters select everything: every state, type and trust. `standing` is the person's
    (`truth/standing.py`), `author` the git author's name of the version held, `file` a path the
    memory's `paths:` globs must match."""

    query: str = ""
    types: Sequence[str] = ()
    states: Sequence[str] = ()
    trusts: Sequence[str] = ()
    entity: str = ""
    author: str = ""
    standing: str = ""
    file: str = ""
    limit: int = 50
    offset: int = 0
