"""What each operation is asked to do: one typed object per operation, built at the edge (the MCP
server or the CLI) and passed whole through the facade down to the search and the SQL.

Values arrive as the caller sent them (strings for enums); the use case validates them, so a bad
value is refused with the same coded error whichever adapter built the object. A recall's object
(`Recall`) lives in truth/recall.py beside what a recall returns: every hook asks for one, and loading
this module's other classes would cost each hook process about 3 ms.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

if TYPE_CHECKING:  # every hook imports this module; only a write needs the stamp
    from memory_mcp.truth.stamp import Writer

# Called with (done, total) as a long operation (reindex, import, sync) goes.
Progress = Callable[[int, int], None]


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


@dataclass(frozen=True)
class Feedback:
    """memory_feedback: whether a recalled memory helped."""

    id: str
    helpful: bool
    note: str = ""


class UpdateFields(TypedDict, total=False):
    """The frontmatter fields memory_update's caller may set (`model.settable("update")`), typed for
    the facade's keywords so that mypy refuses a misspelt one; None leaves a field as it is.
    tests/truth/test_fields.py keeps these keys equal to the declarations."""

    type: str | None
    trust: str | None
    entities: Sequence[str] | None
    source: str | None
    review_after: str | None
    paths: Sequence[str] | None


class RememberFields(UpdateFields, total=False):
    """The frontmatter fields memory_remember's caller may set (`model.settable("remember")`)."""

    supersedes: Sequence[str] | None


T = TypeVar("T")


def given(kind: type[T], first: T | Any, **rest: Any) -> T:
    """The options object of a facade call: `first` when it is one (what the adapters pass), else
    `kind` built from the call's arguments (what a test or a script writes). An argument the
    operation needs and the call left out (None) is refused here, by name."""
    if isinstance(first, kind):
        return first
    required = [f.name for f in fields(kind)[1:]  # type: ignore[arg-type]
                if f.default is MISSING and f.default_factory is MISSING]
    missing = [name for name in required if rest.get(name) is None]
    if missing:
        raise TypeError(f"{kind.__name__.lower()}() needs {', '.join(missing)}")
    build: Callable[..., T] = kind
    return build(first, **rest)
