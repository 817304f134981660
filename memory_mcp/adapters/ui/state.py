"""What one run of the local page holds: the stores it shows, its keys, its templates, the notes a
write leaves for the next page, and the commits its own writes made (what "undo" may revert)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from memory_mcp.adapters.ui import text
from memory_mcp.adapters.ui.guard import Keys
from memory_mcp.app.scopes import Scopes
from memory_mcp.app.store import Store
from memory_mcp.truth.model import MemoryType, State, Trust
from memory_mcp.truth.roots import working_folder
from memory_mcp.truth.stamp import UI, Writer, new_session
from memory_mcp.truth.standing import STANDINGS

NOTES_KEPT = 20


@dataclass(frozen=True)
class Made:
    """A commit a write from this page made: the store it is in, its id and what it did."""

    scope: str
    commit: str
    subject: str


@dataclass
class Note:
    text: str
    error: bool = False


@dataclass
class Ui:
    scopes: Scopes
    keys: Keys
    made: list[Made] = field(default_factory=list)
    notes: dict[str, Note] = field(default_factory=dict)
    # Who the page's edits are written as (`written_by`): client `ui`, one session per `memory-mcp ui`.
    writer: Writer = field(default_factory=lambda: Writer(UI, new_session(), working_folder()))
    env: Environment = field(init=False)

    def __post_init__(self) -> None:
        self.env = Environment(loader=PackageLoader("memory_mcp.adapters.ui", "templates"),
                               autoescape=select_autoescape(default=True, default_for_string=True))
        self.env.filters.update(markdown=text.markdown, marked=text.marked, field=text.field, short=_short)
        self.env.globals.update(types=[t.value for t in MemoryType], states=[s.value for s in State],
                                trusts=[t.value for t in Trust], standings=list(STANDINGS))

    # ------------------------------------------------------------------ stores
    def store(self, scope: str | None) -> tuple[str, Store]:
        """The store `scope` names (the first, the project's, when none or an unknown one)."""
        name = scope if scope in self.scopes.stores else self.scopes.default
        return name, self.scopes.stores[name]

    def owner(self, mem_id: str) -> tuple[str, Store]:
        store = self.scopes.owner(mem_id)
        return self.scopes.scope_of(store), store

    # ------------------------------------------------------------------ notes and undo
    def note(self, message: str, error: bool = False) -> str:
        """Keep a message for the page a redirect shows next; its key goes in that page's URL."""
        key = secrets.token_urlsafe(8)
        self.notes[key] = Note(message, error)
        while len(self.notes) > NOTES_KEPT:
            self.notes.pop(next(iter(self.notes)))
        return key

    def record(self, scope: str, store: Store, mem_ids: list[str]) -> None:
        """Remember the commit a write just made, when HEAD is on one that wrote these memories."""
        head = store.head()
        fresh = head is not None and (not self.made or self.made[-1].commit != head.commit)
        if head is not None and fresh and set(mem_ids) & set(head.memory_ids):
            self.made.append(Made(scope, head.commit, head.subject))

    # ------------------------------------------------------------------ rendering
    def render(self, request: Request, template: str, code: int = 200, **values: Any) -> HTMLResponse:
        note = self.notes.pop(request.query_params.get("note", ""), None)
        html = self.env.get_template(template).render(
            request=request, csrf=self.keys.csrf, note=note, undo=self.made[-1] if self.made else None,
            scopes=list(self.scopes.stores), **values)
        return HTMLResponse(html, status_code=code)


def _short(value: str | None, n: int = 10) -> str:
    return (value or "")[:n]
