"""The Starlette app: routes, static files (vendored in the package: no CDN, it runs behind a
firewall), the guard in front of everything, and typed errors mapped to pages."""

from __future__ import annotations

import contextlib
import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from livereview.tools.errors import BadInput
from livereview.web import actions, console, events, operator, pages
from livereview.web.guard import Access, CsrfRefused, Guard, Sessions, check_csrf
from livereview.web.site import Site

Handler = Callable[[Site, Request], Awaitable[Response]]


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def _bound(site: Site, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            return await handler(site, request)
        except CsrfRefused as exc:
            return _error(request, str(exc), 403)
        except BadInput as exc:  # LocalReviewError too: no such review, thread, file …
            if request.method == "GET":
                return await pages.not_found(site, request, str(exc))
            return _error(request, str(exc), 400)
    return endpoint


def _error(request: Request, why: str, status: int) -> Response:
    if _wants_json(request):
        return JSONResponse({"error": why}, status_code=status)
    return PlainTextResponse(why, status_code=status)


def _login(site: Site, access: Access, sessions: Sessions) -> Handler:
    async def login(_: Site, request: Request) -> Response:
        if request.method == "GET":
            return site.page(request, "login.html", {"failed": False})
        form = await request.form(max_files=0, max_fields=4)
        check_csrf(request, form.get("csrf"))
        sent = form.get("token", "")
        token = access.token.reveal() if access.token else ""
        if not token or not isinstance(sent, str) or not hmac.compare_digest(
                sent.strip().encode(), token.encode()):
            return site.page(request, "login.html", {"failed": True}, status_code=401)
        sid = sessions.new()  # a new session id once signed in: no fixation
        sessions.sign_in(sid)
        request.state.session, request.state.new_session = sid, True
        return RedirectResponse("/", status_code=303)
    return login


def create_app(site: Site, access: Access) -> Starlette:
    sessions = Sessions()
    site.env.filters.update(operator.FILTERS)
    static = StaticFiles(directory=str(resources.files("livereview.web") / "static"))
    review = "/r/{repo:int}/{review:int}"
    routes = [
        Route("/", _bound(site, pages.index)),
        Route("/login", _bound(site, _login(site, access, sessions)), methods=["GET", "POST"]),
        Route("/highlight.css", _bound(site, pages.highlight_css)),
        Mount("/static", app=static, name="static"),
        Route(review, _bound(site, pages.review_page)),
        Route(f"{review}/file", _bound(site, pages.file_diff)),
        Route(f"{review}/live", _bound(site, pages.live)),
        Route(f"{review}/events", _bound(site, events.review_events)),
        Route(f"{review}/reply", _bound(site, actions.reply), methods=["POST"]),
        Route(f"{review}/comment", _bound(site, actions.comment), methods=["POST"]),
        Route(f"{review}/resolve", _bound(site, actions.resolve), methods=["POST"]),
        Route(f"{review}/verdict", _bound(site, actions.verdict), methods=["POST"]),
        Route("/lessons", _bound(site, console.lessons_page)),
        Route("/lessons/decide", _bound(site, console.decide), methods=["POST"]),
        Route("/lessons/export", _bound(site, operator.lessons_export)),
        Route("/health", _bound(site, operator.health_page)),
        Route("/pending", _bound(site, operator.pending_page)),
        Route("/recent", _bound(site, operator.recent_page)),
        Route("/conversation", _bound(site, operator.conversation_page)),
        Route("/config", _bound(site, operator.config_page)),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await site.close()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.add_middleware(Guard, access=access, sessions=sessions)
    return app
