from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from livereview.core.markdown import prose
from livereview.core.model import Event, EventKind, JobReason, Policy, ReplyRequest, Thread
from livereview.core.triggers import (
    asks_to_resolve,
    consecutive_bot_replies,
    is_ignored,
    loop_guard,
    mentions,
    replied_to,
    reply_marker,
    reply_requests,
)
from livereview.sync.diff import diff
from tests.factories import ALICE, BOB, BOT, IDENTITY, KEY, T0, msg, snapshot, thread

POLICY = Policy(aliases=("@livereview", "@lr"), ignore_users=("ghost", "*-bot"))
BASELINE = T0 - timedelta(hours=24)


def decide(*threads: Thread, baseline: datetime = BASELINE,
           events: list[Event] | None = None) -> list[ReplyRequest]:
    snap = snapshot(*threads)
    return reply_requests(events if events is not None else diff(None, snap), snap, IDENTITY,
                          POLICY, baseline)


@pytest.mark.parametrize("body", [
    "@livereview is this lock needed?",
    "hey @LiveReview, thoughts?",
    "(@livereview)",
    "ping @lr.",
    "line one\n@livereview line two",
])
def test_mentions_found(body: str) -> None:
    assert mentions(body, POLICY.aliases)


@pytest.mark.parametrize("body", [
    "me@livereview.example.com wrote",
    "@livereviewer is someone else",
    "@livereview-bot is someone else",
    "`@livereview` in code",
    "```\n@livereview in a block\n```",
    "~~~python\n@livereview\n~~~",
    "> @livereview quoted from above\nI agree",
    "<!-- @livereview hidden -->",
    "no mention at all",
])
def test_mentions_not_found(body: str) -> None:
    assert not mentions(body, POLICY.aliases)


def test_mention_after_closed_fence_counts() -> None:
    assert mentions("```\ncode\n```\n@livereview what about this?", POLICY.aliases)


@given(st.text())
def test_prose_never_crashes_and_stays_linear_in_size(text: str) -> None:
    assert len(prose(text)) <= 2 * len(text) + 2


_PLAIN = st.text(alphabet=st.characters(categories=("L", "N", "Zs"),
                                       include_characters=",.;:?()'\"",
                                       exclude_characters="\u2028\u2029"), max_size=40)


@given(_PLAIN, _PLAIN)
def test_a_mention_between_spaces_in_plain_prose_is_always_found(before: str, after: str) -> None:
    assert mentions(f"x{before} @livereview {after}", POLICY.aliases)


# No line breaks: a blank line (or a heading's line) inside the backticks ends the paragraph,
# and then the span and the mention after it are really prose — as the hosts render them.
@given(st.text(alphabet=st.characters(exclude_characters="`\n\r"), max_size=30))
def test_a_mention_inside_inline_code_is_never_found(inner: str) -> None:
    body = f"see `{inner} @livereview`"
    assert not mentions(body, POLICY.aliases)


@given(st.from_regex(r"[A-Za-z0-9_:.-]{1,40}", fullmatch=True))  # host ids: ints, hex, keys
def test_marker_round_trips(message_id: str) -> None:
    assert replied_to("answer\n\n" + reply_marker(message_id)) == message_id


def test_mention_triggers_one_job() -> None:
    [job] = decide(thread("t1", msg("1", body="@livereview why?")))
    assert (job.message_id, job.thread_id, job.reason) == ("1", "t1", JobReason.MENTION)
    assert job.key == f"{KEY.host}:{KEY.repo}:{KEY.iid}:1"


def test_reply_in_bot_thread_triggers_without_mention() -> None:
    jobs = decide(thread("t1", msg("1", body="@livereview why?"),
                         msg("2", BOT, "because\n\n" + reply_marker("1"), at=1),
                         msg("3", body="but what about X?", at=2)))
    assert [(j.message_id, j.reason) for j in jobs] == [("3", JobReason.THREAD_REPLY)]


def test_human_thread_without_bot_needs_a_mention() -> None:
    assert decide(thread("t1", msg("1"), msg("2", BOB, "agreed", at=1))) == []


@pytest.mark.parametrize("author", [BOT, msg("x", author=ALICE).author.__class__("5", "ci-bot"),
                                    msg("x").author.__class__("6", "ghost")])
def test_never_for_self_or_ignored_users(author) -> None:  # type: ignore[no-untyped-def]
    assert decide(thread("t1", msg("1", author, "@livereview loop?"))) == []


def test_never_for_system_notes() -> None:
    assert decide(thread("t1", msg("1", body="@livereview added 1 commit", system=True))) == []


def test_never_for_comments_older_than_the_baseline() -> None:
    old = [thread(f"t{i}", msg(str(i), body="@livereview old", thread=f"t{i}", at=-60 * 48))
           for i in range(500)]
    assert decide(*old) == []


def test_never_twice_when_already_answered_by_marker() -> None:
    threads = (thread("t1", msg("1", body="@livereview why?"),
                      msg("2", BOT, "done\n\n" + reply_marker("1"), at=1)),)
    assert decide(*threads) == []


def test_edit_that_adds_a_mention_triggers() -> None:
    t = thread("t1", msg("1", body="now @livereview please"))
    [job] = decide(t, events=[Event(EventKind.COMMENT_EDITED, KEY, "t1", "1")])
    assert job.reason is JobReason.EDIT_MENTION


def test_deleted_and_reaction_events_do_not_trigger() -> None:
    t = thread("t1", msg("1", body="@livereview hi"))
    events = [Event(EventKind.COMMENT_DELETED, KEY, "t1", "1"),
              Event(EventKind.REACTION_ADDED, KEY, "t1", "1", "eyes:2")]
    assert decide(t, events=events) == []


def test_message_before_the_bot_joined_is_not_a_thread_reply() -> None:
    jobs = decide(thread("t1", msg("1", body="plain"), msg("2", body="@livereview look", at=1),
                         msg("3", BOT, "ok\n\n" + reply_marker("2"), at=2)))
    assert jobs == []


def _ping_pong(rounds: int, gap_seconds: float) -> Thread:
    """alice and the bot alternating; alice answers `gap_seconds` after each bot reply."""
    messages = [msg("0", body="@livereview start")]
    at = T0
    for i in range(rounds):
        at += timedelta(seconds=30)
        messages.append(replace(msg(f"b{i}", BOT, "answer"), created_at=at))
        at += timedelta(seconds=gap_seconds)
        messages.append(replace(msg(f"h{i}", ALICE, "again"), created_at=at))
    return thread("t1", *messages)


def test_a_fast_answering_partner_is_not_a_human_in_between() -> None:
    policy = Policy(max_consecutive_replies=5, automated_reply_seconds=5)
    fast = _ping_pong(5, gap_seconds=1)
    assert consecutive_bot_replies(fast, IDENTITY, policy) == 5
    assert (loop_guard(snapshot(fast), fast, IDENTITY, policy, T0) or "").startswith("loop guard")
    slow = _ping_pong(5, gap_seconds=60)
    assert consecutive_bot_replies(slow, IDENTITY, policy) == 0
    assert loop_guard(snapshot(slow), slow, IDENTITY, policy, T0) is None


def test_ignored_users_do_not_reset_the_count() -> None:
    policy = Policy(ignore_users=("*-bot",), max_consecutive_replies=2,
                    automated_reply_seconds=0)
    other = ALICE.__class__("5", "ci-bot")
    t = thread("t1", msg("1"), msg("2", BOT, at=1), msg("3", other, at=2), msg("4", BOT, at=3))
    assert consecutive_bot_replies(t, IDENTITY, policy) == 2


def test_reply_budget_per_mr_per_hour() -> None:
    policy = Policy(max_replies_per_mr_per_hour=3)
    threads = [thread(f"t{i}", msg(f"q{i}", thread=f"t{i}"),
                      msg(f"a{i}", BOT, thread=f"t{i}", at=1)) for i in range(3)]
    snap = snapshot(*threads)
    now = T0 + timedelta(minutes=30)
    assert loop_guard(snap, threads[0], IDENTITY, policy, now) == (
        "reply budget: 3 bot replies in this MR in the last hour")
    assert loop_guard(snap, threads[0], IDENTITY, policy, now + timedelta(hours=1)) is None


@pytest.mark.parametrize(("username", "ignored"), [
    ("dependabot[bot]", True), ("renovate-bot", True), ("ghost", True), ("GHOST", True),
    ("bob", False), ("echo", False), ("robot", False), ("ghostly", False), ("[bot]x", False),
])
def test_ignore_patterns_are_globs_with_a_literal_bracket(username: str, ignored: bool) -> None:
    actor = ALICE.__class__("9", username)
    assert is_ignored(actor, ("ghost", "*-bot", "*[bot]")) is ignored


@pytest.mark.parametrize(("body", "asked"), [
    ("@livereview resolve", True), ("Fixed. @LiveReview, resolve please", True),
    ("@lr: resolve", True), ("@livereview resolved?", False), ("resolve @livereview", False),
    ("`@livereview resolve`", False), ("> @livereview resolve", False),
])
def test_resolve_command(body: str, asked: bool) -> None:
    assert asks_to_resolve(body, POLICY.aliases) is asked
