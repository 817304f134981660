"""What the store's operations return. Plain dataclasses: the MCP server publishes them as output
schemas and sends them as structured content; the CLI prints them. A recall's results are in
truth/recall.py and a write of one memory's (remember, forget, feedback) in truth/writeresults.py,
so that a hook or a one-shot `memory-mcp remember` builds only its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory_mcp.truth.recall import Coverage, UnindexedFile


@dataclass
class Chain:
    supersedes: list[str]
    superseded_by: list[str]


@dataclass
class HistoryEntry:
    commit: str
    date: str
    message: str


@dataclass
class ReadResult:
    id: str
    path: str
    title: str
    state: str
    frontmatter: dict[str, Any]
    body: str
    chain: Chain
    history: list[HistoryEntry]
    recall_count: int = 0
    warnings: list[str] = field(default_factory=list)
    author: str = ""  # the git author of this version, `Name <email>` (shown, never trusted: it can be forged)
    standing: str = ""  # own, accepted or unaccepted (truth/standing.py)


@dataclass
class ShareResult:
    id: str
    title: str
    path: str  # its path in the team store
    team_commit: str  # the commit that added it to the team store
    own_commit: str  # the commit that took it out of the store it came from
    message: str


@dataclass
class ResolveResult:
    id: str
    other_id: str
    decision: str
    message: str


@dataclass
class PendingConflict:
    id: str
    other_id: str
    title: str
    other_title: str
    pair: str


@dataclass
class ConflictPage:
    """`memory-mcp conflicts`: the open pairs a filter selects, `total` of them, `pairs` from `offset`."""

    total: int
    offset: int
    pairs: list[PendingConflict]


@dataclass
class BulkResolveResult:
    """Every selected pair settled with one decision, as one commit (`applied` False: a dry run)."""

    decision: str
    applied: bool
    settled: list[PendingConflict]
    # How `newer` went where a chain was involved: a supersede moved to a chain's newest memory.
    notes: list[str] = field(default_factory=list)
    commit: str | None = None


@dataclass
class Listed:
    id: str
    path: str
    title: str
    detail: str = ""


@dataclass
class SecretFlag:
    """A file written by hand that holds what looks like a credential: where and what kind, never the value."""

    path: str
    kind: str
    committed: bool = False  # git history has the file as it is (it came by a sync, or was committed by hand)


@dataclass
class StatusResult:
    store: str
    counts: dict[str, Any]
    coverage: Coverage
    unindexed: list[UnindexedFile]
    provisional: list[Listed]
    pending_conflicts: list[PendingConflict]
    review_due: list[Listed]
    distill_candidates: list[Listed]
    withheld: list[Listed]
    git: dict[str, Any]
    secrets: list[SecretFlag] = field(default_factory=list)
    # dictionary.md lines that look like entries but are indented, so are not read as entries.
    dictionary_skipped: list[str] = field(default_factory=list)
    vectors: VectorCoverage = field(default_factory=lambda: VectorCoverage("", 0, 0))
    # How many pairs are open in all: `pending_conflicts` lists the first LIST_LIMIT of them.
    pending_conflicts_total: int = 0
    # About where the store and its index came from (issue 31): an index rebuilt because it was not
    # built here, a `.derived/` tracked in git, a store not trusted on this machine.
    notices: list[str] = field(default_factory=list)
    # File memories whose files changed since they were written (app/staleness.py), newest first.
    files_changed: list[Listed] = field(default_factory=list)
    # Memories whose text tries to steer the model (truth/injection.py), one finding each line.
    flagged: list[FlaggedMemory] = field(default_factory=list)


@dataclass
class FlaggedMemory:
    """One way an indexed memory's text tries to steer the model: kind, line of its file and our
    reason; never its text, not even its title (the model reads status too)."""

    id: str
    path: str
    kind: str
    line: int
    reason: str


@dataclass
class VectorCoverage:
    """The optional dense signal in memory_status: its model ("" when off) and how many memories
    have a vector; those without one are found by their words alone until they get one."""

    model: str
    with_vectors: int
    without_vectors: int
    note: str = ""


@dataclass
class VectorsResult:
    """`memory-mcp reindex --vectors`: the missing vectors computed."""

    model: str
    embedded: int
    with_vectors: int
    without_vectors: int


@dataclass
class ReindexResult:
    mode: str
    indexed: int
    unindexed: int
    seconds: float
    drift: list[str] = field(default_factory=list)
    note: str = ""


@dataclass
class Move:
    """One file a reorganisation moves: from `path` to `to`, both store-relative."""

    path: str
    to: str


@dataclass
class ReorganizeResult:
    """What `memory-mcp reorganize` moves (or, without --yes, would move) and what it leaves."""

    moves: list[Move]
    skipped: list[Listed]
    applied: bool
    commit: str | None = None


@dataclass
class TimelineEntry:
    """One memory in the local page's list: what the index holds of it, who wrote the version held
    (the git author, shown and never trusted) and its standing with the person."""

    id: str
    path: str
    title: str
    excerpt: str
    type: str
    state: str
    trust: str
    entities: list[str]
    updated: str | None
    author: str
    standing: str
    score: float = 0.0  # a search's rank score (0 when listed by date)
    subject: str = ""  # the subject of the commit that wrote the version held ("" before one holds it)
    flagged: list[str] = field(default_factory=list)  # the kinds of what in its text tries to steer the model


@dataclass
class TimelinePage:
    """A page of the timeline: `total` memories match the filters, `entries` from `offset`;
    `counts` the matching memories by type. A search lists its best matches only (`searched`)."""

    total: int
    offset: int
    entries: list[TimelineEntry]
    counts: dict[str, int]
    searched: bool = False
    authors: list[str] = field(default_factory=list)  # every author name the store's versions have
    more: bool = False  # there is a next page (a search's `total` counts only the matches looked at so far)


@dataclass
class MemoryPage:
    """Everything the local page shows about one memory besides `read`: the version held (`blob`,
    the compare-and-swap a write from the page carries), its author, standing and usage, its open
    conflict pairs and what in its text was flagged."""

    memory: ReadResult
    blob: str
    author: str
    author_email: str
    authored: str
    standing: str
    recall_count: int
    last_recalled: str | None
    feedback: float
    conflicts: list[PendingConflict]
    flagged: list[FlaggedMemory] = field(default_factory=list)  # what in its text tries to steer the model


@dataclass
class Version:
    """A memory's file as one commit left it ("" when that commit deleted it or held none) and as
    the commit before left it: the two sides of a diff between versions."""

    commit: str
    path: str
    before: str
    after: str


@dataclass
class HeadCommit:
    """The commit HEAD is on: what the local page records to undo its own change."""

    commit: str
    subject: str
    memory_ids: list[str]


@dataclass
class UndoResult:
    commit: str | None  # the commit that undid it (None when nothing differed)
    undone: str
    paths: list[str]
    message: str


@dataclass
class AuthorCount:
    name: str
    email: str
    memories: int


@dataclass
class Insights:
    """The local page's insights: memories added per week by type (`weeks`: the Monday, then the
    count of each type), who wrote the versions held, and pairs of memories that read alike."""

    total: int
    counts: dict[str, dict[str, int]]
    weeks: list[tuple[str, dict[str, int]]]
    authors: list[AuthorCount]
    alike: list[PendingConflict]
    clients: dict[str, int] = field(default_factory=dict)  # by `written_by` client ("" when none recorded)


@dataclass
class PruneList:
    """Active memories neither changed nor recalled for `days` (usage lives in the index: since it
    was built), how many, and the oldest of them."""

    days: int
    total: int
    listed: list[Listed]


@dataclass
class SyncStatus:
    """Where a store with a git remote stands with it: commits ahead and behind the remote branch as
    last fetched, and the last sync this clone recorded (when, how it ended, what it said)."""

    remote: str
    branch: str
    ahead: int
    behind: int
    fetched: bool  # the remote branch has been fetched at least once
    last_at: str = ""
    last_outcome: str = ""
    last_news: str = ""
    refused: str = ""  # when the last sync that refused (with syncs after it) ran, and what it said
