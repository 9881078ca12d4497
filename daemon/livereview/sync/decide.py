"""The pure part of one MR's sync: what changed since the stored snapshot, and what it asks
of the bot (docs/DESIGN.md §1, §5). No I/O: the poller (sync/poller.py) reads and stores."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from livereview.core.lessons import turned_down
from livereview.core.model import Event, Identity, Policy, ReplyRequest, Snapshot
from livereview.core.model_runs import ReviewRequest
from livereview.core.triggers import reply_requests, review_requests
from livereview.sync.diff import diff


@dataclass(frozen=True)
class Decision:
    events: list[Event]
    requests: list[ReplyRequest]
    turned_down: set[str]  # concessions a human gave a thumbs down
    reviews: list[ReviewRequest]


def unchanged(stored: Snapshot | None, fresh: Snapshot, events: Sequence[object]) -> bool:
    return stored is not None and not events and stored.mr == fresh.mr


def decide(stored: Snapshot | None, fresh: Snapshot, baseline: datetime,
           concessions: frozenset[str], identity: Identity, policy: Policy,
           review_on: tuple[str, ...]) -> Decision:
    """Events, reply requests, turned-down concessions, and the reviews asked for (a
    `@livereview review` comment gets a review, not an answer)."""
    events = diff(stored, fresh)
    requests = [] if unchanged(stored, fresh, events) else reply_requests(
        events, fresh, identity, policy, baseline)
    wanted = review_requests(events, fresh, stored is None, requests, policy, review_on,
                             baseline)
    asked = {r.detail for r in wanted if r.thread_id}
    requests = [r for r in requests if r.message_id not in asked]
    return Decision(events, requests, turned_down(fresh, concessions, identity), wanted)
