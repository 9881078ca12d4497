"""Command line: argument parsing only; the work happens in app, check and store.

Exit codes: 0 ok, 2 bad usage or configuration, 1 runtime failure, 130 Ctrl-C, 141 stdout
closed early (`| head`). Expected failures are one line on stderr, never a traceback; log
lines are on stderr only, from the first one on.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, cast

from livereview import __version__
from livereview import log_setup as logs
from livereview.cli import asyncio_only, exits
from livereview.cli.arg_types import seconds
from livereview.cli.exits import EXIT_RUNTIME, EXIT_SIGINT, EXIT_USAGE

if TYPE_CHECKING:
    from livereview.settings import Settings

# Each command imports what it uses, when it runs (docs/getting-started.md, "A CLI for
# loops"): `--version`, `health` or `mr comments` never load the model's SDK, the MCP SDK,
# the web stack or the sandbox. tests/e2e/test_cli_imports.py pins it.

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


Adder = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


def _add_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub.add_parser("run", help=COMMANDS["run"][0])


def _add_once(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    once = sub.add_parser("once", help=COMMANDS["once"][0])
    once.add_argument("--profile", action="store_true",
                      help="print where the cycle's time went (requests, phases, functions)")


def _add_check(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sub.add_parser("check", help=COMMANDS["check"][0])


def _add_demo(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = sub.add_parser("demo", help=COMMANDS["demo"][0])
    demo.add_argument("--llm", action="store_true",
                      help="answer with the model of the config's [ai] section")
    demo.add_argument("--keep", action="store_true",
                      help="keep the sandbox's database (removed on exit otherwise)")


def _add_pending(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pending = sub.add_parser("pending", help=COMMANDS["pending"][0])
    pending.add_argument("--repo", help="only this repo path")
    pending.add_argument("--json", action="store_true", help="machine-readable output")
    pending.add_argument("--include-replied", action="store_true",
                         help="also list comments already answered (and skipped ones)")


def _add_conversation(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    conv = sub.add_parser("conversation", help=COMMANDS["conversation"][0])
    conv.add_argument("url", help="the MR's web URL, e.g. https://gitlab.example/g/p/-/merge_requests/7")
    conv.add_argument("--json", action="store_true", help="machine-readable output")


def _add_health(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    health = sub.add_parser("health", help=COMMANDS["health"][0])
    health.add_argument("--max-age", type=seconds, default=None, metavar="SECONDS",
                        help="oldest acceptable successful poll (default: 5 cold cycles, "
                             "at least 300 s)")


def _imported(module: str) -> Adder:
    """A command whose arguments are defined in its own module, imported only when that
    command is the one being parsed."""
    def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        cast("Adder", importlib.import_module(module).add_parser)(sub)
    return add


# Every command: its line in `livereview --help`, and what adds its arguments.
COMMANDS: dict[str, tuple[str, Adder]] = {
    "run": ("run the daemon (polls, acks, answers) until SIGTERM", _add_run),
    "once": ("one full poll cycle, answer what is due, exit", _add_once),
    "check": ("validate the config, reach every host and repo", _add_check),
    "init": ("write a commented example config", _imported("livereview.cli.config_init")),
    "demo": ("the whole loop in a sandbox: no account, no API key", _add_demo),
    "sandbox": ("serve fake GitLab, GitHub, Bitbucket hosts and a stand-in model with sample "
                "MRs, and a config for them, until Ctrl-C", _imported("livereview.cli.sandbox")),
    "pending": ("comments still awaiting an answer, reviews under way, what failed and why",
                _add_pending),
    "conversation": ("the stored graph of one MR: threads, messages, reactions, events, jobs",
                     _add_conversation),
    "lessons": ("review what the bot learned: list, approve, …",
                _imported("livereview.cli.lesson_args")),
    "db": ("the database: migrate it, copy it to another", _imported("livereview.cli.db")),
    "mr": ("MR tools for agents and scripts: comments, reply, diff, …",
           _imported("livereview.cli.mr")),
    "mcp": ("serve the MR tools and local reviews to coding agents (MCP over stdio)",
            _imported("livereview.mcp.server")),
    "review": ("review one MR now (an MR URL or HOST:REPO!IID), or a local git range: "
               "request, list, show, reply, approve, request-changes, wait, update, resolve",
               _imported("livereview.cli.review_args")),
    "web": ("local reviews in the browser (127.0.0.1 by default)",
            _imported("livereview.web.command")),
    "health": ("exit 0 if every host was polled recently (container HEALTHCHECK)",
               _add_health),
}


def _root() -> tuple[
        argparse.ArgumentParser, argparse._SubParsersAction[argparse.ArgumentParser]]:
    p = _Parser(
        prog="livereview",
        description="An AI reviewer that answers in merge-request threads, by polling.")
    p.add_argument("--version", action="version", version=f"livereview {__version__}")
    p.add_argument("--config", type=Path, default=None,
                   help="config file (default: $LIVEREVIEW_CONFIG, ./livereview.toml, "
                        "/etc/livereview/livereview.toml)")
    p.add_argument("--log-level", default="INFO",
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    # Typed as plain parsers for the adders; each one is a _Parser all the same.
    sub = cast("argparse._SubParsersAction[argparse.ArgumentParser]",
               p.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    return p, sub


def parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (`only`) the root and that one command's arguments."""
    p, sub = _root()
    for name, (_help, add) in COMMANDS.items():
        if only is None or name == only:
            add(sub)
    return p


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Two passes, so that parsing imports only the command given: the first knows each
    command by name (and answers --help, --version and a wrong name), the second is the
    root with that command's own arguments."""
    first, sub = _root()
    for name, (text, _add) in COMMANDS.items():
        sub.add_parser(name, help=text, add_help=False)
    command = first.parse_known_args(argv)[0].command
    return parser(only=command).parse_args(argv)


# Commands that only read the store: they check where each token comes from, read none.
STORE_ONLY = ("health", "pending", "conversation", "lessons", "db")
def _settings(args: argparse.Namespace) -> Settings:
    from livereview.settings import load

    return load(args.config or default_config_path(), secrets=args.command not in STORE_ONLY)


def _demo(args: argparse.Namespace) -> int:
    from livereview.cli.demo import DemoError, DemoInterrupted, run_demo
    from livereview.settings import ConfigError, load_ai

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
    import asyncio

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
    asyncio_only.install()  # before anything imports httpx2: no trio (cli/asyncio_only.py)
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
    args = parse(argv)
    if args.command == "init":  # a config is for the service's user to read, unlike state
        from livereview.cli import config_init

        return config_init.run(args)
    previous = os.umask(PRIVATE_UMASK)
    try:
        return _command(args)
    finally:
        os.umask(previous)  # main() also runs inside tests


def _hosted_review(args: argparse.Namespace) -> argparse.Namespace:
    """`review` takes a local verb or an MR reference: argparse cannot hold both under one
    name, so the MR form is parsed here with cli/review.py's own parser."""
    from livereview.cli import review as cli_review

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
        from livereview.cli import sandbox as cli_sandbox

        return cli_sandbox.run(args)
    if args.command == "web":  # local reviews need no config file; its own errors, exit codes
        from livereview.web import command as web_command

        return web_command.run(args)
    if args.command == "db":  # `db copy` needs no config; `db migrate` may read it
        from livereview.cli import db as cli_db

        return cli_db.run(args, lambda: _settings(args))
    if args.command == "review":
        from livereview.cli import review_args

        if args.what in review_args.VERBS:  # no config file needed (docs/DESIGN.md §14)
            from livereview.cli import local as cli_local

            return cli_local.run(args, args.config)
        args = _hosted_review(args)  # `review <MR URL | HOST:REPO!IID>` (docs/DESIGN.md §11)
    if args.command == "mcp" and _mcp_without_config(args):
        from livereview.app.local_respond import responder
        from livereview.mcp import server as mcp_server

        # The model's key from the environment is masked in the log as a config's would be.
        logs.configure("auto", responder(None).secrets(),
                       level="WARNING" if args.log_level == "INFO" else args.log_level)
        return mcp_server.run_local()  # local reviews only, in the current repository
    return _configured(args)


def _mcp_without_config(args: argparse.Namespace) -> bool:
    """`livereview mcp` with no config anywhere serves the local reviews of the current
    directory's repository (docs/agent-tools.md); a config named but missing is an error."""
    return args.config is None and not os.environ.get("LIVEREVIEW_CONFIG") \
        and not default_config_path().exists()


def _configured(args: argparse.Namespace) -> int:
    from livereview.settings import ConfigError, read
    from livereview.settings.light import LightSettings
    from livereview.settings.light import parse as parse_light

    path = args.config or default_config_path()
    light: LightSettings | None = None
    try:
        data = read(path)
        env = dict(os.environ)
        if args.command == "mr":  # without pydantic when that reads the same (settings/light.py)
            light = parse_light(data, env)
        settings = None if light is not None else _parse(data, env, path, args)
    except ConfigError as exc:  # the models' own line: the light reader never says one
        print(f"livereview: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if settings is None:
        assert light is not None
        logs.configure(light.daemon.log_format, light.secrets(), level=args.log_level)
        return _guarded(lambda: int(args.face(light, args)))
    logs.configure(settings.daemon.log_format, settings.secrets(), level=args.log_level)
    return _guarded(lambda: _run(settings, args))


def _parse(data: dict[str, object], env: dict[str, str], path: Path, args: argparse.Namespace
           ) -> Settings:
    from livereview.settings import parse  # the models, and pydantic

    return parse(data, env, path, secrets=args.command not in STORE_ONLY)


def _run(settings: Settings, args: argparse.Namespace) -> int:
    from livereview.cli import status_commands

    if args.command == "check":
        import asyncio

        from livereview.cli import daemon_commands

        return asyncio.run(daemon_commands.check(settings))
    if args.command == "pending":
        return status_commands.pending(settings, args)
    if args.command == "conversation":
        return status_commands.conversation(settings, args)
    if args.command == "lessons":
        from livereview.cli import lesson_commands

        return lesson_commands.run(settings, args)
    if args.command == "review":
        from livereview.cli import review as cli_review

        return cli_review.run(settings, args)
    if args.command == "health":
        return status_commands.health(settings, args)
    if args.command in ("mr", "mcp"):
        return int(args.face(settings, args))
    from livereview.cli import daemon_commands

    return daemon_commands.run_daemon(settings, args)


def _guarded(command: Callable[[], int]) -> int:
    """A configured command's expected failures, each one line on stderr."""
    from livereview.store.faults import StoreError

    try:
        return command()
    except StoreError as exc:
        print(f"livereview: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:  # Ctrl-C outside the daemon's own handler (`once`, `check`)
        return EXIT_SIGINT
    except BrokenPipeError:  # stdout closed early: main() ends quietly
        raise
    except Exception as exc:  # noqa: BLE001 - a bug: one line for the user, the trace on demand
        import structlog

        structlog.get_logger("livereview.cli").debug("internal_error", exc_info=True)
        print(f"livereview: internal error: {type(exc).__name__}: {exc} (a bug; "
              "--log-level DEBUG shows where, please report it)", file=sys.stderr)
        return EXIT_RUNTIME


if __name__ == "__main__":
    sys.exit(main())
