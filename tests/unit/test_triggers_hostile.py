"""Triggers against hostile input: mentions hidden in Markdown, smuggled markers, other
bots, and threads long enough to make a quadratic scan freeze the daemon. Pure."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

import pytest

from livereview.core.model import Actor, Identity, Policy, Thread
from livereview.core.triggers import (
    exchange_replies,
    is_other_bot,
    loop_guard,
    mentions,
    replied_to,
    reply_marker,
    reply_requests,
)
from livereview.sync.diff import diff
from tests.factories import ALICE, BOB, BOT, IDENTITY, T0, msg, snapshot, thread

POLICY = Policy(aliases=("@livereview",), ignore_users=())
BASELINE = T0 - timedelta(hours=24)


@pytest.mark.parametrize("body", [
    "text\n\n    @livereview in an indented code block",
    "<code>@livereview</code>",
    "<pre>\n@livereview\n</pre>",
    "- a list\n  > @livereview in a quote nested in a list",
    "1. one\n   ```\n   @livereview in a fence in a list\n   ```",
    "[@livereview](https://example.com)",
    "<a href='x'>@livereview</a>",
    "> > @livereview deeply quoted",
    "<!--\n@livereview\n-->",
    "\t@livereview after a tab is indented code",
    ">>>\nGitLab's multi-line quote: @livereview said\n>>>",
    "I asked:\n>>>\n@livereview never closed, so quoted to the end",
])
def test_a_mention_that_hosts_render_as_code_quote_or_link_does_not_count(body: str) -> None:
    assert not mentions(body, POLICY.aliases)


@pytest.mark.parametrize("body", [
    "- @livereview in a list item",
    "**@livereview** in bold",
    "# @livereview in a heading",
    "<div>\n@livereview in an HTML block\n</div>",
    "text `code` then @livereview",
    "| @livereview | in a table |",
    ">>>\nquoted\n>>>\n@livereview after the quote closed",
    "```\n>>>\n```\n@livereview: a delimiter in code delimits nothing",
])
def test_a_mention_in_rendered_prose_counts(body: str) -> None:
    assert mentions(body, POLICY.aliases)


# ---- markers -------------------------------------------------------------------------------
@pytest.mark.parametrize("body", [
    "<!-- livereview:reply-to=42 --> first line",
    "answer <!-- livereview:reply-to=42 -->",
    "answer\n\n<!-- livereview:reply-to=42 -->\nmore text after",
    "answer\n\n&lt;!-- livereview:reply-to=42 -->",
    "answer\n\n<!--  livereview:reply-to=42 -->",
    "answer\n\n<!-- livereview:reply-to=42 --><!-- livereview:reply-to=43 -->",
])
def test_only_an_exact_trailing_marker_names_the_answered_message(body: str) -> None:
    assert replied_to(body) is None


def test_the_trailing_marker_wins_over_any_smuggled_one() -> None:
    body = "quote: <!-- livereview:reply-to=999 -->\n\nanswer\n\n" + reply_marker("42")
    assert replied_to(body) == "42"


def test_a_smuggled_marker_in_the_bots_own_reply_silences_nobody() -> None:
    """The question carried a marker for a later note; the bot's reply quoted it. The later
    note must still be answered."""
    question = msg("1", body="@livereview see <!-- livereview:reply-to=3 --> why?")
    reply = msg("2", BOT, "You asked: <!-- livereview:reply-to=3 --> …\n\n" + reply_marker("1"),
                at=1)
    later = msg("3", BOB, "@livereview and this?", thread="t2", at=2)
    snap = snapshot(thread("t1", question, reply), thread("t2", later))
    jobs = reply_requests(diff(None, snap), snap, IDENTITY, POLICY, BASELINE)
    assert [j.message_id for j in jobs] == ["3"]


# ---- other bots ----------------------------------------------------------------------------
@pytest.mark.parametrize("author", [
    Actor("7", "ci", bot=True),
    Actor("8", "dependabot[bot]"),
    Actor("9", "project_12_bot_3f2a1b", bot=True),
])
def test_an_account_its_host_marks_as_a_bot_is_never_answered(author: Actor) -> None:
    snap = snapshot(thread("t1", msg("1", author, "@livereview please review")))
    assert reply_requests(diff(None, snap), snap, IDENTITY, POLICY, BASELINE) == []
    assert is_other_bot(msg("1", author), POLICY)


def test_another_livereview_instance_is_recognised_by_its_signature() -> None:
    other = Actor("50", "reviewbot")
    snap = snapshot(thread("t1", msg("1", other, "@livereview hi\n\n" + reply_marker("0"))))
    assert reply_requests(diff(None, snap), snap, IDENTITY, POLICY, BASELINE) == []


def _slow_ping_pong(rounds: int, partner: Actor) -> Thread:
    """The bot and one partner alternating, the partner always minutes later."""
    messages = [msg("0", partner, "@livereview start")]
    at = T0
    for i in range(rounds):
        at += timedelta(minutes=2)
        messages.append(replace(msg(f"b{i}", BOT, "answer"), created_at=at))
        at += timedelta(minutes=5)
        messages.append(replace(msg(f"p{i}", partner, "@livereview again"), created_at=at))
    return thread("t1", *messages)


def test_a_slow_partner_is_capped_whatever_its_timing() -> None:
    policy = Policy(max_consecutive_replies=5, max_exchange_replies=10,
                    automated_reply_seconds=5, max_replies_per_mr_per_hour=1000)
    partner = Actor("60", "slowbot")
    short = _slow_ping_pong(9, partner)
    assert loop_guard(snapshot(short), short, IDENTITY, policy, T0) is None
    long = _slow_ping_pong(10, partner)
    assert exchange_replies(long, IDENTITY) == 10
    reason = loop_guard(snapshot(long), long, IDENTITY, policy, T0)
    assert reason is not None and "one counterpart" in reason


def test_a_third_person_resets_the_exchange_cap() -> None:
    t = _slow_ping_pong(10, ALICE)
    t = replace(t, messages=(*t.messages, msg("x", BOB, "I agree with alice", at=10_000)))
    assert exchange_replies(t, IDENTITY) == 0


def test_a_partner_that_signs_with_hidden_comments_does_not_reset_the_count() -> None:
    policy = Policy(max_consecutive_replies=3, automated_reply_seconds=0)
    partner = Actor("61", "helper")
    t = thread("t1", msg("0", partner, "@livereview hi"),
               *(m for i in range(3) for m in (
                   msg(f"b{i}", BOT, "answer", at=2 * i + 1),
                   msg(f"p{i}", partner, "<!-- generated by helper -->\nok", at=2 * i + 2))))
    assert loop_guard(snapshot(t), t, IDENTITY, policy, T0) is not None


# ---- cost: linear in the thread, never quadratic ------------------------------------------
@dataclass(frozen=True)
class CountingIdentity(Identity):
    calls: list[int] | None = None

    def is_me(self, actor: Actor) -> bool:
        assert self.calls is not None
        self.calls[0] += 1
        return super().is_me(actor)


def _identity_checks(notes: int) -> int:
    messages = [msg(str(i), (ALICE, BOT, BOB)[i % 3],
                    f"note {i}" + (f"\n\n{reply_marker(str(i - 1))}" if i % 3 == 1 else ""),
                    at=i) for i in range(notes)]
    snap = snapshot(thread("t1", *messages))
    events = diff(None, snap)
    calls = [0]
    identity = CountingIdentity(IDENTITY.host, IDENTITY.user_id, IDENTITY.username, calls=calls)
    reply_requests(events, snap, identity, POLICY, BASELINE)
    return calls[0]


def test_trigger_evaluation_is_linear_in_the_notes_of_a_thread() -> None:
    small, large = _identity_checks(1_000), _identity_checks(8_000)
    assert large <= 8 * small * 1.1  # quadratic would be 64×


def test_an_ack_marker_is_read_like_a_reply_marker_and_names_no_answer() -> None:
    from livereview.core.triggers import ack_marker, acked_for
    assert acked_for("👀 Looking into this…\n\n" + ack_marker("42")) == "42"
    assert acked_for("text " + ack_marker("42") + " more") is None
    assert replied_to("👀\n\n" + ack_marker("42")) is None  # an ack answers nothing
    snap = snapshot(thread("t1", msg("1", body="@livereview why?"),
                           msg("2", BOT, "👀\n\n" + ack_marker("1"), at=1)))
    jobs = reply_requests(diff(None, snap), snap, IDENTITY, POLICY, BASELINE)
    assert jobs == []  # the bot spoke after it: its job exists already


def test_another_instances_ack_marks_it_as_a_bot() -> None:
    from livereview.core.triggers import ack_marker
    assert is_other_bot(msg("1", Actor("50", "otherbot"), "hi\n\n" + ack_marker("9")), POLICY)


# ---- cost of one hostile comment (pytest-timeout stops a quadratic regression) ------------
def test_a_megabyte_of_comment_openers_is_read_in_linear_time() -> None:
    """`<!--.*?-->` as a regex took 27 s for 200 kB of `<!--` (quadratic), per job."""
    flood = msg("2", ALICE, "@livereview " + "<!--" * 250_000, at=1)
    t = thread("t1", msg("1", BOT, "answer"), flood)
    assert loop_guard(snapshot(t), t, IDENTITY, POLICY, T0) is None


@pytest.mark.parametrize("filler", ["[", "[a](", "*a "])
def test_a_megabyte_of_markdown_is_searched_for_a_mention_in_its_first_64_kb(
        filler: str) -> None:
    body = "@livereview look " + filler * (1_000_000 // len(filler))
    assert mentions(body, POLICY.aliases)
    assert not mentions(filler * 100_000 + " @livereview", POLICY.aliases)  # past 64 kB


def test_two_slow_accounts_taking_turns_are_capped_per_thread_and_hour() -> None:
    """Each reply resets the one-counterpart cap when two bots alternate; the thread's
    hourly budget still stops them (the MR's 30 an hour would allow 720 a day)."""
    policy = Policy(max_replies_per_thread_per_hour=12, max_replies_per_mr_per_hour=1000)
    a, b = Actor("70", "bot-a"), Actor("71", "bot-b")
    messages = [msg("0", a, "@livereview hi")]
    for i in range(12):
        messages += [msg(f"r{i}", BOT, "answer", at=4 * i + 1),
                     msg(f"m{i}", (b, a)[i % 2], "@livereview and?", at=4 * i + 3)]
    t = thread("t1", *messages)
    now = T0 + timedelta(minutes=50)
    assert exchange_replies(t, IDENTITY) == 0  # each turn is a new counterpart
    reason = loop_guard(snapshot(t), t, IDENTITY, policy, now)
    assert reason == ("reply budget: 12 bot replies in this thread in the last hour "
                      "(accounts taking turns?)")
    assert loop_guard(snapshot(t), t, IDENTITY, policy, now + timedelta(hours=1)) is None
