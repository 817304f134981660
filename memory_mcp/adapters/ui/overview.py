"""The pages about the store as a whole: the inboxes (and their counts on the home page), what the
agent will see, the store as of a day, insights with a chart, and a side-by-side compare."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from memory_mcp.adapters.ui import see
from memory_mcp.adapters.ui.state import Ui
from memory_mcp.truth.errors import StoreError
from memory_mcp.truth.model import MemoryType
from memory_mcp.truth.recall import Recall

AS_OF_LISTED = 50
CHART_HEIGHT = 120
BAR_WIDTH = 18


async def strip(request: Request) -> Response:
    """The inboxes' counts, for the home page (fetched after it, so the timeline never waits on them)."""
    ui: Ui = request.app.state.ui
    scope, store = ui.store(request.query_params.get("store"))
    try:
        status = store.status()
        unreviewed = len(store.unaccepted())
    except StoreError as e:
        return ui.render(request, "strip.html", error=str(e), counts=[], scope=scope)
    counts = [("conflicts", "open conflicts", status.pending_conflicts_total or len(status.pending_conflicts)),
              ("unreviewed", "unreviewed", unreviewed), ("unindexed", "unindexed files", len(status.unindexed)),
              ("review", "review due", len(status.review_due)), ("secrets", "flagged secrets", len(status.secrets)),
              ("flagged", "flagged content", len({f.id for f in status.flagged})),
              ("prune", "withheld by feedback", len(status.withheld))]
    return ui.render(request, "strip.html", error="", counts=counts, scope=scope)


async def inbox(request: Request) -> Response:
    ui: Ui = request.app.state.ui
    scope, store = ui.store(request.query_params.get("store"))
    try:
        status = store.status()
        unreviewed = store.unaccepted()
        prune = store.prune_candidates()
        sync = store.sync_status()
    except StoreError as e:
        return ui.render(request, "missing.html", code=400, error=str(e))
    return ui.render(request, "inbox.html", scope=scope, status=status, unreviewed=unreviewed, prune=prune,
                     sync=sync)


async def seen(request: Request) -> Response:
    ui: Ui = request.app.state.ui
    typed, path = request.query_params.get("prompt", ""), request.query_params.get("file", "")
    try:
        parts = {"digest": see.digest(ui.scopes), "prompt": see.prompt(ui.scopes, typed), "file": see.file(ui.scopes, path, ui.writer.folder)}
    except StoreError as e:
        return ui.render(request, "missing.html", code=400, error=str(e))
    return ui.render(request, "see.html", parts=parts, typed=typed, path=path)


async def as_of(request: Request) -> Response:
    ui: Ui = request.app.state.ui
    scope, store = ui.store(request.query_params.get("store"))
    day, query = request.query_params.get("day", ""), request.query_params.get("q", "")
    result, error = None, ""
    if day:
        try:
            result = store.recall(Recall(query, limit=AS_OF_LISTED, as_of=day, include_archived=True))
        except StoreError as e:
            error = str(e)
    return ui.render(request, "asof.html", scope=scope, day=day, q=query, result=result, error=error)


@dataclass(frozen=True)
class Bar:
    """One type's part of one week's bar in the chart (SVG coordinates)."""

    x: int
    y: int
    height: int
    kind: str
    label: str


async def insights(request: Request) -> Response:
    ui: Ui = request.app.state.ui
    scope, store = ui.store(request.query_params.get("store"))
    try:
        found = store.insights()
    except StoreError as e:
        return ui.render(request, "missing.html", code=400, error=str(e))
    return ui.render(request, "insights.html", scope=scope, i=found, bars=_bars(found.weeks),
                     width=max(1, len(found.weeks)) * (BAR_WIDTH + 6) + 40, height=CHART_HEIGHT + 30,
                     kinds=[t.value for t in MemoryType], loads=ui.scopes.loads(ui.writer.folder))


def _bars(weeks: list[tuple[str, dict[str, int]]]) -> list[Bar]:
    """Stacked bars, one per week, one part per type, scaled to the busiest week."""
    top = max((sum(c.values()) for _, c in weeks), default=1) or 1
    bars = []
    for i, (week, counts) in enumerate(weeks):
        y = CHART_HEIGHT
        for kind in (t.value for t in MemoryType):
            n = counts.get(kind, 0)
            if n:
                h = max(1, round(n * CHART_HEIGHT / top))
                y -= h
                bars.append(Bar(30 + i * (BAR_WIDTH + 6), y, h, kind, f"week of {week}: {n} {kind}"))
    return bars


async def compare(request: Request) -> Response:
    ui: Ui = request.app.state.ui
    a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
    try:
        left, right = ui.owner(a)[1].page(a), ui.owner(b)[1].page(b)
    except StoreError as e:
        return ui.render(request, "missing.html", code=404, error=str(e))
    return ui.render(request, "compare.html", left=left, right=right)
