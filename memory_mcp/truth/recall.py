"""A recall: what it is asked (`Recall`), what it finds (`Hit`, `RecallResult`) and how fresh the
index was when it answered (`Coverage`, `ReconcileReport`).

Kept apart from truth/options.py and truth/results.py, which hold every other operation's, because a
hook is a new process per call and Python 3.11 spends 0.2 to 0.4 ms building each dataclass at
import: the prompt and file hooks load these seven classes, not fifty."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass
class UnindexedFile:
    path: str
    reason: str


@dataclass
class Coverage:
    """How fresh the index was for this answer: absence of a result is not proof of absence."""

    indexed: int
    unindexed: int
    changed: int
    complete: bool
    note: str = ""


@dataclass
class Replaced:
    """A memory a hit superseded (directly or down its chain)."""

    id: str
    title: str


@dataclass
class Hit:
    id: str
    path: str
    title: str
    excerpt: str
    type: str
    state: str
    trust: str
    entities: list[str]
    updated: str | None
    score: float
    superseded_by: str | None = None
    # Which store it came from when the server serves project and user scopes.
    scope: str | None = None
    # A recall as_of a day: when the memory changed (or went) after that day, and when another
    # memory superseded it after that day, as today's store says.
    changed_since: str | None = None
    superseded_since: str | None = None
    # What this memory replaced, newest first, at most search.CHAIN_ON_HIT: the "why" of a decision
    # is often the memory it superseded.
    supersedes: list[Replaced] = field(default_factory=list)
    # Provenance (issue 31): the git author of the commit that wrote this version ("" when none has
    # yet: written here and not committed), shown and never trusted; and its standing with the
    # person on this machine (`truth/standing.py`: own, accepted or unaccepted).
    author: str = ""
    standing: str = ""
    # A file memory whose file changed since it was written (app/staleness.py), in a file recall:
    # "src/billing/tax.py changed in 3 commits since"; "" otherwise.
    changed: str = ""
    # The kinds of text in it that tries to steer the model (truth/injection.py), marked on its line.
    flagged: list[str] = field(default_factory=list)


@dataclass
class RecallResult:
    results: list[Hit]
    coverage: Coverage
    pending_conflicts: int
    truncated: bool = False
    unknown_entities: list[str] = field(default_factory=list)
    as_of_commit: str | None = None  # the commit a recall as_of a day answered from


@dataclass
class ReconcileReport:
    """What one reconcile saw and did."""

    scanned: int = 0
    reindexed: list[str] = field(default_factory=list)  # paths parsed and indexed this call
    removed: list[str] = field(default_factory=list)  # paths whose file was gone
    removed_ids: dict[str, str] = field(default_factory=dict)  # path -> the memory that file held
    promoted: list[str] = field(default_factory=list)  # ids of archived memories made active by a hand edit
    new_errors: list[str] = field(default_factory=list)  # paths that became unparseable this call
    dictionary_changed: bool = False
    aborted: str | None = None  # why deletions were not swept (an unreadable folder)
    walked: bool = False  # the whole of memories/ was walked (not only the paths a watcher named)
    folders: list[str] = field(default_factory=list)  # folders walked because a watcher named them
    seconds: float = 0.0

    @property
    def changed(self) -> int:
        return len(self.reindexed) + len(self.removed) + len(self.new_errors)


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
    file: str = ""  # a project-relative path: only the memories whose `paths` globs match it
    as_of: str = ""  # a day, YYYY-MM-DD (UTC): answer from the store as git held it at its end
    # The folder of the project `file` belongs to, whose history says whether the file changed since
    # a memory was written (app/staleness.py); "" for the working folder's (a hook names its session's).
    project: str = ""
