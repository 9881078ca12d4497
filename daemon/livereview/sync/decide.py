"""The pure part of one MR's sync: what changed since the stored snapshot, and what it asks
of the bot (docs/DESIGN.md §1, §5). No I/O: the poller (sync/poller.py) reads and stores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from livereview.core.edits import edit_requests
from livereview.core.lessons import turned_down
from livereview.core.model import Event, EventKind, Identity, Policy, ReplyRequest, Snapshot
from livereview.core.model_runs import AwaitingReview, ReviewRequest
from livereview.core.review_requests import requested_reviews, reviewer_requests
from livereview.core.triggers import reply_follow_ups, reply_requests, review_requests
from livereview.sync.diff import diff


@dataclass(frozen=True)
class Decision:
    events: list[Event]
    requests: list[ReplyRequest]
    turned_down: set[str]  # concessions a human gave a thumbs down
    reviews: list[ReviewRequest]
    capped: tuple[str, ...] = ()  # edited questions left unanswered by max_edit_answers


def unchanged(stored: Snapshot | None, fresh: Snapshot, events: Sequence[object]) -> bool:
    return stored is not None and not events and stored.mr == fresh.mr


def decide(stored: Snapshot | None, fresh: Snapshot, baseline: datetime,
           concessions: frozenset[str], identity: Identity, policy: Policy,
           review_on: tuple[str, ...], awaiting: AwaitingReview | None = None) -> Decision:
    """Events, reply requests (edited questions included), turned-down concessions, and the
    reviews asked for: a `@livereview review` comment, a reply on a review awaiting one, or
    the bot added as a reviewer gets a review, not an answer."""
    events = diff(stored, fresh)
    requests = [] if unchanged(stored, fresh, events) else reply_requests(
        events, fresh, identity, policy, baseline)
    edits = edit_requests(events, stored, fresh, identity, policy, baseline)
    requests += edits.requests
    wanted = review_requests(events, fresh, stored is None, requests, policy, review_on,
                             baseline)
    if awaiting is not None and stored is not None:
        # "@livereview review 42" is one ask: the mention's review, not a second one.
        mentioned = {r.detail for r in wanted}
        wanted += [r for r in reply_follow_ups(events, fresh, awaiting, identity, policy)
                   if r.detail not in mentioned]
    if any(e.kind is EventKind.REVIEW_REQUESTED for e in events):
        wanted += requested_reviews(reviewer_requests(stored, fresh), fresh, identity, policy,
                                    baseline)
    asked = {r.detail for r in wanted if r.thread_id}
    requests = [r for r in requests if r.message_id not in asked]
    return Decision(events, requests, turned_down(fresh, concessions, identity), wanted,
                    edits.capped)
