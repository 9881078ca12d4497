"""The fake GitHub over HTTP: a ThreadingHTTPServer on 127.0.0.1 routing REST and GraphQL.

Answers like api.github.com does: JSON bodies, `Link` pagination (`per_page` ≤ 100, 30 by
default), weak ETags with If-None-Match → 304 (not charged to the rate limit),
`X-RateLimit-*` headers, `{"message", "documentation_url"}` errors, HTTP/1.1 keep-alive.
`url` is the github.com form (REST at the root, GraphQL at /graphql); `enterprise_url`
is the GitHub Enterprise Server form (REST under /api/v3, GraphQL at /api/graphql).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlencode

from .github_graphql import execute
from .github_model import API_VERSION, DOCS, Fault, GitHubError
from .github_routes import Created, Raw, Request, routes
from .github_state import FakeGitHub

_REPOSITORIES = re.compile(r"^/repositories/(?P<id>\d+)(?P<rest>/.*)?$")
Response = tuple[int, bytes, dict[str, str]]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "GitHub.com"
    sys_version = ""
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: no per-request lines on stderr."""

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner.track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner.track(self.connection, add=False)

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path, _, qs = self.path.partition("?")
        query = dict(parse_qsl(qs, keep_blank_values=True))
        owner.state.record_request(self.command, path, query)
        if owner.latency_seconds:
            time.sleep(owner.latency_seconds)
        fault = owner.state.take_fault(self.command, path)
        if fault is None or fault.after_handling:  # after_handling: the work is done, then lost
            headers = {k.lower(): v for k, v in self.headers.items()}
            response = owner.dispatch(self.command, path, query, raw, headers)
        if fault is None:
            self._send(*response)
        else:
            self._fault(fault)

    def _fault(self, fault: Fault) -> None:
        if fault.status == 0:  # "connection reset": no status line at all
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        headers = {"Content-Type": "application/json; charset=utf-8",
                   **self.server.owner.state.rate_limit_headers(), **fault.headers}
        self._send(fault.status, fault.body, headers)

    def _send(self, status: int, body: bytes, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        if status not in (204, 304):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status not in (204, 304):
            self.wfile.write(body)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: FakeGitHubServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):  # a client hung up mid-response
            return
        super().handle_error(request, client_address)


class FakeGitHubServer:
    """Serves a FakeGitHub at `url` (github.com form) and `enterprise_url` (GHES form)."""

    def __init__(self, state: FakeGitHub, *, latency_seconds: float = 0.0) -> None:
        self.state = state
        self.latency_seconds = latency_seconds
        self.routes = routes()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        self.url = ""

    @property
    def enterprise_url(self) -> str:
        return f"{self.url}/api/v3"

    def start(self) -> FakeGitHubServer:
        self._httpd = _HTTPServer(self)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        with self.state.lock:
            self.state.api_url = self.state.web_url = self.url
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={
            "poll_interval": 0.05}, name="fake-github", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        with self._conns_lock:
            for conn in list(self._conns):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeGitHubServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def track(self, conn: socket.socket, *, add: bool) -> None:
        with self._conns_lock:
            (self._conns.add if add else self._conns.discard)(conn)

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
                if isinstance(result, Raw):
                    out["Content-Type"] = result.content_type
                    return self._finish(method, status, result.text.encode(), out, headers,
                                        resource)
                body = (self._paginate(result, prefix + rest, query, out)
                        if isinstance(result, list) else result)
        except GitHubError as err:
            out.update(err.headers)
            status, body = err.status, err.body
        except Exception as err:  # noqa: BLE001 - a bug in the fake answers 500
            status, body = 500, {"message": f"Server Error: {type(err).__name__}: {err}"}
        data = b"" if status == 204 else json.dumps(body).encode()
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
                                                  headers.get("accept") or ""))
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
                  out: dict[str, str]) -> list[Any]:
        numbers = {}
        for name, default in (("page", 1), ("per_page", 30)):
            try:
                numbers[name] = int(query.get(name) or default)
            except ValueError:
                numbers[name] = default  # GitHub ignores a page it cannot read
        page, per_page = max(1, numbers["page"]), min(100, max(1, numbers["per_page"]))
        pages = max(1, math.ceil(len(items) / per_page))
        # Link URLs name the repository by id, as GitHub's often do.
        m = re.match(r"^(/api/v3)?/repos/([^/]+/[^/]+)(/.*)?$", path)
        if m:
            with self.state.lock:
                repo = self.state.find_repo(m[2])
                path = f"{m[1] or ''}/repositories/{repo.id}{m[3] or ''}"

        def link(n: int, rel: str) -> str:
            params = {**query, "per_page": str(per_page), "page": str(n)}
            return f'<{self.url}{path}?{urlencode(params)}>; rel="{rel}"'

        links = []
        if page > 1:
            links += [link(page - 1, "prev"), link(1, "first")]
        if page < pages:
            links += [link(page + 1, "next"), link(pages, "last")]
        if links:
            out["Link"] = ", ".join(links)
        return items[(page - 1) * per_page:page * per_page]
