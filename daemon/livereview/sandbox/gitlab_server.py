"""The fake GitLab over HTTP: a ThreadingHTTPServer on 127.0.0.1 routing REST v4 to the state.

Answers like gitlab.com does (see /work/shared/fixtures/gitlab): JSON bodies, `X-*` pagination
headers plus `Link`, `RateLimit-*` headers, `{"message": ...}` errors, HTTP/1.1 keep-alive.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import socket
import ssl
import sys
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, urlencode

from .gitlab_model import Fault, GitLabError
from .gitlab_routes import Request, routes
from .gitlab_state import FakeGitLab


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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "nginx"
    sys_version = ""
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: no per-request lines on stderr."""

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle stalls
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
            self._send(*self._conditional(*response))
        else:
            self._fault(fault)

    def _conditional(self, status: int, body: bytes, headers: Mapping[str, str]
                     ) -> tuple[int, bytes, Mapping[str, str]]:
        """GitLab sends a weak ETag on GET responses and answers If-None-Match with 304."""
        if self.command != "GET" or status != 200:
            return status, body, headers
        etag = f'W/"{hashlib.md5(body, usedforsecurity=False).hexdigest()}"'
        if self.headers.get("If-None-Match") == etag:
            return 304, b"", {"ETag": etag, **self.server.owner.state.rate_limit_headers()}
        return status, body, {**headers, "ETag": etag}

    def _fault(self, fault: Fault) -> None:
        if fault.status == 0:  # "connection reset": no status line at all
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        headers = {"Content-Type": "application/json",
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

    def __init__(self, owner: FakeGitLabServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up mid-response (a killed daemon, a timeout) is normal here.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeGitLabServer:
    """Serves a FakeGitLab at `url` (the API lives under `url + "/api/v4"`)."""

    def __init__(self, state: FakeGitLab, *, latency_seconds: float = 0.0,
                 tls: ssl.SSLContext | None = None) -> None:
        self.state = state
        self.latency_seconds = latency_seconds
        self.tls = tls  # serve HTTPS with this server-side context
        self.routes = routes()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        self.url = ""

    def start(self) -> FakeGitLabServer:
        self._httpd = _HTTPServer(self)
        scheme = "http"
        if self.tls is not None:
            self._httpd.socket = self.tls.wrap_socket(self._httpd.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self._httpd.server_address[1]}"
        self.state.base_url = self.url
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={
            "poll_interval": 0.05}, name="fake-gitlab", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        with self._conns_lock:  # end keep-alive connections so their threads exit
            for conn in list(self._conns):
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeGitLabServer:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def track(self, conn: socket.socket, *, add: bool) -> None:
        with self._conns_lock:
            (self._conns.add if add else self._conns.discard)(conn)

    def dispatch(self, method: str, path: str, query: dict[str, str], raw: bytes,
                 headers: Mapping[str, str]) -> tuple[int, bytes, dict[str, str]]:
        out = {"Content-Type": "application/json", "Cache-Control":
               "max-age=0, private, must-revalidate", "Vary": "Origin",
               "X-Content-Type-Options": "nosniff", "X-Frame-Options": "SAMEORIGIN",
               **self.state.rate_limit_headers()}
        try:
            auth = headers.get("authorization") or ""
            token = (headers.get("private-token") or query.get("private_token")
                     or (auth[7:] if auth.lower().startswith("bearer ") else None))
            user = self.state.user_for_token(token).username
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
