"""The pages that only read: the timeline (the home page), a memory's page and a diff between two
versions of its file. Each asks the facade (`Store`) and renders a template; nothing here reads the
index or git itself."""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from memory_mcp.adapters.ui import text
from memory_mcp.adapters.ui.state import Ui
from memory_mcp.truth.errors import StoreError

PAGE_SIZE = 50
FILTERS = ("q", "store", "type", "state", "trust", "author", "standing", "entity", "file")


async def timeline(request: Request) -> Response:
    ui: Ui = request.app.state.ui
    params = request.query_params
    scope, store = ui.store(params.get("store"))
    number = max(1, _int(params.get("page"), 1))
    try:
        found = store.timeline(params.get("q", ""), types=_given(params.getlist("type")),
                               states=_given(params.getlist("state")), trusts=_given(params.getlist("trust")),
                               entity=params.get("entity", ""),
                               author=params.get("author", ""), standing=params.get("standing", ""),
                               file=params.get("file", ""), limit=PAGE_SIZE, offset=(number - 1) * PAGE_SIZE)
    except StoreError as e:
        return ui.render(request, "timeline.html", code=400, scope=scope, page=None, error=str(e), number=number,
                         chosen=_chosen(request), links={})
    kept = [(k, v) for k, v in params.multi_items() if k in FILTERS]
    links = {"prev": _link(kept, number - 1) if number > 1 else "",
             "next": _link(kept, number + 1) if found.more else ""}
    return ui.render(request, "timeline.html", scope=scope, page=found, error="", number=number,
                     chosen=_chosen(request), links=links)


def _given(values: list[str]) -> list[str]:
    """The values chosen (a select left at "any" sends an empty one)."""
    return [v for v in values if v]


def _chosen(request: Request) -> dict[str, list[str]]:
    return {k: request.query_params.getlist(k) for k in FILTERS}


def _link(kept: list[tuple[str, str]], number: int) -> str:
    return "/?" + urlencode([*kept, ("page", str(number))])


def _int(value: str | None, default: int) -> int:
    try:
        return int(value or default)
    except ValueError:
        return default


async def memory(request: Request) -> Response:
    ui: Ui = request.app.state.ui
    mem_id = request.path_params["id"]
    scope, store = ui.owner(mem_id)
    try:
        found = store.page(mem_id)
    except StoreError as e:
        return ui.render(request, "missing.html", code=404, error=str(e))
    fm = found.memory.frontmatter
    heading = f"# {found.memory.title}"
    body = found.memory.body.lstrip()
    rest = body[len(heading):].lstrip("\n") if body.startswith(heading) else body
    return ui.render(request, "memory.html", scope=scope, m=found, fm=fm, body_rest=rest)


async def version_diff(request: Request) -> Response:
    ui: Ui = request.app.state.ui
    mem_id, commit = request.path_params["id"], request.path_params["commit"]
    _, store = ui.owner(mem_id)
    try:
        found = store.version(mem_id, commit)
    except StoreError as e:
        return ui.render(request, "missing.html", code=404, error=str(e))
    lines = text.diff(found.before, found.after, f"{found.path} before {commit[:10]}", f"{found.path} at {commit[:10]}")
    return ui.render(request, "diff.html", mem_id=mem_id, v=found, lines=lines)


async def favicon(request: Request) -> Response:
    return HTMLResponse("", status_code=204)
