"""`livereview sandbox`: every feature tried against loopback fakes of each host, no account.

Only this package and cli/demo.py import livereview.sandbox (pyproject's import-linter
contract); the fakes are imported when the command runs, not for `livereview --help`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from livereview.cli.arg_types import seconds


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    box = sub.add_parser("sandbox", help="serve fake GitLab, GitHub, Bitbucket hosts and a "
                                         "stand-in model with sample MRs, and a config for "
                                         "them, until Ctrl-C")
    box.add_argument("--dir", type=Path, default=None, metavar="PATH",
                     help="write the config, MCP client JSON, tokens and database here and "
                          "keep them (default: a temporary folder, removed on exit)")
    box.add_argument("--chatter", action="store_true",
                     help="a scripted colleague asks the bot a new question on the GitLab "
                          "sample MR every --chatter-seconds")
    box.add_argument("--chatter-seconds", type=seconds, default=20.0, metavar="SECONDS",
                     help="how often the colleague asks (default 20)")


def run(args: argparse.Namespace) -> int:
    from livereview.cli.sandbox.serve import Options, SandboxError, serve

    if args.chatter and args.chatter_seconds < 1:
        print(f"livereview: sandbox: --chatter-seconds {args.chatter_seconds:g} is under "
              "1 second", file=sys.stderr)
        return 2
    options = Options(args.dir, args.chatter_seconds if args.chatter else None)
    try:
        return asyncio.run(serve(options, sys.stdout))
    except SandboxError as exc:
        print(f"livereview: sandbox: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an unwritable --dir
        print(f"livereview: sandbox: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C before the loop's own handler was installed
        return 130
