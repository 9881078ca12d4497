"""`run` serving the web face beside the daemon (`[web] listen`, DESIGN §11): one process,
one systemd unit. Checked before the daemon starts (one line, exit 2, as `livereview web
--listen`); served in the daemon's event loop once its database exists; stopped when the
daemon stops. uvicorn's own signal capture is off: the daemon's handlers decide when.

Imported by `livereview --help`: Starlette, uvicorn and Jinja2 only when serving."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import structlog

from livereview.metrics import ListenError, Metrics
from livereview.settings import Settings
from livereview.tools.errors import BadInput
from livereview.tools.lessons_queue import LessonQueue, NoLessonStore
from livereview.web.listen import Listen, parse_listen

GRACE_SECONDS = 2  # open event streams never end by themselves: how long a stop waits


@dataclass(frozen=True)
class Beside:
    listen: Listen
    settings: Settings


def planned(settings: Settings) -> Beside | None:
    """The `[web] listen` of a config, checked; None when `run` serves no page."""
    text = settings.web.listen.strip()
    if not text:
        return None
    try:
        listen = parse_listen(text)
    except BadInput:
        raise BadInput(f"web.listen {text!r}: expected HOST:PORT (e.g. 127.0.0.1:8470)"
                       ) from None
    if not listen.loopback and not (settings.web.token or settings.web.trusted_header):
        raise BadInput(f"web.listen {text!r}: not a loopback address, and no authentication "
                       "is configured (web.token_file, or web.trusted_header behind a "
                       "reverse proxy)")
    return Beside(listen, settings)


def secrets_of(settings: Settings) -> tuple[str, ...]:
    """Masked in every page, as the log redactor masks them."""
    return settings.secrets()


def _queue(settings: Settings) -> LessonQueue | None:
    try:
        return LessonQueue.open(settings.daemon)
    except NoLessonStore:
        return None  # `run` creates the database first: only a bug would get here


@contextlib.contextmanager
def _no_signal_capture() -> Iterator[None]:
    yield


@contextlib.asynccontextmanager
async def serving(beside: Beside, metrics: Metrics) -> AsyncIterator[str]:
    """Serve the console while the block runs; yields the URL it serves. A port taken is
    a ListenError, as for `daemon.metrics_listen`."""
    import uvicorn  # the web stack only when serving

    from livereview.web.app import create_app
    from livereview.web.command import bind
    from livereview.web.guard import Access
    from livereview.web.site import Site

    settings = beside.settings
    try:
        sock = bind(beside.listen)
    except OSError as exc:
        raise ListenError(f"web.listen: cannot listen on {beside.listen.host}:"
                          f"{beside.listen.port}: {exc.strerror or exc}") from None
    site = Site([], None, _queue(settings), settings, secrets_of(settings), metrics=metrics)
    access = Access(settings.web.token or None, settings.web.trusted_header.lower(),
                    beside.listen.loopback)
    server = uvicorn.Server(uvicorn.Config(
        create_app(site, access), log_level="warning", access_log=False, lifespan="on",
        timeout_graceful_shutdown=GRACE_SECONDS, server_header=False))
    server.capture_signals = _no_signal_capture  # type: ignore[method-assign]
    host, port = sock.getsockname()[:2]
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
    task = asyncio.create_task(server.serve(sockets=[sock]))
    structlog.get_logger("livereview.web").info("web_serving", url=url)
    try:
        yield url
    finally:
        server.should_exit = True
        await task
        sock.close()
