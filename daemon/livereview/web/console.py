"""The operator's console (DESIGN §11), its first room: the lessons queue. Proposed lessons
wait for a person's verdict — approve (active for the next answer), reject, archive — as
`livereview lessons approve|reject|archive` gives it, on the config's daemon database.
Served when `livereview web --config` names one."""

from __future__ import annotations

import asyncio

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from livereview.tools import console as console_ops
from livereview.tools.errors import BadInput
from livereview.web.actions import form_of, number
from livereview.web.site import Site


async def lessons_page(site: Site, request: Request) -> Response:
    queue = site.need_queue()
    lessons = await queue.lessons()
    sources = {} if site.settings is None else {
        s.lesson.id: s for s in await asyncio.to_thread(
            console_ops.lesson_sources, site.settings, lessons)}
    return site.page(request, "lessons.html", {"lessons": lessons, "sources": sources})


async def decide(site: Site, request: Request) -> Response:
    queue = site.need_queue()
    form = await form_of(request)
    verdict = form.get("verdict", "")
    if not isinstance(verdict, str):
        raise BadInput("verdict: expected text")
    lesson = await queue.decide(number(form, "lesson"), verdict)
    if "application/json" in request.headers.get("accept", ""):
        return JSONResponse({"ok": True, "status": lesson.status})
    return RedirectResponse("/lessons", status_code=303)
