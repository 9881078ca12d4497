"""Review requested (core/review_requests.py): reviewer sets diffed into events, and who
may ask for a review that way."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from livereview.core.model import Actor, EventKind, Policy, Snapshot
from livereview.core.model_runs import ReviewTrigger
from livereview.core.review_requests import (
    requested_in,
    requested_reviews,
    reviewer_requests,
)
from livereview.sync.diff import diff
from tests.factories import ALICE, BOB, BOT, IDENTITY, T0, msg, snapshot, thread

POLICY = Policy(ignore_users=("*-bot",))
BASELINE = T0 - timedelta(hours=24)
ME = Actor(BOT.id, BOT.username)  # as the MR's reviewer list names it


def asked(snap: Snapshot, *reviewers: Actor, minutes: int = 0) -> Snapshot:
    return replace(snap, mr=replace(snap.mr, reviewers=reviewers,
                                    updated_at=T0 + timedelta(minutes=minutes)))


def reviews(stored: Snapshot | None, fresh: Snapshot, policy: Policy = POLICY) -> list[str]:
    return [r.detail for r in requested_reviews(reviewer_requests(stored, fresh), fresh,
                                                IDENTITY, policy, BASELINE)]


def test_the_bot_added_as_reviewer_is_one_event_and_one_review_named_by_its_time() -> None:
    stored = snapshot()
    fresh = asked(stored, ME, minutes=3)
    [event] = [e for e in diff(stored, fresh) if e.kind is EventKind.REVIEW_REQUESTED]
    assert event.detail == f"@livereview by an unknown actor at {fresh.mr.updated_at.isoformat()}"
    [run] = requested_reviews(reviewer_requests(stored, fresh), fresh, IDENTITY, POLICY,
                              BASELINE)
    assert (run.trigger, run.detail, run.explicit) == (
        ReviewTrigger.REQUESTED, fresh.mr.updated_at.isoformat(), True)


def test_the_same_reviewers_again_are_no_event_and_a_readdition_is_a_new_generation() -> None:
    first = asked(snapshot(), ME, minutes=1)
    assert reviews(first, first) == []
    removed = asked(first, minutes=2)
    assert reviews(first, removed) == []
    again = asked(removed, ME, minutes=3)
    assert reviews(removed, again) == [again.mr.updated_at.isoformat()]
    assert reviews(removed, again) != reviews(snapshot(), first)


def test_another_reviewer_added_is_an_event_but_no_review() -> None:
    stored = snapshot()
    fresh = asked(stored, Actor(ALICE.id, ALICE.username))
    assert [e.kind for e in diff(stored, fresh)] == [EventKind.REVIEW_REQUESTED]
    assert reviews(stored, fresh) == []


def _noted(snap: Snapshot, body: str, author: Actor, at: int, note_id: str = "s1") -> Snapshot:
    note = msg(note_id, author, body, thread=f"t-{note_id}", at=at, system=True)
    return replace(snap, threads=(*snap.threads, thread(f"t-{note_id}", note)))


def test_gitlabs_system_note_names_who_asked_and_when() -> None:
    stored = snapshot()
    fresh = _noted(asked(stored, ME, minutes=9),
                   "requested review from @carol and @livereview and removed review "
                   "request for @dave", ALICE, at=5)
    [request] = reviewer_requests(stored, fresh)
    assert request.actor == ALICE and request.at == T0 + timedelta(minutes=5)


def test_a_rerequest_between_two_polls_is_told_by_its_new_system_note() -> None:
    stored = _noted(asked(snapshot(), ME), "requested review from @livereview", ALICE, at=1)
    fresh = _noted(stored, "requested review from @livereview", BOB, at=7, note_id="s2")
    [request] = reviewer_requests(stored, fresh)
    assert request.actor == BOB and request.at == T0 + timedelta(minutes=7)
    assert reviewer_requests(fresh, fresh) == []


def test_a_request_by_the_bot_itself_or_another_bot_starts_no_review() -> None:
    stored = snapshot()
    for author in (BOT, Actor("5", "renovate-bot"), Actor("6", "dependabot[bot]"),
                   Actor("7", "helper", bot=True)):
        fresh = _noted(asked(stored, ME), "requested review from @livereview", author, at=2)
        assert reviews(stored, fresh) == [], author


def test_no_review_when_turned_off_closed_or_asked_before_the_baseline() -> None:
    stored = snapshot()
    fresh = asked(stored, ME)
    assert reviews(stored, fresh, replace(POLICY, review_on_request=False)) == []
    closed = replace(fresh, mr=replace(fresh.mr, state="closed"))
    assert reviews(stored, closed) == []
    old = asked(stored, ME, minutes=-60 * 25)
    assert reviews(None, old) == []
    assert reviews(None, fresh) == [fresh.mr.updated_at.isoformat()]  # first sight, recent


@given(st.lists(st.from_regex(r"[a-z][a-z0-9_.\-]{0,12}", fullmatch=True), min_size=1,
                max_size=5, unique=True))
def test_every_name_of_gitlabs_sentence_is_read_back(names: list[str]) -> None:
    refs = [f"@{n}" for n in names]
    sentence = refs[0] if len(refs) == 1 else f"{', '.join(refs[:-1])} and {refs[-1]}"
    assert requested_in(f"requested review from {sentence}") == set(names)
    assert requested_in(f"requested review from {sentence} and removed review request "
                        "for @zed") == set(names)
    assert requested_in(f"removed review request for {sentence}") == set()
