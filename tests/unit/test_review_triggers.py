"""What asks for a review: `@livereview review`, and the repo's review_on policy. Pure."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from livereview.core.model import (
    Actor,
    Event,
    EventKind,
    JobReason,
    Message,
    Policy,
    ReplyRequest,
    Snapshot,
)
from livereview.core.model_runs import AwaitingReview, ReviewTrigger
from livereview.core.triggers import (
    asks_to_review,
    is_draft,
    names_review,
    reply_follow_ups,
    review_requests,
)
from tests.factories import BOB, BOT, IDENTITY, KEY, T0, msg, snapshot, thread

POLICY = Policy()
EARLY = T0 - timedelta(hours=1)


def test_asks_to_review_is_the_command_in_prose_only() -> None:
    assert asks_to_review("@livereview review please", POLICY.aliases)
    assert asks_to_review("Hey @LiveReview: review", POLICY.aliases)
    assert not asks_to_review("@livereview reviewing is slow", POLICY.aliases)
    assert not asks_to_review("`@livereview review`", POLICY.aliases)
    assert not asks_to_review("> @livereview review", POLICY.aliases)
    assert not asks_to_review("please review @livereview", POLICY.aliases)


def test_drafts() -> None:
    assert is_draft("Draft: x") and is_draft("[Draft] x") and is_draft("WIP: x")
    assert not is_draft("Drafting the API")


def ask(body: str) -> tuple[Snapshot, ReplyRequest]:
    snap = snapshot(thread("t1", msg("m1", body=body)))
    return snap, ReplyRequest(KEY, "t1", "m1", JobReason.MENTION, T0)


def test_a_review_mention_asks_explicitly_even_on_a_draft() -> None:
    snap, request = ask("@livereview review")
    snap = replace(snap, mr=replace(snap.mr, title="Draft: wip"))
    [wanted] = review_requests([], snap, False, [request], POLICY, (), EARLY)
    assert (wanted.trigger, wanted.detail, wanted.thread_id, wanted.explicit) == (
        ReviewTrigger.MENTION, "m1", "t1", True)


def test_policy_opened_and_push() -> None:
    snap = snapshot()
    push = [Event(EventKind.COMMIT_PUSH, KEY)]
    assert review_requests([], snap, True, [], POLICY, (), EARLY) == []
    [opened] = review_requests([], snap, True, [], POLICY, ("opened",), EARLY)
    assert opened.trigger is ReviewTrigger.OPENED
    # An MR opened before the daemon's baseline is backlog, not new.
    assert review_requests([], snap, True, [], POLICY, ("opened",), T0 + timedelta(1)) == []
    [pushed] = review_requests(push, snap, False, [], POLICY, ("push",), EARLY)
    assert (pushed.trigger, pushed.detail) == (ReviewTrigger.PUSH, "c2")
    assert review_requests(push, snap, False, [], POLICY, ("opened",), EARLY) == []
    draft = replace(snap, mr=replace(snap.mr, title="Draft: x"))
    assert review_requests(push, draft, True, [], POLICY, ("opened", "push"), EARLY) == []
    closed = snapshot(state="closed")
    assert review_requests(push, closed, False, [], POLICY, ("push",), EARLY) == []


# ---- a reply on a review names it (docs/DESIGN.md §11) ----------------------------------------
@pytest.mark.parametrize(("body", "named"), [
    ("Fixed both points of review 4711.", True),
    ("review #4711: done", True),
    ("Review ID 4711 is addressed", True),
    ("review 47112 is another one", False),
    ("> review 4711\n\nquoted, not said", False),
    ("```\nreview 4711\n```", False),
    ("4711 alone is a number, not a reference", False),
])
def test_a_reply_names_the_review_only_in_its_own_words(body: str, named: bool) -> None:
    assert names_review(body, "4711") is named


AWAITING = AwaitingReview("s1", "s1", T0)  # GitLab: the review is its summary note


def added(*messages: Message) -> list[Event]:
    return [Event(EventKind.COMMENT_ADDED, KEY, m.thread_id, m.id) for m in messages]


def follow_ups(snap: Snapshot, *new: Message) -> list[tuple[ReviewTrigger, str, str]]:
    return [(r.trigger, r.detail, r.thread_id) for r in reply_follow_ups(
        added(*new), snap, AWAITING, IDENTITY, POLICY)]


def test_a_reply_in_the_summary_thread_asks_for_the_follow_up_keyed_by_itself() -> None:
    summary = msg("s1", BOT, "### livereview review", thread="s1")
    reply = msg("r1", BOB, "Fixed, resolved both.", thread="s1", at=5)
    snap = snapshot(thread("s1", summary, reply))
    assert follow_ups(snap, reply) == [(ReviewTrigger.REPLY, "r1", "s1")]
    [request] = reply_follow_ups(added(reply), snap, AWAITING, IDENTITY, POLICY)
    assert request.explicit and request.key.endswith(":review:reply:r1")


def test_a_comment_elsewhere_asks_only_when_it_names_the_review() -> None:
    summary = msg("s1", BOT, "### livereview review", thread="s1")
    naming = msg("c1", BOB, "All done for review s1.", thread="t9", at=5)
    other = msg("c2", BOB, "Working on it.", thread="t8", at=6)
    snap = snapshot(thread("s1", summary), thread("t9", naming), thread("t8", other))
    assert follow_ups(snap, naming, other) == [(ReviewTrigger.REPLY, "c1", "t9")]


def test_the_bot_other_bots_system_notes_and_older_comments_ask_for_nothing() -> None:
    summary = msg("s1", BOT, "### livereview review", thread="s1", at=10)
    mine = msg("m1", BOT, "ack", thread="s1", at=11)
    system = msg("y1", BOB, "added 1 commit", thread="s1", at=12, system=True)
    other_bot = msg("o1", Actor("7", "ci-bot", bot=True), "review s1 ok", thread="s1", at=13)
    older = msg("e1", BOB, "review s1", thread="t2", at=1)  # before the summary
    snap = snapshot(thread("s1", summary, mine, system, other_bot), thread("t2", older))
    assert follow_ups(snap, mine, system, other_bot, older) == []


def test_a_closed_mr_asks_for_no_follow_up() -> None:
    summary = msg("s1", BOT, "### livereview review", thread="s1")
    reply = msg("r1", BOB, "done", thread="s1", at=5)
    snap = snapshot(thread("s1", summary, reply), state="merged")
    assert follow_ups(snap, reply) == []
