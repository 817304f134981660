"""The typed errors the core raises. Each has a stable code the MCP server and CLI show."""

from __future__ import annotations


class StoreError(Exception):
    """Base of every expected failure. `code` is stable; the message says what to do next."""

    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class InvalidArgument(StoreError):
    code = "invalid_argument"


class InvalidId(StoreError):
    code = "invalid_id"


class NotFound(StoreError):
    code = "not_found"


class Containment(StoreError):
    code = "outside_store"


class InvalidStore(StoreError):
    code = "invalid_store"


class ParseError(StoreError):
    code = "frontmatter_parse"


class InvalidTransition(StoreError):
    code = "invalid_transition"


class ReasonRequired(StoreError):
    code = "reason_required"


class ConfirmRequired(StoreError):
    code = "confirm_required"


class InvalidSupersede(StoreError):
    code = "invalid_supersede"


class SecretDetected(StoreError):
    code = "secret_detected"


class TooLarge(StoreError):
    code = "too_large"


class BeforeHistory(StoreError):
    """A recall as of a day before the store's first commit: git knows nothing of the store then."""

    code = "before_history"


class Busy(StoreError):
    code = "store_busy"


class RepoBusy(StoreError):
    """The store's git repository is mid-merge, mid-rebase or on a detached HEAD: writes wait."""

    code = "repo_busy"


class IndexRebuilt(StoreError):
    """The derived index was found damaged mid-call and has been rebuilt from the files: call again."""

    code = "index_rebuilt"


class Unwritable(StoreError):
    """The disk is full, or the store (or its .git), or the file a command writes (an export), is
    read-only or not ours to write."""

    code = "store_unwritable"


class UnsafeStore(StoreError):
    """A project's `.memory` that is not a store of its own (a link, the project itself, the
    project's git directory, a submodule never checked out): refused before anything is opened."""

    code = "unsafe_store"


class Untrusted(StoreError):
    """A store the person has not trusted on this machine (it came with a clone, a submodule or an
    archive): nothing is read from it or written to it until `memory-mcp trust`."""

    code = "untrusted_store"


class InvalidPointer(StoreError):
    """A project's team pointer file (`.memory.toml`) that is not one: too big, not TOML, a key it
    does not define, or a remote URL that is not allowed. It came with a clone: nothing is fetched."""

    code = "invalid_pointer"


class SyncFailed(StoreError):
    code = "sync_failed"


class SyncRefused(SyncFailed):
    """A sync that refused what the remote brings (paths a store never takes, too many deletions):
    nothing was merged. The same code as any failed sync; the sync record tells it apart."""


class SyncOffline(SyncFailed):
    """The remote could not be reached (network down, or a wrong host): nothing changed, try later."""


class Declined(StoreError):
    """The person said no when asked (a purge they did not confirm)."""

    code = "declined"


class Stale(StoreError):
    """A write that carried the file's version as the caller read it (`expected_sha`), or an undo,
    found the file changed since: nothing was written, so a hand edit made meanwhile is kept."""

    code = "stale_write"


class UnknownTool(StoreError):
    code = "unknown_tool"


class Internal(StoreError):
    """Not an expected failure: a bug, reported with its exception type so it can be found."""

    code = "internal"


def codes() -> dict[str, type[StoreError]]:
    """Every stable error code and its class: the one list the server, the CLI and the docs use."""
    out: dict[str, type[StoreError]] = {}
    todo: list[type[StoreError]] = [StoreError]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls is not StoreError:
            out[cls.code] = cls
    return dict(sorted(out.items()))
