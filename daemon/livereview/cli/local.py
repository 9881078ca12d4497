"""`livereview review request|reply|approve|request-changes|wait|update|show|resolve`: local
reviews of a git range, for people and agents (docs/DESIGN.md §14). Parsing and rendering only; the
work is tools/local_review.py.

No config file is needed: the store is `.livereview/livereview.db` in the repository, with
or without `--config` (or $LIVEREVIEW_CONFIG), whose [ai], bot, lessons and review settings
are used (never its database: a local review's state, AI runs included, is the repo's).
Exit codes: 0 ok, 2 bad input, 1 runtime failure, 124 `wait` timed out without feedback.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from livereview import log_setup as logs
from livereview.cli import progress
from livereview.cli.review_args import VERBS, BadBody, body, range_of, verb_parser
from livereview.core.local_model import (
    NOTHING_TO_REVIEW,
    Feedback,
    LocalReview,
    LocalThread,
    ReviewStatus,
    as_dict,
    has_textual_change,
    message_dict,
    thread_dict,
)
from livereview.core.sanitize import clean, one_line, shown_path
from livereview.hosts.base import HostError
from livereview.store.faults import StoreError
from livereview.tools.errors import ToolError

if TYPE_CHECKING:  # the model's SDK is imported only by the verbs that may answer
    from livereview.app.local_respond import Responder
    from livereview.hosts.local.adapter import LocalHost
    from livereview.tools import local_review as ops

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, EXIT_TIMEOUT, EXIT_SIGINT = 0, 1, 2, 124, 130
_MARKER = re.compile(r"\n*<!-- livereview:[\w:=.\-]+ -->\s*\Z")  # for the host, not a reader
READING = ("list", "show")  # no answering, so no model to set up
_SIGN = {"added": "A", "modified": "M", "deleted": "D", "renamed": "R"}


def run(root: argparse.Namespace, config: Path | None) -> int:
    """A local verb (commands.py hands an MR reference to cli/review.py instead)."""
    if root.what not in VERBS:
        print(f"livereview review: {root.what!r} is not a verb (expected one of "
              f"{', '.join(VERBS)})", file=sys.stderr)
        return EXIT_USAGE
    args = verb_parser().parse_args([root.what, *root.rest])
    args.log_level = root.log_level
    try:
        if args.verb in ("reply", "request-changes"):
            args.body = body(args, sys.stdin, sys.stderr)
        if args.verb == "update":
            args.range = range_of(args, sys.stderr)
        if args.verb == "list":  # a store that needs nothing done is read without the ORM
            from livereview.tools.local_list import listed

            found = listed(args.repo)
            if found is not None:
                return _list(found, args.json)
        import asyncio

        if args.verb == "show":  # the same, when showing it changes nothing (local_list.py)
            from livereview.tools.local_list import shown

            plain = shown(args.repo, args.id)
            if plain is not None:
                return asyncio.run(_print(plain[1], plain[0], args.json, code=True))

        return asyncio.run(_run(args, config))
    except BadBody as exc:
        print(f"livereview: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ToolError as exc:
        print(f"livereview: review {args.verb}: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # stdout closed early (`| head`): cli.main ends quietly
        raise
    except (StoreError, HostError, OSError) as exc:
        print(f"livereview: review {args.verb}: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        return EXIT_SIGINT
    except Exception as exc:  # noqa: BLE001 - a bug: one line for the user, as commands.py does
        import structlog

        structlog.get_logger("livereview.cli").debug("internal_error", exc_info=True)
        print(f"livereview: internal error: {type(exc).__name__}: {exc} (a bug; "
              "--log-level DEBUG shows where, please report it)", file=sys.stderr)
        return EXIT_RUNTIME


async def _run(args: argparse.Namespace, config: Path | None) -> int:
    # The workspace: the repository's store through the ORM, created or migrated if need be.
    from livereview.tools import local_review as ops
    from livereview.tools.local_browse import reviews

    if args.verb in READING:
        ws = ops.open_workspace(args.repo)
        try:
            if args.verb == "list":
                return _list(await reviews(ws), args.json)
            return await _print(ws.host, await ops.review_of(ws, args.id), args.json, code=True)
        finally:
            ws.close()
    from livereview.app.local_respond import responder

    description = ops.description_json(getattr(args, "description", None))
    answering = responder(config)
    # The output is the review (or JSON for an agent): the workflow's own log lines only
    # from WARNING, unless asked for (--log-level DEBUG); on stderr, never with the key.
    logs.configure("console", answering.secrets(),
                   level="WARNING" if args.log_level == "INFO" else args.log_level)
    ws = ops.open_workspace(args.repo)
    answerer = answering.bind(ws)
    try:
        return await _verb(args, ws, description, answerer)
    finally:
        await answerer.close()
        ws.close()


async def _verb(args: argparse.Namespace, ws: ops.Workspace, description: str,
                answering: Responder) -> int:
    from livereview.tools import local_review as ops

    verb = args.verb
    if verb == "request":
        with progress.bars(sys.stderr) as shown:  # a terminal's: a range of many files
            if shown:
                shown.update(f"reading {one_line(args.range)}", 0, 0)
            review = await ops.request(ws, args.range, args.title, description)
            if shown:
                shown.update(f"reading {one_line(args.range)}", len(review.files),
                             len(review.files))
            if not has_textual_change(review.files):
                print(f"livereview: review {review.id}: {NOTHING_TO_REVIEW}", file=sys.stderr)
            answering.progress = shown.counter("AI review: files read") if shown else None
            review = await answering.review(review)
        _say(answering.note)
        return await _print(ws.host, review, args.json)
    if verb == "reply":
        named, message = await ops.reply(ws, args.id, args.thread, args.body, notice=_say)
        await answering.answer(args.id)
        _say(answering.note)
        review = await ops.review_of(ws, args.id)
        thread = review.thread(named.id)
        assert thread is not None
        if args.json:
            print(json.dumps({"message": message_dict(message, thread.number),
                              "thread": thread_dict(thread)}, indent=2))
        else:
            print(render_thread(thread))
        return EXIT_OK
    if verb in ("approve", "request-changes"):
        status = (ReviewStatus.APPROVED if verb == "approve"
                  else ReviewStatus.CHANGES_REQUESTED)
        review = await ops.set_status(ws, args.id, status, getattr(args, "body", ""))
        return await _print(ws.host, review, args.json)
    if verb == "resolve":
        await ops.resolve(ws, args.id, args.thread, not args.reopen, notice=_say)
        return await _print(ws.host, await ops.review_of(ws, args.id), args.json)
    if verb == "update":
        with progress.bars(sys.stderr) as shown:
            review = await ops.update(ws, args.id, args.range)
            answering.progress = shown.counter("AI review: files read") if shown else None
            review = await answering.review(review)
        _say(answering.note)
        return await _print(ws.host, review, args.json)
    if verb == "wait":
        return await _wait(ws, args, functools.partial(answering.answer, args.id))
    raise AssertionError(f"no verb {verb}")  # READING ones are answered by _run


def _list(found: list[LocalReview], as_json: bool) -> int:
    if as_json:
        print(json.dumps([as_dict(review) for review in found], indent=2))
        return EXIT_OK
    for review in found:
        span = "working tree" if review.worktree else review.head_sha[:10]
        open_threads = sum(not t.resolved for t in review.threads)
        print(f"{review.id:>4}  {review.status.value:<17} {open_threads:>3} open  "
              f"{one_line(review.range)} ({review.base_sha[:10]}..{span})  "
              f"{one_line(review.title)}")
    if not found:
        print("no reviews")
    return EXIT_OK


async def _wait(ws: ops.Workspace, args: argparse.Namespace,
                answer: Callable[[], Awaitable[object]]) -> int:
    from livereview.tools import local_review as ops

    feedback = await ops.wait(ws, args.id, args.timeout, between=answer)
    review = await ops.review_of(ws, args.id)
    print(json.dumps(feedback_dict(review, feedback), indent=2))
    return EXIT_TIMEOUT if feedback.empty else EXIT_OK


def feedback_dict(review: LocalReview, feedback: Feedback) -> dict[str, object]:
    threads = {t.id: t for t in review.threads}
    items = []
    for message in feedback.messages:
        thread = threads[message.thread_id]
        items.append({**message_dict(message, thread.number), "kind": thread.kind.value,
                      "path": thread.path, "line": thread.line})
    return {"review": review.id, "status": review.status.value,
            "status_changed": feedback.status is not None, "timed_out": feedback.empty,
            "feedback": items}


def _say(note: str) -> None:
    if note:
        # A notice for people: stdout is what a script reads (the review, or its JSON).
        print(f"livereview: {note}", file=sys.stderr)


async def _print(host: LocalHost, review: LocalReview, as_json: bool,
                 code: bool = False) -> int:
    from livereview.tools.local_list import code_around

    if as_json:
        print(json.dumps(as_dict(review), indent=2))
        return EXIT_OK
    print(render_review(review))
    files: dict[str, list[str]] = {}
    for thread in review.threads:
        print()
        print(render_thread(thread))
        if code:
            for number, text in await code_around(host, review, thread, files=files):
                mark = ">" if number == thread.line else " "
                print(f"    {mark}{number:>5} | {clean(text)}")
    return EXIT_OK


def render_review(review: LocalReview) -> str:
    span = ("working tree" if review.worktree else review.head_sha[:10])
    lines = [f"review {review.id}: {one_line(review.title)}  [{review.status.value}]",
             f"range {one_line(review.range)} ({review.base_sha[:10]}..{span}) in "
             f"{one_line(review.repo, 400)}",
             f"files ({len(review.files)}):"]
    for f in review.files:
        name = (f"{shown_path(f.old_path)} → {shown_path(f.path)}" if f.status == "renamed"
                else shown_path(f.path))  # exact: two names differing in a space stay two
        stats = "binary" if f.binary else f"+{f.additions} -{f.deletions}"
        lines.append(f"  {_SIGN.get(f.status, '?')} {name}  {stats}")
    lines.append(f"threads ({len(review.threads)}, "
                 f"{sum(not t.resolved for t in review.threads)} open)")
    return "\n".join(lines)


def render_thread(thread: LocalThread) -> str:
    path = shown_path(thread.path)
    where = ("on the review" if not thread.path
             else f"{path}:{thread.line}" if thread.line is not None
             else f"{path} (outdated: its line is gone)")
    state = " resolved" if thread.resolved else ""
    lines = [f"#{thread.number} {thread.kind.value}{state}  {where}"]
    for m in thread.messages:
        reactions = f"  {' '.join(m.reactions)}" if m.reactions else ""
        body = clean(_MARKER.sub("", m.body)).strip().replace("\n", "\n      ")
        lines.append(f"  {one_line(m.author)} ({m.author_kind.value}): {body}"
                     f"{one_line(reactions)}")
    return "\n".join(lines)
