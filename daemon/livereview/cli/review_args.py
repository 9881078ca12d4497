"""`livereview review …`'s arguments, apart from the work (cli/local.py, cli/review.py) so
that parsing them imports neither the model's SDK nor the store (docs/DESIGN.md §14).

One vocabulary with `mr …`: a body is `--body TEXT` (`--body -` reads stdin); a range is
`RANGE`, positional, for `request` and `update` alike; a thread is its number within the
review. The spellings of the release before (`review reply ID THREAD TEXT`,
`request-changes --comment TEXT`, `update --range RANGE`) still work for one release, with a
one-line notice on stderr.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn, TextIO

from livereview.cli.arg_types import row_id, seconds
from livereview.core.local_model import RANGE_HELP

EXIT_USAGE = 2
VERBS = ("request", "list", "show", "reply", "approve", "request-changes", "wait", "update",
         "resolve")
BODY_HELP = "the text (- reads it from stdin)"
THREAD_HELP = "the thread's number within the review (#N in `review show`)"


class BadBody(ValueError):
    """No body, or two: the one line to print (exit 2)."""


def add_verbs(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The local verbs, on whatever `review` parser holds them (see add_parser)."""
    def verb(name: str, text: str, *, review_id: bool = True) -> argparse.ArgumentParser:
        one = verbs.add_parser(name, help=text)
        if review_id:
            one.add_argument("id", type=row_id, help="the review's id")
        one.add_argument("--repo", type=Path, default=Path(),
                         help="the repository (default: the current directory)")
        one.add_argument("--json", action="store_true", help="machine-readable output")
        return one

    request = verb("request", "review a range: " + RANGE_HELP, review_id=False)
    request.add_argument("range", metavar="RANGE", help=RANGE_HELP)
    request.add_argument("--title", required=True)
    request.add_argument("--description", help="free-form JSON kept with the review")
    verb("list", "every review of the repository, with its status", review_id=False)
    reply = verb("reply", "answer in a thread (the AI answers back when configured)")
    reply.add_argument("thread", type=row_id, help=THREAD_HELP)
    reply.add_argument("--body", help=BODY_HELP)
    reply.add_argument("text", nargs="?", help=argparse.SUPPRESS)  # before --body
    verb("approve", "approve the review")
    changes = verb("request-changes", "request changes, with an optional general comment")
    changes.add_argument("--body", help=BODY_HELP)
    changes.add_argument("--comment", help=argparse.SUPPRESS)  # before --body
    wait = verb("wait", "block until a person's new feedback, print it as JSON")
    wait.add_argument("--timeout", type=seconds, default=600.0, metavar="SECONDS")
    update = verb("update", "re-review after new commits (threads follow their code)")
    update.add_argument("range", metavar="RANGE", nargs="?", help=RANGE_HELP)
    update.add_argument("--range", dest="old_range", help=argparse.SUPPRESS)  # before RANGE
    verb("show", "files with stats, threads with their code")
    resolve = verb("resolve", "mark a thread resolved (--reopen: open again)")
    resolve.add_argument("thread", type=row_id, help=THREAD_HELP)
    resolve.add_argument("--reopen", action="store_true")


def body(args: argparse.Namespace, stdin: TextIO, stderr: TextIO) -> str:
    """The verb's body from --body (or stdin for `-`), or from the older spelling with a
    notice; "" for `request-changes` without one. Raises BadBody."""
    old_name, old = (("TEXT", args.text) if args.verb == "reply"
                     else ("--comment", args.comment))
    if args.body is not None and old is not None:
        raise BadBody(f"review {args.verb}: give the text once, as --body")
    if old is not None:
        print(f"livereview: review {args.verb} {old_name} is deprecated: use --body "
              "(the old spelling goes in the next release)", file=stderr)
    text: str | None = args.body if args.body is not None else old
    if text is None:
        if args.verb == "reply":
            raise BadBody("review reply: --body is required (- reads it from stdin)")
        return ""
    return stdin.read() if text == "-" else text


def range_of(args: argparse.Namespace, stderr: TextIO) -> str:
    """`update`'s range, positional like `request`'s; `--range RANGE` (the spelling of the
    release before) with a notice. Raises BadBody (exit 2) for none, or two."""
    if args.range is not None and args.old_range is not None:
        raise BadBody("review update: give the range once, as RANGE")
    if args.old_range is not None:
        print("livereview: review update --range is deprecated: give RANGE after the id, "
              "as `review request` takes it (the old spelling goes in the next release)",
              file=stderr)
        return str(args.old_range)
    if args.range is None:
        raise BadBody("review update: RANGE is required (" + RANGE_HELP + ")")
    return str(args.range)


class _VerbParser(argparse.ArgumentParser):
    """Bad usage is one line, exit 2 (as commands.py's parser)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def verb_parser() -> argparse.ArgumentParser:
    parser = _VerbParser(prog="livereview review",
                         description="Local reviews of a git range (no config file needed).")
    add_verbs(parser.add_subparsers(dest="verb", required=True, metavar="VERB",
                                    parser_class=_VerbParser))
    return parser


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`review VERB …` for local reviews; any other first word is an MR reference, which
    commands.py hands to cli/review.py (docs/DESIGN.md §11): argparse cannot mix a free
    positional with subcommands, so the verbs are parsed by `verb_parser` from the rest of
    the line."""
    review = sub.add_parser(
        "review", help="review one MR now (an MR URL or HOST:REPO!IID), or a local git "
                       "range: " + ", ".join(VERBS),
        description="`livereview review <MR URL | HOST:REPO!IID> [--json]` reviews a hosted "
                    "MR now; `livereview review VERB …` works on a local git range, no config "
                    "needed (see `livereview review VERB --help`). Verbs: "
                    + ", ".join(VERBS) + ".")
    review.add_argument("what", metavar="VERB|MR",
                        help="a local verb, or the MR's web URL or HOST:REPO!IID")
    review.add_argument("rest", nargs=argparse.REMAINDER, help="the verb's arguments")
