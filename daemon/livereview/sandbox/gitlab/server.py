"""The fake GitLab over HTTP: a ThreadingHTTPServer on 127.0.0.1 routing REST v4 to the state.

Answers like gitlab.com does (see tests/fixtures/gitlab): JSON bodies, `X-*` pagination
headers plus `Link`, `RateLimit-*` headers, `{"message": ...}` errors, HTTP/1.1 keep-alive.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import ssl
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode

from livereview.sandbox.gitlab.model import GitLabError
from livereview.sandbox.gitlab.routes import Request, routes
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.sandbox.loopback import (
    LoopbackHandler,
    LoopbackHTTPServer,
    LoopbackServer,
    Response,
)

_BY_PATH = re.compile(r"/api/v4/projects/([^/]+)(.*)")


def _nest(flat: Mapping[str, str]) -> dict[str, Any]:
    """`position[line_range][start][type]=new` form keys -> nested dicts."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        *parents, leaf = re.findall(r"[^\[\]]+", key) or [key]
        node = out
        for part in parents:
            child = node.get(part)
            node = node.setdefault(part, {}) if isinstance(child, dict) or child is None else {}
        node[leaf] = value
    return out


class _Handler(LoopbackHandler):
    server_version = "nginx"

    def _conditional(self, status: int, body: bytes, headers: Mapping[str, str]
                     ) -> tuple[int, bytes, Mapping[str, str]]:
        """GitLab sends a weak ETag on GET responses and answers If-None-Match with 304."""
        if self.command != "GET" or status != 200:
            return status, body, headers
        etag = f'W/"{hashlib.md5(body, usedforsecurity=False).hexdigest()}"'
        if self.headers.get("If-None-Match") == etag:
            return 304, b"", {"ETag": etag, **self.server.owner.state.rate_limit_headers()}
        return status, body, {**headers, "ETag": etag}


class FakeGitLabServer(LoopbackServer[FakeGitLab]):
    """Serves a FakeGitLab at `url` (the API lives under `url + "/api/v4"`)."""

    handler = _Handler
    thread_name = "fake-gitlab"

    def __init__(self, state: FakeGitLab, *, latency_seconds: float = 0.0,
                 tls: ssl.SSLContext | None = None) -> None:
        super().__init__(state, latency_seconds=latency_seconds)
        self.tls = tls  # serve HTTPS with this server-side context
        self.routes = routes()

    def _listen(self, httpd: LoopbackHTTPServer) -> str:
        if self.tls is None:
            return "http"
        httpd.socket = self.tls.wrap_socket(httpd.socket, server_side=True)
        return "https"

    def _publish(self, url: str) -> None:
        self.state.base_url = url

    def dispatch(self, method: str, path: str, query: dict[str, str], raw: bytes,
                 headers: Mapping[str, str]) -> Response:
        out = {"Content-Type": "application/json", "Cache-Control":
               "max-age=0, private, must-revalidate", "Vary": "Origin",
               "X-Content-Type-Options": "nosniff", "X-Frame-Options": "SAMEORIGIN",
               **self.state.rate_limit_headers()}
        try:
            auth = headers.get("authorization") or ""
            token = (headers.get("private-token") or query.get("private_token")
                     or (auth[7:] if auth.lower().startswith("bearer ") else None))
            user = self.state.user_for_token(token).username
            self._readable(user, path)
            moved = self._moved(method, path, query)
            if moved is not None:
                return 301, b"", {**out, "Location": moved}
            for route in self.routes:
                match = route.pattern.fullmatch(path)
                if match and route.method == method:
                    break
            else:  # lib/api/api.rb: route :any, '*path' -> error!('404 Not Found', 404)
                raise GitLabError(404, "404 Not Found", "error")
            req = Request(user, match, {**query, **self._body(raw, headers)}, query)
            result = route.action(self.state, req)
            if isinstance(result, str):
                out["Content-Type"] = "text/plain; charset=utf-8"
                return route.status, result.encode(), out
            if route.paged:
                result = self._paginate(result, path, query, out)
            return route.status, b"" if route.status == 204 else json.dumps(result).encode(), out
        except GitLabError as err:
            return err.status, json.dumps(err.body).encode(), out
        except Exception as err:  # noqa: BLE001 - a bug in the fake answers 500, like GitLab
            body = {"message": f"500 Internal Server Error: {type(err).__name__}: {err}"}
            return 500, json.dumps(body).encode(), out

    def _readable(self, user: str, path: str) -> None:
        """lib/api/helpers.rb `find_project!`: a project the user may not read is answered
        `not_found!('Project')`, as if there were none."""
        match = _BY_PATH.fullmatch(path)
        if match is None:
            return
        with self.state.lock:
            try:
                project = self.state.find_project(unquote(match[1]))
            except GitLabError:
                return  # the route answers for a project that is not there
            if not self.state.can_read(user, project):
                raise GitLabError(404, "404 Project Not Found")

    def _moved(self, method: str, path: str, query: Mapping[str, str]) -> str | None:
        """GitLab ≥ 16.7 (merge request !137578; lib/api/helpers.rb `find_project!` and
        `project_moved?`): a request naming a project by a former full path is answered, for
        GET, by 301 to the same URL with the project's id, and refused (405) otherwise."""
        match = _BY_PATH.fullmatch(path)
        if match is None or not self.state.redirects_moved_projects:
            return None
        ref = unquote(match[1])
        with self.state.lock:
            try:
                project = self.state.find_project(ref)
            except GitLabError:
                return None
        if "/" not in ref or project.path.lower() == ref.lower():
            return None
        if method != "GET":
            raise GitLabError(405, "Non GET methods are not allowed for moved projects")
        return f"/api/v4/projects/{project.id}{match[2]}" + (
            f"?{urlencode(query)}" if query else "")

    @staticmethod
    def _body(raw: bytes, headers: Mapping[str, str]) -> dict[str, Any]:
        if not raw:
            return {}
        if "json" in (headers.get("content-type") or ""):
            try:
                data = json.loads(raw)
            except ValueError:
                raise GitLabError(400, "400 Bad request - invalid JSON") from None
            return data if isinstance(data, dict) else {}
        return _nest(dict(parse_qsl(raw.decode(), keep_blank_values=True)))

    def _paginate(self, items: list[Any], path: str, query: dict[str, str],
                  out: dict[str, str]) -> list[Any]:
        numbers = {}
        for name, default in (("page", 1), ("per_page", 20)):
            try:
                numbers[name] = int(query.get(name) or default)
            except ValueError:
                raise GitLabError(400, f"{name} is invalid", "error") from None
        page, per_page = max(1, numbers["page"]), min(100, max(1, numbers["per_page"]))
        pages = max(1, math.ceil(len(items) / per_page))

        def link(n: int) -> str:
            params = {**query, "page": str(n), "per_page": str(per_page)}
            return f"<{self.url}{path}?{urlencode(sorted(params.items()))}>"

        links = ([f'{link(page - 1)}; rel="prev"'] if 1 < page <= pages else []) + (
            [f'{link(page + 1)}; rel="next"'] if page < pages else []) + [
            f'{link(1)}; rel="first"', f'{link(pages)}; rel="last"']
        out.update({"Link": ", ".join(links), "X-Page": str(page), "X-Per-Page": str(per_page),
                    "X-Next-Page": str(page + 1) if page < pages else "",
                    "X-Prev-Page": str(page - 1) if 1 < page <= pages else "",
                    "X-Total": str(len(items)), "X-Total-Pages": str(pages)})
        return items[(page - 1) * per_page:page * per_page]
