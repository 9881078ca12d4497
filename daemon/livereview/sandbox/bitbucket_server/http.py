"""The fake Bitbucket Data Center over HTTP: a ThreadingHTTPServer on 127.0.0.1.

Answers like a Data Center 8/9 server does at `url` (its base: REST under `/rest/api/1.0`
and `/rest/api/latest`, reactions under `/rest/comment-likes/latest`): JSON bodies, paged
lists (`start`, `limit` → `isLastPage`, `nextPageStart`), `{"errors": [...]}` errors,
401 for a bad token *and* for a missing permission, and on every response the
authenticated user's name and id in `X-AUSERNAME` / `X-AUSERID` (the documented way to learn
who a token belongs to). HTTP/1.1 keep-alive.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from livereview.sandbox.bitbucket_server.model import BitbucketError
from livereview.sandbox.bitbucket_server.routes import Raw, Request, Status, routes
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.sandbox.loopback import LoopbackHandler, LoopbackServer, Response


class _Handler(LoopbackHandler):
    server_version = "Apache-Coyote/1.1"  # Bitbucket runs on Tomcat
    fault_content_type = "application/json;charset=UTF-8"


class FakeBitbucketDCServer(LoopbackServer[FakeBitbucketDC]):
    """Serves a FakeBitbucketDC at `url`."""

    handler = _Handler
    thread_name = "fake-bitbucket-dc"

    def __init__(self, state: FakeBitbucketDC, *, latency_seconds: float = 0.0) -> None:
        super().__init__(state, latency_seconds=latency_seconds)
        self.routes = routes(reactions=state.reactions_enabled)

    def _publish(self, url: str) -> None:
        with self.state.lock:
            self.state.base_url = url

    def dispatch(self, method: str, path: str, query: dict[str, str], raw: bytes,
                 headers: Mapping[str, str]) -> Response:
        out = {"Content-Type": "application/json;charset=UTF-8",
               "X-AREQUESTID": f"@{uuid.uuid4().hex[:8].upper()}x1x0",
               "Cache-Control": "no-cache, no-transform", "Vary": "X-AUSERNAME,Accept-Encoding"}
        body: Any
        try:
            user = self.state.user_for_token(headers.get("authorization"))
            if user is not None:
                out["X-AUSERNAME"], out["X-AUSERID"] = user.name, str(user.id)
            if not path.startswith("/rest/"):
                raise BitbucketError(404, "Not Found")
            status, body = self._route(method, path[len("/rest"):], query, raw, user)
            if isinstance(body, Raw):
                out["Content-Type"] = body.content_type
                return status, body.text.encode(), out
        except BitbucketError as err:
            out.update(err.headers)
            status, body = err.status, err.body
        except Exception as err:  # noqa: BLE001 - a bug in the fake answers 500
            status = 500
            body = BitbucketError(500, f"{type(err).__name__}: {err}").body
        data = b"" if status == 204 or body is None else json.dumps(body).encode()
        return status, data, out

    def _route(self, method: str, path: str, query: dict[str, str], raw: bytes,
               user: Any) -> tuple[int, Any]:
        allowed = False
        for route in self.routes:
            match = route.pattern.fullmatch(path)
            if match is None:
                continue
            allowed = True
            if route.method == method:
                break
        else:
            if allowed:
                raise BitbucketError(405, f"Method {method} is not allowed for this resource")
            raise BitbucketError(404, f"No resource at {path}")
        if user is None and not path.endswith("/application-properties"):
            raise BitbucketError(401, "Authentication failed. Please check your credentials "
                                 "and try again.", "com.atlassian.bitbucket.auth."
                                 "AuthenticationException")
        body = self._json(raw) if method in ("POST", "PUT") else {}
        with self.state.lock:  # one request sees one consistent state
            result = route.action(self.state, Request(user, match, body, query))
        if isinstance(result, Status):
            return result.status, result.body
        return route.status, result

    @staticmethod
    def _json(raw: bytes) -> dict[str, Any]:
        if not raw:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            raise BitbucketError(400, "Unexpected character: the request body is not JSON"
                                 ) from None
        if not isinstance(data, dict):
            raise BitbucketError(400, "The request body must be a JSON object")
        return data
