"""What a write of one memory returns: `remember` (with the pairs the conflict gate raised),
`forget` and `feedback`. Apart from truth/results.py, which holds every other operation's results,
because a one-shot `memory-mcp remember` is a new process and Python 3.11 spends 0.2 to 0.4 ms
building each dataclass at import: a remember builds these four, not the thirty others
(tests/adapters/test_cli_imports.py keeps it so)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Conflict:
    id: str
    title: str
    excerpt: str
    shared_entities: list[str]
    age_days: float
    latest_wins_eligible: bool
    similarity: float


@dataclass
class RememberResult:
    id: str
    path: str
    title: str
    state: str
    duplicate: bool
    superseded: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    unknown_entities: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # Kinds of text in it that tries to steer the model (truth/injection.py): written all the same,
    # listed by memory_status and marked wherever it is shown.
    flagged: list[str] = field(default_factory=list)


@dataclass
class ForgetResult:
    id: str
    mode: str
    state: str | None
    purged: bool
    message: str
    warnings: list[str] = field(default_factory=list)


@dataclass
class FeedbackResult:
    id: str
    feedback: float
    withheld: bool
