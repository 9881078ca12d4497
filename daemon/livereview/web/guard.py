"""Every request's security (DESIGN §11): which hosts and methods, who, from which site.

- The Host header must name a loopback address when the face listens on one: a page of
  another site that rebinds its DNS name to 127.0.0.1 is refused before it reads anything.
- With a token (`--token-file`) a browser signs in once per session (POST /login; the
  session id changes then), a script sends `Authorization: Bearer`; behind a reverse proxy
  the user the proxy names in the trusted header is let in.
- State changes are POST only, from this site only: the Origin (and Sec-Fetch-Site, when
  sent) must be this page's own; and the form carries the session's CSRF token
  (`check_csrf`, called by every POST route, since only the route reads the body).
- Every response carries a strict Content-Security-Policy (no inline script or style, no
  other origin), nosniff, no referrer, no framing, and is not cached.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from livereview.settings import Secret
from livereview.web.listen import is_loopback

Scope = MutableMapping[str, object]
Message = MutableMapping[str, object]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE: Final = "livereview_session"
OPEN_PATHS: Final = ("/login", "/static/")  # reachable before signing in
CSP: Final = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
              "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
              "form-action 'self'; frame-ancestors 'none'")
HEADERS: Final = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    "cache-control": "no-store",
}


class CsrfRefused(Exception):
    """A POST without this session's token."""


@dataclass(frozen=True)
class Access:
    """Who may use the face: anyone who reaches loopback, a token's holder, or the user a
    trusted reverse proxy names."""

    token: Secret | None = None
    trusted_header: str = ""  # e.g. X-Forwarded-User; only when a proxy sets it
    loopback_only: bool = True  # the Host header must be a loopback name

    @property
    def authenticated(self) -> bool:
        return bool(self.token) or bool(self.trusted_header)


class Sessions:
    """Signed session ids (HMAC with a key that lives as long as the process) and their
    CSRF tokens; the sessions that signed in with the token."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)
        self._signed_in: set[str] = set()

    def _mac(self, purpose: str, sid: str) -> str:
        return hmac.new(self._key, f"{purpose}:{sid}".encode(), hashlib.sha256).hexdigest()

    def new(self) -> str:
        return secrets.token_urlsafe(24)

    def cookie(self, sid: str) -> str:
        return f"{sid}.{self._mac('session', sid)}"

    def from_cookie(self, value: str | None) -> str | None:
        sid, _, mac = (value or "").partition(".")
        if sid and hmac.compare_digest(mac, self._mac("session", sid)):
            return sid
        return None

    def csrf(self, sid: str) -> str:
        return self._mac("csrf", sid)

    def sign_in(self, sid: str) -> None:
        self._signed_in.add(sid)

    def signed_in(self, sid: str) -> bool:
        return sid in self._signed_in


def check_csrf(request: Request, sent: object) -> None:
    expected = str(request.state.csrf)
    if not isinstance(sent, str) or not hmac.compare_digest(sent, expected):
        raise CsrfRefused("this form is not from this session: reload the page")


def _host_name(host_header: str) -> str:
    return urlsplit(f"//{host_header}").hostname or ""


def cross_site(headers: Headers) -> str:
    """Why a state change is refused as coming from another site, or "".

    Under `Referrer-Policy: no-referrer` a browser sends `Origin: null` with a plain form
    post, even to its own origin (Fetch standard, "serializing a request origin": the
    origin is "null" when the referrer policy is no-referrer and the request is not
    CORS-mode). So `null` is taken only with `Sec-Fetch-Site: same-origin`, which only the
    browser sets (a forbidden header) and which says "cross-site" for an opaque origin.
    """
    host = headers.get("host", "")
    origin = headers.get("origin")
    fetch_site = headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site != "same-origin":
        return "a request from another site (Sec-Fetch-Site) is refused"
    if origin == "null" and fetch_site != "same-origin":
        return "a request from another site (Origin: null) is refused"
    if origin not in (None, "null") and urlsplit(origin).netloc != host:
        return "a request from another site (Origin) is refused"
    return ""


class Guard:
    """The ASGI middleware in front of every route."""

    def __init__(self, app: App, access: Access, sessions: Sessions) -> None:
        self.app, self.access, self.sessions = app, access, sessions

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        sid = self.sessions.from_cookie(request.cookies.get(COOKIE))
        fresh = sid is None
        sid = sid or self.sessions.new()
        state = scope.setdefault("state", {})
        assert isinstance(state, dict)
        state.update(session=sid, csrf=self.sessions.csrf(sid), new_session=fresh)
        wrapped = self._with_headers(scope, send)
        refusal = self._refusal(request, sid)
        if refusal is not None:
            await refusal(scope, receive, wrapped)
            return
        await self.app(scope, receive, wrapped)

    def _refusal(self, request: Request, sid: str) -> Response | None:
        headers = request.headers
        if self.access.loopback_only and not is_loopback(_host_name(headers.get("host", ""))):
            return PlainTextResponse("unexpected Host header: open the page at 127.0.0.1",
                                     status_code=400)
        if request.method not in ("GET", "HEAD", "POST"):
            return PlainTextResponse("method not allowed", status_code=405)
        if request.method == "POST" and (why := cross_site(headers)):
            return PlainTextResponse(why, status_code=403)
        if self._allowed(request, sid):
            return None
        if request.method == "POST":
            return PlainTextResponse("sign in first", status_code=401)
        return RedirectResponse("/login", status_code=303)

    def _allowed(self, request: Request, sid: str) -> bool:
        access = self.access
        if not access.authenticated or request.url.path.startswith(OPEN_PATHS):
            return True
        if access.trusted_header and request.headers.get(access.trusted_header, "").strip():
            return True
        if access.token is None:
            return False
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        if bearer and hmac.compare_digest(bearer.encode(), access.token.reveal().encode()):
            return True
        return self.sessions.signed_in(sid)

    def _with_headers(self, scope: Scope, send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
                state = scope["state"]
                assert isinstance(state, dict)
                if state.get("new_session"):
                    headers.append("set-cookie", f"{COOKIE}="
                                   f"{self.sessions.cookie(str(state['session']))}; "
                                   "HttpOnly; SameSite=Strict; Path=/")
            await send(message)
        return sending
