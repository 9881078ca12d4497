"""Command line: argument parsing only; the work happens in app, check and store.

Exit codes: 0 ok, 2 bad usage or configuration, 1 runtime failure, 130 Ctrl-C, 141 stdout
closed early (`| head`). Expected failures are one line on stderr, never a traceback; log
lines are on stderr only, from the first one on.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn, TextIO, cast

import structlog

from livereview import __version__
from livereview import log_setup as logs
from livereview.app.daemon import App
from livereview.cli import config_init as cli_init
from livereview.cli import conversation, exits, lesson_commands
from livereview.cli import db as cli_db
from livereview.cli import local as cli_local
from livereview.cli import mr as cli_mr
from livereview.cli import review as cli_review
from livereview.cli import sandbox as cli_sandbox
from livereview.cli.arg_types import seconds
from livereview.cli.check import check, render
from livereview.cli.poll_profile import profile_report
from livereview.mcp import server as mcp_server
from livereview.metrics import ListenError, Metrics
from livereview.settings import ConfigError, Settings, load, load_ai
from livereview.store.engine import StoreError, StoreMissing
from livereview.store.leases import INSTANCE
from livereview.tools import status
from livereview.web import command as web_command

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
EXIT_SIGINT = 130  # 128 + SIGINT, what a shell reports for Ctrl-C
# The database and its -wal/-shm files hold every comment read: nothing the daemon creates
# is for other users (the systemd unit sets UMask=0077 as well).
PRIVATE_UMASK = 0o077


def default_config_path() -> Path:
    if os.environ.get("LIVEREVIEW_CONFIG"):
        return Path(os.environ["LIVEREVIEW_CONFIG"])
    for candidate in (
        Path("livereview.toml"),
        Path(os.environ.get("CONFIGURATION_DIRECTORY", "/etc/livereview")) / "livereview.toml",
    ):
        if candidate.exists():
            return candidate
    return Path("livereview.toml")


class _Parser(argparse.ArgumentParser):
    """Bad usage is one line too, not the usage block then the error."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="livereview",
        description="An AI reviewer that answers in merge-request threads, by polling.")
    p.add_argument("--version", action="version", version=f"livereview {__version__}")
    p.add_argument("--config", type=Path, default=None,
                   help="config file (default: $LIVEREVIEW_CONFIG, ./livereview.toml, "
                        "/etc/livereview/livereview.toml)")
    p.add_argument("--log-level", default="INFO",
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    # Typed as plain parsers for lesson_commands; each one is a _Parser all the same.
    sub = cast("argparse._SubParsersAction[argparse.ArgumentParser]",
               p.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    sub.add_parser("run", help="run the daemon (polls, acks, answers) until SIGTERM")
    once = sub.add_parser("once", help="one full poll cycle, answer what is due, exit")
    once.add_argument("--profile", action="store_true",
                      help="print where the cycle's time went (requests, phases, functions)")
    sub.add_parser("check", help="validate the config, reach every host and repo")
    cli_init.add_parser(sub)
    demo = sub.add_parser("demo", help="the whole loop in a sandbox: no account, no API key")
    demo.add_argument("--llm", action="store_true",
                      help="answer with the model of the config's [ai] section")
    demo.add_argument("--keep", action="store_true",
                      help="keep the sandbox's database (removed on exit otherwise)")
    cli_sandbox.add_parser(sub)  # `sandbox`: every host faked, a config for them (docs/sandbox.md)
    pending = sub.add_parser("pending", help="comments still awaiting an answer, reviews "
                             "under way, what failed and why")
    pending.add_argument("--repo", help="only this repo path")
    pending.add_argument("--json", action="store_true", help="machine-readable output")
    pending.add_argument("--include-replied", action="store_true",
                         help="also list comments already answered (and skipped ones)")
    conv = sub.add_parser("conversation", help="the stored graph of one MR: threads, "
                                               "messages, reactions, events, jobs")
    conv.add_argument("url", help="the MR's web URL, e.g. https://gitlab.example/g/p/-/merge_requests/7")
    conv.add_argument("--json", action="store_true", help="machine-readable output")
    lesson_commands.add_parser(sub)
    cli_db.add_parser(sub)
    cli_mr.add_parser(sub)  # the faces of livereview.tools: `mr …` and `mcp`
    mcp_server.add_parser(sub)
    cli_local.add_parser(sub)  # `review VERB|MR …`: local verbs, else a hosted review
    web_command.add_parser(sub)  # `web`: local reviews in the browser (DESIGN §11)
    health = sub.add_parser("health", help="exit 0 if every host was polled recently "
                                           "(container HEALTHCHECK)")
    health.add_argument("--max-age", type=seconds, default=None, metavar="SECONDS",
                        help="oldest acceptable successful poll (default: 5 cold cycles, "
                             "at least 300 s)")
    return p


def _conversation(settings: Settings, args: argparse.Namespace) -> int:
    try:
        key = conversation.parse_url(settings, args.url)
        graph = status.conversation(settings, key)
    except status.UnknownMR as exc:
        print(f"livereview: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(conversation.as_dict(graph), indent=2) if args.json
          else conversation.render(graph))
    return EXIT_OK


def _health(settings: Settings, args: argparse.Namespace) -> int:
    last = status.last_success(settings)
    max_age = args.max_age or max(300.0, 5 * settings.daemon.poll_interval_seconds)
    now = datetime.now(UTC)
    healthy = True
    for host in settings.hosts:
        scope, repos, at, new = last.get(host.name, (INSTANCE, (), None, True))
        more = f" and {len(repos) - 3} more" if len(repos) > 3 else ""
        named = "" if scope == INSTANCE else (
            f"stalest shard {scope} ({', '.join(repos[:3])}{more}): ")
        if at is None:
            print(f"{host.name}: {named}no successful poll yet")
            healthy = False
            continue
        age = (now - at).total_seconds()
        fresh = age <= max_age
        healthy = healthy and fresh
        print(f"{host.name}: {named}last successful poll {age:.0f}s ago"
              + (" (the shard is new since the repo set changed)" if named and new else "")
              + ("" if fresh else f" (older than {max_age:.0f}s)"))
    return EXIT_OK if healthy else EXIT_RUNTIME


# Commands that only read the store: they check where each token comes from, read none.
STORE_ONLY = ("health", "pending", "conversation", "lessons", "db")
# States with a next attempt: a reply job's, a review run's.
OPEN_STATES = ("pending", "acked", "answered", "reviewing", "posting", "notifying")


def _settings(args: argparse.Namespace) -> Settings:
    return load(args.config or default_config_path(), secrets=args.command not in STORE_ONLY)


async def _check(settings: Settings) -> int:
    rows = await check(settings)
    print(render(rows))
    return EXIT_OK if all(r.ok for r in rows) else EXIT_RUNTIME


def _pending(settings: Settings, args: argparse.Namespace) -> int:
    watched = sorted({r.path for r in settings.repos})
    if args.repo is not None and args.repo.strip("/") not in watched:
        print(f"livereview: pending --repo {args.repo}: not a watched repo (the config "
              f"watches {', '.join(watched)})", file=sys.stderr)
        return EXIT_USAGE
    try:
        rows, runs = status.pending(settings, include_replied=args.include_replied,
                                    repo=None if args.repo is None else args.repo.strip("/"))
    except StoreMissing as exc:
        print(f"nothing pending: {exc}")
        return EXIT_OK
    items = [{
        "key": r.key, "state": r.state, "reason": r.reason, "attempts": r.attempts,
        "last_error": r.last_error, "comment_created_at": r.comment_created_at.isoformat(),
        "next_attempt_at": r.next_attempt_at.isoformat(),
    } for r in rows] + [{  # review runs: open, or given up, and why
        "key": r.key, "state": r.state, "reason": f"review ({r.trigger})",
        "attempts": r.attempts, "last_error": r.last_error,
        "comment_created_at": r.created_at.isoformat(),
        "next_attempt_at": r.next_attempt_at.isoformat()} for r in runs]
    if args.json:
        print(json.dumps(items, indent=2))
        return EXIT_OK
    if not items:
        print("nothing pending")
    for item in items:
        error = f"  ({item['last_error']})" if item["last_error"] else ""
        retry = (f"  next attempt {item['next_attempt_at']}"
                 if item["state"] in OPEN_STATES else "")
        print(f"{item['state']:<9} {item['key']}  attempts={item['attempts']}{retry}{error}")
    return EXIT_OK


class Progress:
    """A one-line progress counter on a terminal (first sight of many MRs takes a while);
    silent when stderr is not a terminal or logs are JSON."""

    def __init__(self, stream: TextIO, minimum: int = 10) -> None:
        self.stream, self.minimum = stream, minimum

    def __call__(self, host: str, done: int, total: int) -> None:
        if total < self.minimum:
            return
        end = "\n" if done >= total else ""
        self.stream.write(f"\r{host}: fetched {done}/{total} merge requests{end}")
        self.stream.flush()


async def _daemon(settings: Settings, args: argparse.Namespace) -> int:
    """`run` and `once`. Raises StoreError or ListenError for `main` to say in one line."""
    metrics = Metrics(replica=settings.daemon.replica)
    if args.command == "run" and settings.daemon.metrics_listen:
        metrics.serve(settings.daemon.metrics_listen)  # a taken port: fail before creating
    app = App.create(settings, metrics=metrics)
    if sys.stderr.isatty() and settings.daemon.log_format != "json":
        app.on_progress = Progress(sys.stderr)
    try:
        if args.command == "run":
            await app.run()
            # Ctrl-C is 130 as for any command a shell interrupts; SIGTERM is the service
            # manager's ordinary stop, which systemd expects to end in 0.
            return EXIT_SIGINT if app.stopped_by == signal.SIGINT else EXIT_OK
        profiler = cProfile.Profile() if args.profile else None
        started = time.perf_counter()
        if profiler:
            profiler.enable()
        reports = await app.once()
        if profiler:
            profiler.disable()
            print(profile_report(reports, time.perf_counter() - started, profiler))
        failed = sorted(name for name, report in reports.items() if not report.ok)
        if failed or not reports:
            print("livereview: once: " + (f"polling failed on {', '.join(failed)}" if failed
                                          else "no host could be polled")
                  + " (the log lines above say why)", file=sys.stderr)
            return EXIT_RUNTIME
        return EXIT_OK
    finally:
        await app.close()


def _demo(args: argparse.Namespace) -> int:
    # The sandbox fakes load only when a sandbox runs: not for `--help` or any other command.
    from livereview.cli.demo import DemoError, DemoInterrupted, run_demo

    ai = None
    if args.llm:
        try:
            # The demo's host is the sandbox: only the [ai] section (and its key) is read.
            ai = load_ai(args.config or default_config_path())
        except ConfigError as exc:
            print(f"livereview: config error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    logs.configure("console", [ai.api_key.reveal()] if ai else [],
                   level="WARNING" if args.log_level == "INFO" else args.log_level)
    try:
        return asyncio.run(run_demo(sys.stdout, ai, keep=args.keep))
    except DemoError as exc:
        print(f"livereview: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
    except DemoInterrupted as exc:  # Ctrl-C or SIGTERM: stopped within a second or two
        print(f"livereview: demo stopped ({exc.signal_name})", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:  # Ctrl-C before the demo's own handler was installed
        return EXIT_SIGINT


def main(argv: list[str] | None = None) -> int:
    # Until a command configures its own: whatever logs early (a store opened by `db
    # migrate`, a local review's workspace) goes to stderr, never into stdout's output.
    logs.configure("auto", level="WARNING")
    try:
        code = _main(argv)
        sys.stdout.flush()  # a reader gone early is found here, not at the interpreter's exit
        return code
    except BrokenPipeError:
        return exits.stdout_closed()
    except KeyboardInterrupt:  # Ctrl-C while starting (imports, parsing)
        return EXIT_SIGINT


def _main(argv: list[str] | None) -> int:
    if (undecodable := exits.not_utf8(sys.argv[1:] if argv is None else argv)) is not None:
        print(f"livereview: argument {undecodable!r} is not UTF-8 text (every name and id "
              "livereview passes on, to a host, a database or a terminal, is)",
              file=sys.stderr)
        return EXIT_USAGE
    args = parser().parse_args(argv)
    if args.command == "init":  # a config is for the service's user to read, unlike state
        return cli_init.run(args)
    previous = os.umask(PRIVATE_UMASK)
    try:
        return _command(args)
    finally:
        os.umask(previous)  # main() also runs inside tests


def _hosted_review(args: argparse.Namespace) -> argparse.Namespace:
    """`review` takes a local verb or an MR reference: argparse cannot hold both under one
    name, so the MR form is parsed here with cli/review.py's own parser."""
    hosted = _Parser(prog="livereview")
    cli_review.add_parser(cast("argparse._SubParsersAction[argparse.ArgumentParser]",
                               hosted.add_subparsers(dest="command", required=True)))
    parsed = hosted.parse_args(["review", args.what, *args.rest])
    parsed.config, parsed.log_level = args.config, args.log_level
    return parsed


def _command(args: argparse.Namespace) -> int:
    if args.command == "demo":
        return _demo(args)
    if args.command == "sandbox":  # writes its own config
        return cli_sandbox.run(args)
    if args.command == "web":  # local reviews need no config file; its own errors, exit codes
        return web_command.run(args)
    if args.command == "db":  # `db copy` needs no config; `db migrate` may read it
        return cli_db.run(args, lambda: _settings(args))
    if args.command == "review":
        if args.what in cli_local.VERBS:  # local reviews need no config file (docs/DESIGN.md §14)
            return cli_local.run(args, args.config)
        args = _hosted_review(args)  # `review <MR URL | HOST:REPO!IID>` (docs/DESIGN.md §11)
    try:
        settings = _settings(args)
    except ConfigError as exc:
        print(f"livereview: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    secrets = [h.token.reveal() for h in settings.hosts] + [settings.ai.api_key.reveal()]
    logs.configure(settings.daemon.log_format, secrets, level=args.log_level)
    try:
        if args.command == "check":
            return asyncio.run(_check(settings))
        if args.command == "pending":
            return _pending(settings, args)
        if args.command == "conversation":
            return _conversation(settings, args)
        if args.command == "lessons":
            return lesson_commands.run(settings, args)
        if args.command == "review":
            return cli_review.run(settings, args)
        if args.command == "health":
            return _health(settings, args)
        if args.command in ("mr", "mcp"):
            return int(args.face(settings, args))
        return asyncio.run(_daemon(settings, args))
    except (StoreError, ListenError) as exc:
        print(f"livereview: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:  # Ctrl-C outside the daemon's own handler (`once`, `check`)
        return EXIT_SIGINT
    except BrokenPipeError:  # stdout closed early: main() ends quietly
        raise
    except Exception as exc:  # noqa: BLE001 - a bug: one line for the user, the trace on demand
        structlog.get_logger("livereview.cli").debug("internal_error", exc_info=True)
        print(f"livereview: internal error: {type(exc).__name__}: {exc} (a bug; "
              "--log-level DEBUG shows where, please report it)", file=sys.stderr)
        return EXIT_RUNTIME


if __name__ == "__main__":
    sys.exit(main())
