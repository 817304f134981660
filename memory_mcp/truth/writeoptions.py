"""What a write of one memory is asked to do: `Remember`, `Update`, `Forget`, `Feedback`, and the
frontmatter fields a remember or an update may set. Apart from truth/options.py, which holds the
other operations' options, because a one-shot `memory-mcp remember` is a new process and Python 3.11
spends 0.2 to 0.4 ms building each dataclass at import (truth/writeresults.py says the same of the
results)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:  # only a write stamps who wrote it
    from memory_mcp.truth.stamp import Writer


@dataclass(frozen=True)
class Remember:
    """memory_remember: a new memory's text, and the frontmatter fields its caller sets.

    `fields` holds, by name, the values of the fields `model.settable("remember")` lists (type,
    trust, entities, ...), as the caller sent them; a field left out takes its declared default. One
    mapping rather than one attribute each, so a field declared settable in `model.Memory` needs no
    change here (docs/contributing.md). `by`: who writes, stamped as `written_by` (None: a script
    through the library, which stamps nothing)."""

    content: str
    title: str | None = None
    by: Writer | None = None
    fields: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Update:
    """memory_update: the text, title or fields (`model.settable("update")`, by name in `fields`) to
    change; a field that is absent or None stays as it is. `by` restamps `written_by` (None keeps it)."""

    id: str
    content: str | None = None
    title: str | None = None
    # The git blob id of the file as the caller last read it (`MemoryPage.blob`): when set, a file
    # changed since (a hand edit, another session) is refused with `Stale`, never overwritten.
    expected_sha: str = ""
    by: Writer | None = None
    fields: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Forget:
    """memory_forget: a state move, or a purge (which needs `confirm`)."""

    id: str
    mode: str = "archive"
    reason: str = ""
    confirm: bool = False
    expected_sha: str = ""  # as Update's: refuse when the file changed since the caller read it


@dataclass(frozen=True)
class Feedback:
    """memory_feedback: whether a recalled memory helped."""

    id: str
    helpful: bool
    note: str = ""


class UpdateFields(TypedDict, total=False):
    """The frontmatter fields memory_update's caller may set (`model.settable("update")`), typed for
    the facade's keywords so that mypy refuses a misspelt one; None leaves a field as it is.
    tests/app/test_facade.py keeps these keys equal to the declarations."""

    type: str | None
    trust: str | None
    entities: Sequence[str] | None
    source: str | None
    review_after: str | None
    paths: Sequence[str] | None


class RememberFields(UpdateFields, total=False):
    """The frontmatter fields memory_remember's caller may set (`model.settable("remember")`)."""

    supersedes: Sequence[str] | None
