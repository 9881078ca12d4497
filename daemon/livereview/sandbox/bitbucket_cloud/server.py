"""The fake Bitbucket Cloud over HTTP: a ThreadingHTTPServer on 127.0.0.1 serving REST 2.0.

Answers like api.bitbucket.org does: the API under `/2.0` (`api_url`), JSON pages
`{"pagelen", "size", "page", "values", "next"}` whose `next` is a full URL
(https://developer.atlassian.com/cloud/bitbucket/rest/intro/#pagination), BBQL `q` and
`sort` on lists, `{"type": "error", "error": {"message"}}` errors, weak ETags answered with
304, `X-Credential-Type` / `X-OAuth-Scopes` / `X-Accepted-OAuth-Scopes` on every answer to
an authenticated request, the hourly quota (traffic.py), 403 for a missing
scope with the scopes granted and required, and 302 from a pull request's diff to the
repository diff.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from livereview.sandbox.bitbucket_cloud.model import SCOPED, BitbucketError, Credential
from livereview.sandbox.bitbucket_cloud.query import ordered, parse
from livereview.sandbox.bitbucket_cloud.routes import Empty, Raw, Redirect, Request, Route, routes
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.sandbox.loopback import LoopbackHandler, LoopbackServer, Response

PREFIX = "/2.0"
DEFAULT_PAGELEN = 10


class _Handler(LoopbackHandler):
    server_version = "AtlassianEdge"


class FakeBitbucketCloudServer(LoopbackServer[FakeBitbucketCloud]):
    """Serves a FakeBitbucketCloud; the API base (hosts[].url) is `api_url`."""

    handler = _Handler
    thread_name = "fake-bitbucket-cloud"

    def __init__(self, state: FakeBitbucketCloud, *, latency_seconds: float = 0.0) -> None:
        super().__init__(state, latency_seconds=latency_seconds)
        self.routes = routes()

    @property
    def api_url(self) -> str:
        return f"{self.url}{PREFIX}"

    def _publish(self, url: str) -> None:
        with self.state.lock:
            self.state.api_url, self.state.web_url = f"{url}{PREFIX}", url

    def dispatch(self, method: str, path: str, query: dict[str, str], raw: bytes,
                 headers: Mapping[str, str]) -> Response:
        out = {"Content-Type": "application/json; charset=utf-8",
               "Vary": "Authorization, Origin, cookie, user-context, Accept-Encoding",
               "Cache-Control": "private", "X-Request-Id": uuid.uuid4().hex}
        credential: Credential | None = None
        try:
            if path != PREFIX and not path.startswith(PREFIX + "/"):
                raise BitbucketError(404, "Resource not found")
            credential = self.state.credential_for(headers.get("authorization"))
            out.update(self._credential_headers(credential))
            self.state.check_rate_limit(credential)
            route, match = self._route(method, path[len(PREFIX):])
            out["X-Accepted-OAuth-Scopes"] = route.scope
            if route.scope == "account" and credential.kind.endswith("_access_token"):
                # An access token has no account (as observed of GET /user).
                raise BitbucketError(401, "Token is invalid or not supported for this "
                                     "endpoint.")
            if not credential.allows(route.scope):
                granted = sorted(credential.scopes)
                raise BitbucketError(403, "Your credentials lack one or more required "
                                     "privilege scopes.", detail={
                                         "granted": granted,
                                         "required": [route.scope if credential.login is None
                                                      else SCOPED[route.scope]]})
            request = Request(credential, match, self._json(raw, method), query)
            with self.state.lock:
                result = route.action(self.state, request)
            status, body = self._answer(route, result, path, query, out)
        except BitbucketError as err:
            out.update(err.headers)
            status, body = err.status, json.dumps(err.body).encode()
        except Exception as err:  # noqa: BLE001 - a bug in the fake answers 500
            status = 500
            body = json.dumps({"type": "error", "error": {
                "message": f"Something went wrong: {type(err).__name__}: {err}"}}).encode()
        if credential is not None and status != 401:
            out.update(self.state.quota_headers(credential))
            if status != 429:
                self.state.charge(credential)
        return self._etag(method, status, body, out, headers)

    def _credential_headers(self, credential: Credential) -> dict[str, str]:
        """Bitbucket tells every caller what it authenticated as, and with which scopes."""
        return {"X-Credential-Type": credential.kind,
                "X-OAuth-Scopes": ", ".join(credential.scopes)}

    def _route(self, method: str, rest: str) -> tuple[Route, Any]:
        """The route for `rest`, with or without a trailing slash (both are accepted)."""
        for candidate in dict.fromkeys((rest, rest.rstrip("/") or "/")):
            for route in self.routes:
                match = route.pattern.fullmatch(candidate)
                if match and route.method == method:
                    return route, match
        raise BitbucketError(404, "Resource not found")

    @staticmethod
    def _json(raw: bytes, method: str) -> dict[str, Any]:
        if method not in ("POST", "PUT") or not raw:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            raise BitbucketError(400, "Invalid JSON in the request body") from None
        if not isinstance(data, dict):
            raise BitbucketError(400, "Expected a JSON object")
        return data

    def _answer(self, route: Route, result: Any, path: str, query: dict[str, str],
                out: dict[str, str]) -> tuple[int, bytes]:
        if isinstance(result, Redirect):
            out["Location"] = result.location
            return 302, b""
        if isinstance(result, Empty):
            return 204, b""
        if isinstance(result, Raw):
            out["Content-Type"] = result.content_type
            return route.status, result.text.encode()
        if isinstance(result, list):
            return route.status, json.dumps(self._page(route, result, path, query)).encode()
        return route.status, json.dumps(result).encode()

    def _page(self, route: Route, items: list[Any], path: str, query: dict[str, str]
              ) -> dict[str, Any]:
        """One page of a list after `q` and `sort`; `next` is the full URL of the next."""
        if query.get("q"):
            keep = parse(query["q"])
            items = [item for item in items if keep(item)]
        if query.get("sort"):
            items = ordered(items, query["sort"])
        try:
            page = int(query.get("page") or 1)
            pagelen = int(query.get("pagelen") or DEFAULT_PAGELEN)
        except ValueError:
            raise BitbucketError(400, "Invalid page or pagelen") from None
        if page < 1 or pagelen < 1:
            raise BitbucketError(400, "Invalid page or pagelen")
        pagelen = min(pagelen, route.max_pagelen or pagelen)
        start = (page - 1) * pagelen
        body: dict[str, Any] = {"pagelen": pagelen, "size": len(items), "page": page,
                                "values": items[start:start + pagelen]}

        def link(number: int) -> str:
            return f"{self.url}{path}?{urlencode({**query, 'pagelen': pagelen, 'page': number})}"

        if start + pagelen < len(items):
            body["next"] = link(page + 1)
        if page > 1:
            body["previous"] = link(page - 1)
        return body

    @staticmethod
    def _etag(method: str, status: int, body: bytes, out: dict[str, str],
              headers: Mapping[str, str]) -> Response:
        if method == "GET" and status == 200:
            etag = f'W/"{hashlib.sha256(body).hexdigest()[:32]}"'
            out["ETag"] = etag
            if headers.get("if-none-match") == etag:
                return 304, b"", out
        return status, body, out
