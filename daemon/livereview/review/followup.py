"""A follow-up review after new commits: what not to raise again, what to resolve. Pure.

Findings are matched across reviews by a fingerprint of their file and first line, not by
line number (lines move when code is added above). An earlier finding whose thread a human
resolved, or in which the bot conceded (a lesson or a concession), is never raised again.
An earlier finding still open is not posted a second time either: its thread is there. An
open earlier finding in a file the new commits changed that the model does not raise again
is taken as fixed: its thread is resolved with a one-line note.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from livereview.model import Identity, Thread
from livereview.review.findings import Finding

_WORD = re.compile(r"[^\W_]+")


def fingerprint(path: str, body: str) -> str:
    title = body.strip().splitlines()[0] if body.strip() else ""
    words = " ".join(w.lower() for w in _WORD.findall(title))
    return hashlib.sha256(f"{path}\0{words}".encode("utf-8", "surrogatepass")).hexdigest()[:24]


def of(finding: Finding) -> str:
    return fingerprint(finding.path, finding.title)


@dataclass(frozen=True)
class Earlier:
    """A finding an earlier review posted in a thread of its own."""

    id: int
    fingerprint: str
    path: str
    thread_id: str
    settled: bool  # resolved by a human, or conceded by the bot in its thread


@dataclass(frozen=True)
class FollowUp:
    post: tuple[Finding, ...]
    not_raised_again: int  # settled earlier
    already_open: int  # still open in their threads
    fixed: tuple[Earlier, ...]  # resolve these, with a note


def settled(thread: Thread | None, identity: Identity, conceded: Collection[str]) -> bool:
    """Has the point of this finding's thread been settled by the people in it? Resolved
    by someone, gone (deleted), or answered convincingly: the bot conceded in it (`conceded`:
    ids of the bot's replies that conceded or proposed a lesson)."""
    if thread is None or thread.resolved:
        return True
    return any(identity.is_me(m.author) and m.id in conceded for m in thread.messages)


def follow_up(found: Iterable[Finding], earlier: Iterable[Earlier],
              changed_paths: Collection[str]) -> FollowUp:
    """Decide over the findings of a follow-up review, given the earlier findings of the MR
    and the paths whose change differs from the last reviewed head."""
    by_print: dict[str, Earlier] = {}
    for item in earlier:
        # Two earlier findings with one fingerprint: a settled one wins (never raise again).
        kept = by_print.get(item.fingerprint)
        if kept is None or (item.settled and not kept.settled):
            by_print[item.fingerprint] = item
    post: list[Finding] = []
    raised: set[str] = set()
    not_again = already = 0
    for finding in found:
        key = of(finding)
        raised.add(key)
        match = by_print.get(key)
        if match is None:
            post.append(finding)
        elif match.settled:
            not_again += 1
        else:
            already += 1
    fixed = tuple(e for e in by_print.values()
                  if not e.settled and e.path in changed_paths and e.fingerprint not in raised)
    return FollowUp(tuple(post), not_again, already, fixed)
