"""The POST routes: a person's actions, each exactly the tools/ operation `livereview review
reply|approve|request-changes|resolve` runs, in the repository's own store, signed by git's
user.name — so an agent's `review wait` in another process receives it at once.

Every form carries the session's CSRF token (guard.check_csrf; the guard already refused
other sites). A script's request (Accept: application/json) gets `{"ok": true}` or
`{"error": …}`; a plain form post is sent back to the review's page (303).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from livereview.core.local_model import ReviewStatus
from livereview.tools import local_review as ops
from livereview.tools.errors import MAX_ID, BadInput
from livereview.web.guard import check_csrf
from livereview.web.site import Site

MAX_TEXT = 100_000  # characters of one comment: a page's textarea, not a file upload
VERDICTS = {"approve": ReviewStatus.APPROVED, "request_changes": ReviewStatus.CHANGES_REQUESTED}
Answer = Callable[[], Awaitable[None]]


async def form_of(request: Request) -> FormData:
    form = await request.form(max_files=0, max_fields=20)
    check_csrf(request, form.get("csrf"))
    return form


def _field(form: FormData, name: str, required: bool = True) -> str:
    value = form.get(name, "")
    if not isinstance(value, str):
        raise BadInput(f"{name}: expected text")
    if len(value) > MAX_TEXT:
        raise BadInput(f"{name}: longer than {MAX_TEXT} characters")
    if required and not value.strip():
        raise BadInput(f"{name}: empty")
    return value


def number(form: FormData, name: str) -> int:
    value = _field(form, name)
    if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= MAX_ID:
        raise BadInput(f"{name}: {value[:40]!r} is not an id")
    return int(value)


def done(request: Request) -> Response:
    if "application/json" in request.headers.get("accept", ""):
        return JSONResponse({"ok": True})
    base = f"/r/{int(request.path_params['repo'])}/{int(request.path_params['review'])}"
    return RedirectResponse(base, status_code=303)


async def reply(site: Site, request: Request) -> Response:
    ws, review = await site.review(request)
    form = await form_of(request)
    await ops.reply(ws, review.id, number(form, "thread"), _field(form, "text"))
    await site.answer(ws, review.id)
    return done(request)


async def comment(site: Site, request: Request) -> Response:
    """A new thread: on a line of a file, or (no path) on the whole review."""
    ws, review = await site.review(request)
    form = await form_of(request)
    path = _field(form, "path", required=False)
    line = number(form, "line") if path else None
    await ops.add_comment(ws, review.id, _field(form, "text"), path, line)
    await site.answer(ws, review.id)
    return done(request)


async def resolve(site: Site, request: Request) -> Response:
    ws, review = await site.review(request)
    form = await form_of(request)
    resolved = _field(form, "resolved") == "1"
    await ops.resolve(ws, review.id, number(form, "thread"), resolved)
    return done(request)


async def verdict(site: Site, request: Request) -> Response:
    ws, review = await site.review(request)
    form = await form_of(request)
    chosen = _field(form, "verdict")
    if chosen not in VERDICTS:
        raise BadInput(f"verdict: {chosen[:40]!r} is not approve or request_changes")
    await ops.set_status(ws, review.id, VERDICTS[chosen], _field(form, "comment", False))
    return done(request)
