"""The page's writes, each a POST with the page's CSRF token, each through the facade's write path
(validation, the credential scan, the conflict gate, the store lock, one commit): edit, forget,
resolve a pair, accept or reject, and undo the page's own last change. An edit and a forget carry
the version of the file the page showed (`expected_sha`), so a hand edit made meanwhile is refused,
never overwritten. Each answers with a redirect to a page that says what happened."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from memory_mcp.adapters.ui.guard import Denied
from memory_mcp.adapters.ui.state import Ui
from memory_mcp.truth.errors import StoreError

Action = Callable[[Ui, Request, FormData], Awaitable[str]]  # returns the page to show next


def action(run: Action) -> Callable[[Request], Awaitable[Response]]:
    """A POST endpoint: the CSRF token checked first, a store's refusal shown as a note on the page
    the form came from (nothing was written)."""
    async def endpoint(request: Request) -> Response:
        ui: Ui = request.app.state.ui
        form = await request.form()
        try:
            ui.keys.check_form(form)
        except Denied as e:
            return PlainTextResponse(str(e), status_code=403)
        try:
            target = await run(ui, request, form)
        except StoreError as e:
            return _to(_back(form, "/"), ui.note(str(e), error=True))
        return _to(target, request.state.note if hasattr(request.state, "note") else "")
    return endpoint


def _to(target: str, note: str) -> Response:
    joint = "&" if "?" in target else "?"
    return RedirectResponse(target + (f"{joint}{urlencode({'note': note})}" if note else ""), status_code=303)


def _back(form: FormData, default: str) -> str:
    """The page a form came from (a path of this site only), else `default`."""
    back = _text(form, "back")
    return back if back.startswith("/") and not back.startswith(("//", "/\\")) else default


def _say(request: Request, ui: Ui, message: str) -> None:
    request.state.note = ui.note(message)


def _text(form: FormData, name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


def _list(form: FormData, name: str) -> list[str]:
    return [p.strip() for p in _text(form, name).replace("\n", ",").split(",") if p.strip()]


@action
async def edit(ui: Ui, request: Request, form: FormData) -> str:
    mem_id = request.path_params["id"]
    scope, store = ui.owner(mem_id)
    now = store.page(mem_id)
    fm = now.memory.frontmatter
    fields: dict[str, object] = {}
    for name in ("type", "trust", "source", "review_after"):
        value = _text(form, name).strip()
        if value != str(fm.get(name) or ""):
            fields[name] = value
    for name in ("entities", "paths"):
        listed = _list(form, name)
        if listed != list(fm.get(name) or []):
            fields[name] = listed
    title, body = _text(form, "title").strip(), _text(form, "body").replace("\r\n", "\n")
    content = body if body.strip() != _text(form, "body_was").replace("\r\n", "\n").strip() else None
    retitle = title if title and title != now.memory.title else None
    if content is None and retitle is None and not fields:
        _say(request, ui, "nothing changed")
        return f"/m/{mem_id}"
    if content is not None:
        content = f"# {title or now.memory.title}\n\n{content.strip()}"
    done = store.update(mem_id, content=content, title=retitle, expected_sha=_text(form, "expected_sha"),
                        by=ui.writer, **fields)  # type: ignore[arg-type]
    ui.record(scope, store, [done.id])
    _say(request, ui, f"saved: {done.title}")
    return f"/m/{done.id}"


@action
async def forget(ui: Ui, request: Request, form: FormData) -> str:
    mem_id = request.path_params["id"]
    scope, store = ui.owner(mem_id)
    mode = _text(form, "mode")
    done = store.forget(mem_id, mode=mode, reason=_text(form, "reason"), confirm=_text(form, "confirm") == "yes",
                        expected_sha=_text(form, "expected_sha"))
    ui.record(scope, store, [done.id])
    _say(request, ui, done.message)
    return "/" if done.purged else f"/m/{done.id}"


@action
async def resolve(ui: Ui, request: Request, form: FormData) -> str:
    mem_id = request.path_params["id"]
    scope, store = ui.owner(mem_id)
    other, decision = _text(form, "other_id"), _text(form, "decision")
    winner = _text(form, "winner") or mem_id
    loser = other if winner == mem_id else mem_id
    done = store.resolve(winner, loser, decision)
    ui.record(scope, store, [winner, loser])
    _say(request, ui, done.message)
    return _back(form, f"/m/{mem_id}")


@action
async def decide(ui: Ui, request: Request, form: FormData) -> str:
    mem_id = request.path_params["id"]
    _, store = ui.owner(mem_id)
    lines = store.decide(_text(form, "decision"), [mem_id])
    _say(request, ui, "; ".join(lines))
    return _back(form, f"/m/{mem_id}")


@action
async def undo(ui: Ui, request: Request, form: FormData) -> str:
    if not ui.made:
        _say(request, ui, "nothing to undo: no change was made from this page")
        return "/"
    last = ui.made[-1]
    _, store = ui.store(last.scope)
    done = store.undo(last.commit)  # a refusal (Stale) keeps it on the list, to try again after a fix
    ui.made.pop()
    _say(request, ui, done.message)
    return _back(form, "/")
