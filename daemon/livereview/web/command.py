"""`livereview web [--listen 127.0.0.1:PORT] [--repo PATH …] [--config FILE]`: the local
reviews of some repositories, in the browser (DESIGN §11 "The web face").

This module is imported by `livereview --help`: Starlette, uvicorn, Jinja2 and Pygments are
imported only when the command runs. Exit codes as every command: 2 for bad input (one line
naming the option), 1 for a runtime failure; the one line saying where it serves, and every
log line, go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from livereview import log_setup as logs
from livereview.app.local_respond import Answering, answering_for, responder
from livereview.settings import ConfigError, DaemonSettings, Secret, Settings, load
from livereview.settings.web import MIN_TOKEN_CHARS
from livereview.tools import local_review as ops
from livereview.tools.errors import BadInput
from livereview.tools.lessons_queue import LessonQueue, NoLessonStore
from livereview.web.listen import DEFAULT_LISTEN, Listen, check_exposure, parse_listen

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
GRACE_SECONDS = 2  # open event streams never end by themselves: how long a stop waits


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    web = sub.add_parser("web", help="local reviews in the browser (127.0.0.1 by default)",
                         description="Serve the local reviews of --repo PATH (or of the "
                                     "config's `type = \"local\"` hosts) as web pages.")
    web.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                     help=f"where to serve (default {DEFAULT_LISTEN}; port 0: any free port; "
                          "a non-loopback address needs --token-file or --trusted-header)")
    web.add_argument("--repo", type=Path, action="append", default=[], metavar="PATH",
                     help="a repository whose reviews to serve (repeatable; default: the "
                          "current directory when no config names local hosts)")
    web.add_argument("--config", type=Path, dest="web_config", default=None, metavar="FILE",
                     help="a config whose `type = \"local\"` hosts' repositories to serve, and "
                          "whose [ai] answers people's replies")
    web.add_argument("--token-file", type=Path, default=None, metavar="FILE",
                     help="a file holding the token a browser signs in with (default: the "
                          "config's [web] token_file)")
    web.add_argument("--trusted-header", default="", metavar="NAME",
                     help="behind a reverse proxy that authenticates: the header naming the "
                          "user (e.g. X-Forwarded-User); requests without it are refused "
                          "(default: the config's [web] trusted_header)")


@dataclass(frozen=True)
class WebPlan:
    listen: Listen
    repos: tuple[Path, ...]
    answering: Answering
    token: Secret | None
    trusted_header: str
    daemon: DaemonSettings | None = None  # the config's: its lessons, the console


def _read_token(path: Path) -> Secret:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise BadInput(f"--token-file {path}: {exc.strerror or exc}") from None
    if len(token) < MIN_TOKEN_CHARS:
        raise BadInput(f"--token-file {path}: the token must be at least {MIN_TOKEN_CHARS} "
                       "characters")
    return Secret(token)


def _local_repos(settings: Settings) -> list[Path]:
    roots = {h.name: Path(h.url or "/") for h in settings.hosts if h.type == "local"}
    return [roots[r.host] / r.path for r in settings.repos if r.host in roots]


def plan(args: argparse.Namespace) -> WebPlan:
    """Everything checked before anything is opened or bound; an option given on the
    command line wins over the config's `[web]`."""
    listen = parse_listen(args.listen)
    token = _read_token(args.token_file) if args.token_file else None
    header = args.trusted_header.strip()
    config = args.web_config or args.config
    repos = list(args.repo)
    if config is not None:
        try:
            settings = load(config, secrets=True)
        except ConfigError as exc:
            raise BadInput(f"config error: {exc}") from None
        repos += _local_repos(settings)
        answering = answering_for(settings)
        token = token or settings.web.token or None
        header = header or settings.web.trusted_header
    else:
        answering = responder(None)
    if header and not header.replace("-", "").isalnum():
        raise BadInput(f"--trusted-header {header!r}: not a header name")
    check_exposure(listen, bool(token) or bool(header))
    if not repos and config is None:
        repos = [Path()]  # the repository here; with a config, maybe only its console
    return WebPlan(listen, tuple(repos), answering, token, header,
                   answering.settings.daemon if answering.settings else None)


def secrets_of(chosen: WebPlan) -> list[str]:
    """What the log redactor masks, and every page too: the model's key, the web token, and
    the hosts' tokens of the config (a last_error may quote one)."""
    secrets = [*chosen.answering.secrets()]
    secrets += [chosen.token.reveal()] if chosen.token else []
    return [s for s in secrets if s]


def run(args: argparse.Namespace) -> int:
    try:
        chosen = plan(args)
    except BadInput as exc:
        print(f"livereview web: {exc}", file=sys.stderr)
        return EXIT_USAGE
    secrets = secrets_of(chosen)
    logs.configure("console", secrets, level=args.log_level)
    try:
        workspaces = [ops.open_workspace(repo) for repo in chosen.repos]
    except BadInput as exc:
        print(f"livereview web: --repo: {exc}", file=sys.stderr)
        return EXIT_USAGE
    queue = None
    if chosen.daemon is not None:
        try:
            queue = LessonQueue.open(chosen.daemon)
        except NoLessonStore as exc:
            print(f"livereview web: no lessons console: {exc}", file=sys.stderr)
    try:
        return asyncio.run(_serve(chosen, workspaces, queue))
    except OSError as exc:
        print(f"livereview web: --listen {args.listen}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        return EXIT_OK


def bind(listen: Listen) -> socket.socket:
    family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((listen.host, listen.port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


async def _serve(chosen: WebPlan, workspaces: list[ops.Workspace],
                 queue: LessonQueue | None) -> int:
    import uvicorn  # the web stack only when serving

    from livereview.web.app import create_app
    from livereview.web.guard import Access
    from livereview.web.site import Site

    app = create_app(Site(workspaces, chosen.answering, queue, chosen.answering.settings,
                          tuple(secrets_of(chosen))),
                     Access(chosen.token, chosen.trusted_header.lower(), chosen.listen.loopback))
    sock = bind(chosen.listen)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"livereview web: serving http://{shown}:{port}/ ({len(workspaces)} repositories)",
          file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=GRACE_SECONDS, server_header=False)
    await uvicorn.Server(config).serve(sockets=[sock])
    return EXIT_OK
