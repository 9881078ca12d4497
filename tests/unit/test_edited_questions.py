"""Edited questions (core/edits.py): which edits ask something new, and the requests they earn."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from livereview.core.edits import changes_question, digest, edit_requests, normalise
from livereview.core.model import EDIT_SUFFIX, JobReason, Message, Policy, Snapshot
from livereview.core.triggers import bot_replies, replied_to, reply_marker
from livereview.sync.diff import diff
from tests.factories import ALICE, BOT, IDENTITY, T0, msg, snapshot, thread

POLICY = Policy(aliases=("@livereview",), max_edit_answers=2)
BASELINE = T0 - timedelta(hours=24)
QUESTION = "@livereview why is the cache not locked here?"
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10)


@pytest.mark.parametrize(("before", "after"), [
    (QUESTION, QUESTION.upper()),
    (QUESTION, "  @livereview   why is the cache\nnot locked here ?? "),
    (QUESTION, "@livereview, why is the cache not locked here!"),
    ("@livereview why is teh cache not locked?", "@livereview why is the cache not locked?"),
    ("@livereview does it recieve the lock?", "@livereview does it receive the lock?"),
    ("@livereview what about the cahce lokc?", "@livereview what about the cache lock?"),
])
def test_whitespace_case_punctuation_and_a_small_typo_fix_are_cosmetic(before: str,
                                                                        after: str) -> None:
    assert not changes_question(before, after)


@pytest.mark.parametrize(("before", "after"), [
    ("@livereview is this safe?", "@livereview is this unsafe?"),
    ("@livereview what about line 10?", "@livereview what about line 12?"),
    ("@livereview is it locked?", "@livereview is it not locked?"),
    ("@livereview is it locked?", "@livereview it is locked?"),
    (QUESTION, "@livereview why is the queue not locked here?"),
    ("@livereview is this fine", "@livereview is that fine"),
    ("@livereview recieve teh lokc", "@livereview receive the lock"),
])
def test_an_edit_that_changes_a_word_number_or_order_changes_the_question(before: str,
                                                                         after: str) -> None:
    assert changes_question(before, after)


@given(st.text(max_size=200))
def test_normalising_twice_is_normalising_once(text: str) -> None:
    assert normalise(normalise(text)) == normalise(text)


@given(st.lists(WORDS, min_size=1, max_size=12), st.sampled_from(["  ", "\n", "\t", " . "]),
       st.booleans())
def test_respacing_repunctuating_or_recasing_never_changes_the_question(
        words: list[str], gap: str, upper: bool) -> None:
    text = " ".join(words) + "?"
    edited = gap.join(w.upper() if upper else w for w in words) + "!"
    assert not changes_question(text, edited)
    assert digest(text) == digest(edited)


@given(st.lists(WORDS, min_size=1, max_size=12), WORDS, st.integers(min_value=0))
def test_adding_a_word_always_changes_the_question(words: list[str], extra: str,
                                                    where: int) -> None:
    at = where % (len(words) + 1)
    edited = [*words[:at], extra, *words[at:]]
    assert changes_question(" ".join(words), " ".join(edited))


@given(st.lists(WORDS, min_size=1, max_size=12), st.text(max_size=60))
def test_the_rule_is_symmetric(words: list[str], other: str) -> None:
    text = " ".join(words)
    assert changes_question(text, other) == changes_question(other, text)


@given(st.lists(WORDS, min_size=1, max_size=8), st.data())
def test_swapping_two_letters_inside_a_long_word_is_a_typo(words: list[str],
                                                           data: st.DataObject) -> None:
    word = data.draw(st.text(alphabet="abcdefghij", min_size=4, max_size=12))
    i = data.draw(st.integers(min_value=1, max_value=len(word) - 2))
    typo = word[:i] + word[i + 1] + word[i] + word[i + 2:]
    assert not changes_question(" ".join([*words, typo]), " ".join([*words, word]))


def _answered(body: str = QUESTION) -> Snapshot:
    answer = msg("n2", BOT, f"Because…\n\n{reply_marker('n1')}", at=1)
    return snapshot(thread("t1", msg("n1", ALICE, body), answer))


def _edited(stored: Snapshot, body: str, *extra: Message) -> Snapshot:
    question = replace(stored.threads[0].messages[0], body=body,
                       updated_at=T0 + timedelta(minutes=5))
    rest = stored.threads[0].messages[1:]
    return replace(stored, threads=(replace(stored.threads[0],
                                            messages=(question, *rest, *extra)),))


def _decide(stored: Snapshot, fresh: Snapshot, policy: Policy = POLICY) -> list[str]:
    decided = edit_requests(diff(stored, fresh), stored, fresh, IDENTITY, policy, BASELINE)
    return [r.key for r in decided.requests] + [f"capped:{m}" for m in decided.capped]


def test_an_answered_question_edited_to_ask_something_new_gets_one_request_keyed_by_content(
        ) -> None:
    stored = _answered()
    new = "@livereview why is the queue not locked here?"
    decided = edit_requests(diff(stored, _edited(stored, new)), stored,
                            _edited(stored, new), IDENTITY, POLICY, BASELINE)
    (request,) = decided.requests
    assert request.reason is JobReason.EDITED_QUESTION
    assert request.key.endswith(f":n1{EDIT_SUFFIX}{digest(new)}")
    assert request.target == f"n1{EDIT_SUFFIX}{digest(new)}"


def test_a_cosmetic_edit_of_an_answered_question_earns_nothing() -> None:
    stored = _answered()
    assert _decide(stored, _edited(stored, QUESTION.replace("the", "teh") + "!!")) == []


def test_a_question_not_answered_yet_is_left_to_its_own_job() -> None:
    stored = snapshot(thread("t1", msg("n1", ALICE, QUESTION)))
    assert _decide(stored, _edited(stored, "@livereview something else entirely?")) == []


def test_an_edit_the_bot_already_answered_is_not_asked_again() -> None:
    stored = _answered()
    new = "@livereview why is the queue not locked here?"
    again = msg("n3", BOT, f"Answering…\n\n{reply_marker(f'n1{EDIT_SUFFIX}{digest(new)}')}",
                at=6)
    assert _decide(stored, _edited(stored, new, again)) == []


def test_edits_past_the_cap_are_not_answered_but_counted() -> None:
    stored = _answered()
    answers = tuple(msg(f"a{i}", BOT, f"…\n\n{reply_marker(f'n1{EDIT_SUFFIX}{v}')}", at=2 + i)
                    for i, v in enumerate(("aaaa", "bbbb")))
    fresh = _edited(stored, "@livereview and the queue, is it locked?", *answers)
    assert _decide(stored, fresh) == ["capped:n1"]
    assert _decide(stored, fresh, replace(POLICY, max_edit_answers=3)) != ["capped:n1"]


def test_an_edit_by_the_bot_or_another_bot_is_never_a_question() -> None:
    stored = snapshot(thread("t1", msg("n1", BOT, "Because…"),
                             msg("n2", BOT, f"x\n\n{reply_marker('n1')}")))
    assert _decide(stored, _edited(stored, "Something else entirely now")) == []


def test_the_answer_to_an_edit_still_counts_as_answering_the_message() -> None:
    marker = reply_marker(f"n1{EDIT_SUFFIX}0123abcd")
    assert replied_to(marker) == f"n1{EDIT_SUFFIX}0123abcd"
    snap = snapshot(thread("t1", msg("n1"), msg("n2", BOT, f"x\n\n{marker}")))
    assert set(bot_replies(snap, IDENTITY)) == {"n1"}
