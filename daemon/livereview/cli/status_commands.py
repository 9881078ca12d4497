"""The commands that read the store and say what the daemon is doing: `health`,
`pending`, `conversation`. Each reads with what it imports when it runs (cli/commands.py)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from livereview.cli.exits import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE

if TYPE_CHECKING:
    from livereview.settings import Settings

# States with a next attempt: a reply job's, a review run's.
OPEN_STATES = ("pending", "acked", "answered", "reviewing", "posting", "notifying")



def conversation(settings: Settings, args: argparse.Namespace) -> int:
    from livereview.cli import conversation as render_conversation
    from livereview.tools import status

    try:
        key = render_conversation.parse_url(settings, args.url)
        graph = status.conversation(settings, key)
    except status.UnknownMR as exc:
        print(f"livereview: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(json.dumps(render_conversation.as_dict(graph), indent=2) if args.json
          else render_conversation.render(graph))
    return EXIT_OK


def health(settings: Settings, args: argparse.Namespace) -> int:
    from livereview.store.reads import INSTANCE
    from livereview.tools import status

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



def pending(settings: Settings, args: argparse.Namespace) -> int:
    watched = sorted({r.path for r in settings.repos})
    if args.repo is not None and args.repo.strip("/") not in watched:
        print(f"livereview: pending --repo {args.repo}: not a watched repo (the config "
              f"watches {', '.join(watched)})", file=sys.stderr)
        return EXIT_USAGE
    from livereview.store.faults import StoreMissing
    from livereview.tools import status

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
