"""`livereview review <MR URL | HOST:REPO!IID>`: review one MR now, as the daemon would
(the same persisted run: a crash or Ctrl-C resumes without posting twice).

Progress (the files read) goes to stderr on a terminal (cli/progress.py); `--json` prints
the machine-readable result. Exit 0 when the review is on the MR, 1 when it could not
finish (the reason, in one line; an open run is finished by the daemon or the next
`livereview review`), 2 for a bad MR reference.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from livereview.app.daemon import App
from livereview.cli import progress
from livereview.cli.conversation import parse_url
from livereview.core.model import MRKey
from livereview.core.model_runs import ReviewRequest, ReviewState, ReviewTrigger
from livereview.core.sanitize import one_line
from livereview.hosts.base import HostError, NotFound
from livereview.review.runner import result
from livereview.settings import Settings
from livereview.store import reviews
from livereview.tools.status import UnknownMR

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    review = sub.add_parser("review", help="review one MR now: inline findings, a summary "
                                           "and a verdict")
    review.add_argument("mr", help="the MR's web URL, or HOST:REPO!IID (HOST as configured)")
    review.add_argument("--json", action="store_true", help="print the result as JSON")


def run(settings: Settings, args: argparse.Namespace) -> int:
    try:
        key = parse_url(settings, args.mr)
    except UnknownMR as exc:
        print(f"livereview: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(_review(settings, key, as_json=args.json))


async def _review(settings: Settings, key: MRKey, *, as_json: bool) -> int:
    app = App.create(settings)
    try:
        host = app.hosts[key.host]
        try:
            identity = await host.whoami()
            snapshot = await host.fetch_mr(key.repo, key.iid)
        except NotFound:
            print(f"livereview: {key}: no such merge request on {key.host}", file=sys.stderr)
            return EXIT_USAGE
        except HostError as exc:
            print(f"livereview: {key.host}: {exc}", file=sys.stderr)
            return EXIT_RUNTIME
        app.reviewer.identities[key.host] = identity
        request = ReviewRequest(key, ReviewTrigger.CLI, snapshot.mr.head_sha, explicit=True)
        await app.store.run(reviews.enqueue, [request], app.reviewer.clock())
        run = await app.store.run(reviews.by_key, request.key)
        assert run is not None
        if run.state.open:
            # The files read so far, on a terminal (cli/progress.py).
            with progress.bars(sys.stderr) as shown:
                app.reviewer.reader.progress = shown.counter("reading the diff: files") \
                    if shown else None
                await app.reviewer.attempt(run)
            run = await app.store.run(reviews.get, run.id)
        found = await app.store.run(reviews.findings, run.id)
    finally:
        await app.close()
    if as_json:
        print(json.dumps(result(run, found), indent=2))
    else:
        _print(run.state, run.verdict, run.verdict_applied, run.files_reviewed,
               run.skipped_total, run.last_error, [(f.severity, f.path, f.line, f.placement)
                                                   for f in found])
    return EXIT_OK if run.state is ReviewState.DONE else EXIT_RUNTIME


def _print(state: ReviewState, verdict: str, applied: str, reviewed: int, skipped: int,
           error: str, found: list[tuple[str, str, int, str]]) -> None:
    if state is not ReviewState.DONE:
        print(f"livereview: the review is {state.value}: {one_line(error) or 'not finished'}",
              file=sys.stderr)
        return
    shown = verdict + (f" (posted as {applied})" if applied and applied != verdict else "")
    print(f"verdict: {shown}; {reviewed} file(s) reviewed, {skipped} skipped")
    for severity, path, line, placement in found:
        print(f"  {severity:<10} {one_line(path)}:{line}  [{placement}]")
