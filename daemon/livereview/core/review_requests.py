"""Being asked for a review the way people ask people: added as a reviewer. Pure.

The reviewer set is part of the MR snapshot (`MergeRequest.reviewers`), so a request is
diffed from two snapshots like every other event (docs/DESIGN.md §3): a reviewer in the
fresh snapshot and not in the stored one was asked. Who asked, and when, is taken from the
host where it says so — GitLab's system note "requested review from @bot"
(SystemNotes::IssuablesService#change_issuable_reviewers and #request_review: "requested
review from @a, @b and @c and removed review request for @d", by the user who changed
them) — and otherwise is "an unknown actor" at the MR's `updated_at`, which every host
moves when its reviewers change. A system note newer than the stored snapshot also tells
of a remove-and-re-add (or GitLab's "re-request review") between two polls.

Each request has a generation — the time it was made — that names its review run, so the
same request seen again (a restart, a replica, a re-poll) starts nothing more, and a new
request after a removal starts a new review.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from livereview.core.model import Actor, Event, EventKind, Identity, Policy, Snapshot
from livereview.core.model_runs import ReviewRequest, ReviewTrigger
from livereview.core.triggers import is_ignored

_REQUESTED = re.compile(r"\brequested review from (?P<names>.+?)(?: and removed\b|\Z)",
                        re.DOTALL)
_REFERENCE = re.compile(r"@([\w.\-]+)")


@dataclass(frozen=True, slots=True)
class ReviewerRequest:
    """`reviewer` was asked to review, by `actor` (None: the host does not say) at `at`."""

    reviewer: Actor
    actor: Actor | None
    at: datetime

    @property
    def generation(self) -> str:
        return self.at.isoformat()

    def describe(self) -> str:
        by = f"@{self.actor.username}" if self.actor else "an unknown actor"
        return f"@{self.reviewer.username} by {by} at {self.generation}"


def requested_in(body: str) -> set[str]:
    """The user names (lower case) a GitLab system note says review was requested from."""
    match = _REQUESTED.search(body[:4096])
    return {name.lower() for name in _REFERENCE.findall(match.group("names"))} if match else set()


def _same(a: Actor, b: Actor) -> bool:
    return a.id == b.id if a.id and b.id else a.username.lower() == b.username.lower()


def reviewer_requests(stored: Snapshot | None, fresh: Snapshot) -> list[ReviewerRequest]:
    """The review requests that turn `stored` into `fresh` (module docstring)."""
    before = stored.mr.reviewers if stored else ()
    old_notes = stored.messages() if stored else {}
    notes = [m for t in fresh.threads for m in t.messages if m.system]
    found: list[ReviewerRequest] = []
    for reviewer in fresh.mr.reviewers:
        name = reviewer.username.lower()
        said = [m for m in notes if name in requested_in(m.body)]
        note = max(said, key=lambda m: m.created_at, default=None)
        added = not any(_same(reviewer, r) for r in before)
        again = note is not None and note.id not in old_notes and stored is not None
        if added or again:
            found.append(ReviewerRequest(reviewer, note.author if note else None,
                                         note.created_at if note else fresh.mr.updated_at))
    return found


def request_events(stored: Snapshot | None, fresh: Snapshot) -> list[Event]:
    return [Event(EventKind.REVIEW_REQUESTED, fresh.mr.key, detail=r.describe())
            for r in reviewer_requests(stored, fresh)]


def _may_ask(actor: Actor | None, identity: Identity, policy: Policy) -> bool:
    """The rule of `@livereview review` mentions: a person, not the bot or another bot."""
    if actor is None:  # the host only lets those who may edit the MR set its reviewers
        return True
    return not (identity.is_me(actor) or actor.bot or actor.username.lower().endswith("[bot]")
                or is_ignored(actor, policy.ignore_users))


def requested_reviews(requests: Iterable[ReviewerRequest], fresh: Snapshot,
                      identity: Identity, policy: Policy, baseline: datetime
                      ) -> list[ReviewRequest]:
    """A review per request of the bot itself, made after `baseline` by someone who may
    ask, on an open MR (a draft too: a person asked), when `[review] on_review_request`."""
    if not policy.review_on_request or fresh.mr.state != "opened":
        return []
    return [ReviewRequest(fresh.mr.key, ReviewTrigger.REQUESTED, r.generation, explicit=True)
            for r in requests
            if identity.is_me(r.reviewer) and r.at >= baseline
            and _may_ask(r.actor, identity, policy)]
