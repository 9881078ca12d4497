"""The fake GitHub over HTTP: a ThreadingHTTPServer on 127.0.0.1 routing REST and GraphQL.

Answers like api.github.com does: JSON bodies, `Link` pagination (`per_page` ≤ 100, 30 by
default), weak ETags with If-None-Match → 304 (not charged to the rate limit),
`X-RateLimit-*` headers, `{"message", "documentation_url"}` errors, HTTP/1.1 keep-alive.
`url` is the github.com form (REST at the root, GraphQL at /graphql); `enterprise_url`
is the GitHub Enterprise Server form (REST under /api/v3, GraphQL at /api/graphql).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from livereview.sandbox.github.graphql import execute
from livereview.sandbox.github.model import API_VERSION, DOCS, GitHubError
from livereview.sandbox.github.notifications import Listing, NotModified
from livereview.sandbox.github.routes import Created, Raw, Request, routes
from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.loopback import LoopbackHandler, LoopbackServer, Response

_REPOSITORIES = re.compile(r"^/repositories/(?P<id>\d+)(?P<rest>/.*)?$")


class _Handler(LoopbackHandler):
    server_version = "GitHub.com"
    fault_content_type = "application/json; charset=utf-8"

    def do_PATCH(self) -> None:
        self._serve()


class FakeGitHubServer(LoopbackServer[FakeGitHub]):
    """Serves a FakeGitHub at `url` (github.com form) and `enterprise_url` (GHES form)."""

    handler = _Handler
    thread_name = "fake-github"

    def __init__(self, state: FakeGitHub, *, latency_seconds: float = 0.0) -> None:
        super().__init__(state, latency_seconds=latency_seconds)
        self.routes = routes()

    @property
    def enterprise_url(self) -> str:
        return f"{self.url}/api/v3"

    def _publish(self, url: str) -> None:
        with self.state.lock:
            self.state.api_url = self.state.web_url = url

    # ---- dispatch -------------------------------------------------------------------------
    def dispatch(self, method: str, path: str, query: dict[str, str], raw: bytes,
                 headers: Mapping[str, str]) -> Response:
        prefix = "/api/v3" if path.startswith("/api/v3/") else ""
        rest = path[len(prefix):]
        graphql = path in ("/graphql", "/api/graphql")
        resource = "graphql" if graphql else "core"
        out = {"Content-Type": "application/json; charset=utf-8",
               "Cache-Control": "private, max-age=60, s-maxage=60",
               "Vary": "Accept, Authorization, Cookie, X-GitHub-OTP",
               "X-GitHub-Media-Type": "github.v3; format=json",
               "X-GitHub-Api-Version-Selected": API_VERSION,
               "X-GitHub-Request-Id": uuid.uuid4().hex[:20].upper(),
               "X-Content-Type-Options": "nosniff"}
        body: Any
        try:
            user = self._authenticate(headers, resource)
            if graphql and method == "POST":
                status, body = 200, execute(self.state, user, self._json(raw))
            else:
                status, result = self._rest(method, self._canonical(rest), query, raw,
                                            headers, user.login, out)
                if isinstance(result, NotModified):
                    out.update(result.headers)
                    return self._finish(method, 304, b"", out, headers, resource)
                if isinstance(result, Listing):
                    out.update(result.headers)
                    result = self._paginate(result.items, prefix + rest, query, out,
                                            per_page=(50, 50))
                elif isinstance(result, Raw):
                    out["Content-Type"] = result.content_type
                    return self._finish(method, status, result.text.encode(), out, headers,
                                        resource)
                body = (self._paginate(result, prefix + rest, query, out)
                        if isinstance(result, list) else result)
                if status == 205:  # Reset Content: no body
                    body = None
        except GitHubError as err:
            out.update(err.headers)
            status, body = err.status, err.body
        except Exception as err:  # noqa: BLE001 - a bug in the fake answers 500
            status, body = 500, {"message": f"Server Error: {type(err).__name__}: {err}"}
        data = b"" if status in (204, 205) else json.dumps(body).encode()
        return self._finish(method, status, data, out, headers, resource)

    def _authenticate(self, headers: Mapping[str, str], resource: str) -> Any:
        if not headers.get("user-agent"):
            raise GitHubError(403, "Request forbidden by administrative rules. Please make sure"
                              " your request has a User-Agent header", DOCS)
        version = headers.get("x-github-api-version")
        if version and version != API_VERSION:
            raise GitHubError(400, f"API version {version} is not supported.", DOCS)
        user = self.state.user_for_token(headers.get("authorization"))
        self.state.check_rate_limit(resource)
        return user

    def _canonical(self, rest: str) -> str:
        """`/repositories/{id}/…` (the form of GitHub's Link URLs) → `/repos/{owner}/{name}/…`."""
        m = _REPOSITORIES.match(rest)
        if m is None:
            return rest
        with self.state.lock:
            repo = self.state.repos.get(int(m["id"]))
            if repo is None:
                raise GitHubError(404, "Not Found", DOCS)
            return f"/repos/{repo.full_name}{m['rest'] or ''}"

    def _rest(self, method: str, path: str, query: dict[str, str], raw: bytes,
              headers: Mapping[str, str], login: str, out: dict[str, str]) -> tuple[int, Any]:
        for route in self.routes:
            match = route.pattern.fullmatch(path)
            if match and route.method == method:
                break
        else:
            raise GitHubError(404, "Not Found", DOCS)
        body = self._json(raw) if method in ("POST", "PATCH", "PUT") else {}
        result = route.action(self.state, Request(login, match, body, query,
                                                  headers.get("accept") or "", headers))
        if isinstance(result, Created):
            return (201 if result.created else 200), result.body
        return route.status, result

    @staticmethod
    def _json(raw: bytes) -> dict[str, Any]:
        if not raw:
            return {}
        try:
            data = json.loads(raw)
        except ValueError:
            raise GitHubError(400, "Problems parsing JSON", DOCS) from None
        if not isinstance(data, dict):
            raise GitHubError(400, "Problems parsing JSON", DOCS)
        return data

    def _finish(self, method: str, status: int, data: bytes, out: dict[str, str],
                headers: Mapping[str, str], resource: str) -> Response:
        """ETag and If-None-Match on GETs; the rate limit is charged unless it is a 304."""
        if status == 304:  # If-Modified-Since (notifications): not charged either
            return 304, b"", {**out, **self.state.rate_limit_headers(resource)}
        if method == "GET" and status == 200:
            etag = f'W/"{hashlib.sha256(data).hexdigest()}"'
            out["ETag"] = etag
            if headers.get("if-none-match") == etag:
                return 304, b"", {**out, **self.state.rate_limit_headers(resource)}
        refused = status == 401 or "X-RateLimit-Remaining" in out  # the budget was not used
        if not refused:
            self.state.charge(resource)
        return status, data, {**out, **self.state.rate_limit_headers(resource)}

    def _paginate(self, items: list[Any], path: str, query: dict[str, str],
                  out: dict[str, str], per_page: tuple[int, int] = (30, 100)) -> list[Any]:
        """One page of `items`; `per_page` is (default, maximum): notifications' are 50, 50."""
        numbers = {}
        for name, default in (("page", 1), ("per_page", per_page[0])):
            try:
                numbers[name] = int(query.get(name) or default)
            except ValueError:
                numbers[name] = default  # GitHub ignores a page it cannot read
        page, size = max(1, numbers["page"]), min(per_page[1], max(1, numbers["per_page"]))
        pages = max(1, math.ceil(len(items) / size))
        # Link URLs name the repository by id, as GitHub's often do.
        m = re.match(r"^(/api/v3)?/repos/([^/]+/[^/]+)(/.*)?$", path)
        if m:
            with self.state.lock:
                repo = self.state.find_repo(m[2])
                path = f"{m[1] or ''}/repositories/{repo.id}{m[3] or ''}"

        def link(n: int, rel: str) -> str:
            params = {**query, "per_page": str(size), "page": str(n)}
            return f'<{self.url}{path}?{urlencode(params)}>; rel="{rel}"'

        links = []
        if page > 1:
            links += [link(page - 1, "prev"), link(1, "first")]
        if page < pages:
            links += [link(page + 1, "next"), link(pages, "last")]
        if links:
            out["Link"] = ", ".join(links)
        return items[(page - 1) * size:page * size]
