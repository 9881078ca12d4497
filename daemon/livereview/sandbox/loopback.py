"""The plumbing both fake code hosts share: a loopback HTTP/1.1 server, faults, a request log.

`LoopbackServer` runs a ThreadingHTTPServer on 127.0.0.1 in a daemon thread and tracks its
keep-alive connections so `stop()` can end them. `LoopbackHandler` reads each request, logs it
in the state, sleeps the configured latency, applies a queued `Fault` (status 0 drops the
connection) and otherwise sends what the host's `dispatch` answers. `LoopbackTraffic` is the
state side: the fault queue and the request log. What differs between hosts (auth, headers,
routes, payloads, pagination, ETags) stays in the host's own modules.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Concatenate, Generic, ParamSpec, Protocol, Self, TypeVar
from urllib.parse import parse_qsl

Response = tuple[int, bytes, dict[str, str]]


class _Locked(Protocol):
    lock: threading.RLock


_S = TypeVar("_S", bound=_Locked)
_P = ParamSpec("_P")
_R = TypeVar("_R")


class Query(dict[str, str]):
    """A request's query: the last value of each parameter, and `every(name)` for a
    parameter that repeats (Bitbucket's `path=a&path=b`)."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        super().__init__(pairs)
        self.pairs = pairs

    def every(self, name: str) -> list[str]:
        return [value for key, value in self.pairs if key == name]


def locked(fn: Callable[Concatenate[_S, _P], _R]) -> Callable[Concatenate[_S, _P], _R]:
    """Run the method holding `self.lock` (every public method of a fake does)."""

    def wrapper(self: _S, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with self.lock:
            return fn(self, *args, **kwargs)

    functools.update_wrapper(wrapper, fn)  # keep name, docstring and signature for help()
    return wrapper


_Action = TypeVar("_Action")


@dataclass
class Route(Generic[_Action]):
    """One route of a host's table: a method and a path pattern mapped to an action."""

    method: str
    pattern: re.Pattern[str]
    action: _Action
    status: int = 200
    paged: bool = False


@dataclass(eq=False)
class Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    body: bytes
    headers: dict[str, str]
    times: int
    after_handling: bool
    rewrite: Callable[[bytes], bytes] | None = None  # answer normally, with this body
    held: Hold | None = None  # keep the request waiting until the test releases it


@dataclass(eq=False)
class Hold:
    """A request the fake keeps waiting before it handles it: a host slow at the worst
    moment (a POST in flight while another client races it). `arrived` is set when the
    request comes; `release()` lets it go on (to any fault queued meanwhile, or to the
    normal answer), and `answered` is set once it is done."""

    arrived: threading.Event
    released: threading.Event
    answered: threading.Event  # handled (or dropped by a fault queued meanwhile) and sent
    timeout: float

    def release(self) -> None:
        self.released.set()

    def wait(self) -> None:
        self.arrived.set()
        self.released.wait(self.timeout)  # a test that forgets to release does not hang


class LoopbackTraffic:
    """The fault queue and the request log; a base class of each fake's state."""

    lock: threading.RLock
    requests: list[tuple[str, str, dict[str, str]]]
    _faults: list[Fault]

    @locked
    def inject_fault(self, method: str, path_regex: str, *, status: int, body: str | bytes = "",
                     headers: dict[str, str] | None = None, times: int = 1,
                     after_handling: bool = False) -> None:
        """Answer the next `times` matching requests (method or "*", regex searched in the raw
        path) with `status`/`body`; status 0 drops the connection without a response;
        `after_handling` does the work first, then answers with the fault."""
        data = body.encode() if isinstance(body, str) else body
        self._faults.append(Fault(method.upper(), re.compile(path_regex), status, data,
                                  dict(headers or {}), times, after_handling))

    @locked
    def hold(self, method: str, path_regex: str, *, timeout: float = 60.0) -> Hold:
        """Keep the next matching request waiting until `release()` (or `timeout`)."""
        held = Hold(threading.Event(), threading.Event(), threading.Event(), timeout)
        self._faults.append(Fault(method.upper(), re.compile(path_regex), 200, b"", {}, 1,
                                  after_handling=False, held=held))
        return held

    @locked
    def rewrite_json(self, method: str, path_regex: str, change: Callable[[Any], Any], *,
                     times: int = 1) -> None:
        """Answer the next `times` matching requests as usual, but with `change` applied to
        the decoded JSON body (a note without `created_at`, an id that is a string…): how a
        host that breaks its own API contract looks. Error answers pass unchanged."""
        def rewrite(body: bytes) -> bytes:
            try:
                return json.dumps(change(json.loads(body))).encode()
            except ValueError:
                return body
        self._faults.append(Fault(method.upper(), re.compile(path_regex), 200, b"", {}, times,
                                  after_handling=False, rewrite=rewrite))

    @locked
    def take_fault(self, method: str, path: str) -> Fault | None:
        for fault in self._faults:
            if fault.method in {"*", method.upper()} and fault.pattern.search(path):
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.remove(fault)
                return fault
        return None

    @locked
    def record_request(self, method: str, path: str, query: dict[str, str]) -> None:
        self.requests.append((method, path, dict(query)))

    @locked
    def reset_requests(self) -> None:
        self.requests.clear()


class HostState(Protocol):
    """What the loopback plumbing needs of a fake's state."""

    def record_request(self, method: str, path: str, query: dict[str, str]) -> None: ...

    def take_fault(self, method: str, path: str) -> Fault | None: ...

    def rate_limit_headers(self) -> dict[str, str]: ...


_State = TypeVar("_State", bound=HostState)


class LoopbackHandler(BaseHTTPRequestHandler):
    """One connection: GET/POST/PUT/DELETE go to the owner's `dispatch` (subclasses add more)."""

    protocol_version = "HTTP/1.1"
    sys_version = ""
    fault_content_type = "application/json"
    server: LoopbackHTTPServer

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
        query = Query(parse_qsl(qs, keep_blank_values=True))
        owner.state.record_request(self.command, path, query)
        if owner.latency_seconds:
            time.sleep(owner.latency_seconds)
        fault = owner.state.take_fault(self.command, path)
        if fault is None or fault.held is None:
            self._respond(fault, path, query, raw)
            return
        held = fault.held
        held.wait()  # outside the state's lock: other requests go on meanwhile
        try:
            self._respond(owner.state.take_fault(self.command, path), path, query, raw)
        finally:
            held.answered.set()

    def _respond(self, fault: Fault | None, path: str, query: Query, raw: bytes) -> None:
        owner = self.server.owner
        if fault is None or fault.after_handling or fault.rewrite:
            # after_handling: the work is done, then lost; rewrite: done, answered changed
            headers = {k.lower(): v for k, v in self.headers.items()}
            response = owner.dispatch(self.command, path, query, raw, headers)
        if fault is not None and fault.rewrite is not None:
            status, body, sent = response
            response, fault = (status, fault.rewrite(body) if status < 300 else body, sent), None
        if fault is None:
            self._send(*self._conditional(*response))
        else:
            self._fault(fault)

    def _conditional(self, status: int, body: bytes, headers: Mapping[str, str]
                     ) -> tuple[int, bytes, Mapping[str, str]]:
        """A hook for a host that answers If-None-Match here rather than in `dispatch`."""
        return status, body, headers

    def _fault(self, fault: Fault) -> None:
        if fault.status == 0:  # "connection reset": no status line at all
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        headers = {"Content-Type": self.fault_content_type,
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


class LoopbackHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: LoopbackServer[Any]) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), owner.handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up mid-response (a killed daemon, a timeout) is normal here.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class LoopbackServer(Generic[_State]):
    """Serves `state` on 127.0.0.1 at `url` once started; a context manager too."""

    handler: ClassVar[type[LoopbackHandler]] = LoopbackHandler
    thread_name: ClassVar[str] = "fake-host"

    def __init__(self, state: _State, *, latency_seconds: float = 0.0) -> None:
        self.state = state
        self.latency_seconds = latency_seconds
        self._httpd: LoopbackHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        self.url = ""

    def dispatch(self, method: str, path: str, query: dict[str, str], raw: bytes,
                 headers: Mapping[str, str]) -> Response:
        """The host's answer to one request: status, body and headers."""
        raise NotImplementedError

    def _listen(self, httpd: LoopbackHTTPServer) -> str:
        """Prepare the bound server (e.g. wrap it in TLS); return the URL scheme."""
        return "http"

    def _publish(self, url: str) -> None:
        """Tell the state the URL it is served at (before the first request)."""

    def start(self) -> Self:
        self._httpd = LoopbackHTTPServer(self)
        scheme = self._listen(self._httpd)
        self.url = f"{scheme}://127.0.0.1:{self._httpd.server_address[1]}"
        self._publish(self.url)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={
            "poll_interval": 0.05}, name=self.thread_name, daemon=True)
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

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def track(self, conn: socket.socket, *, add: bool) -> None:
        with self._conns_lock:
            (self._conns.add if add else self._conns.discard)(conn)
