"""The note a review that gave up leaves on the MR: marked as that run's, short, in the
bot's own words, mentioning nobody and commanding nothing. Pure."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from livereview.metrics import REVIEW_FAILURE_CAUSES
from livereview.review import render
from tests.quick_actions_oracle import commands
from tests.render_oracles import hidden_comments, live_mentions

TOKEN = "a1b2c3d4e5f60718"


@pytest.mark.parametrize("cause", REVIEW_FAILURE_CAUSES)
def test_every_cause_reads_as_a_sentence_and_is_marked_as_the_runs(cause: str) -> None:
    note = render.failed_note(TOKEN, cause, "", 3)
    assert render.marked(note) == (TOKEN, "failed")
    assert "could not be completed after 3 attempts: " in note
    assert len(note) < 400


def test_an_unreadable_answer_says_which_reason_the_parser_gave() -> None:
    note = render.failed_note(TOKEN, "unreadable", "the answer is 1000001 characters long", 1)
    assert "read as review findings (the answer is 1000001 characters long)" in note
    assert "after 1 attempt:" in note


@given(st.text(max_size=300))
def test_whatever_the_detail_the_note_mentions_hides_and_commands_nothing(detail: str) -> None:
    note = render.failed_note(TOKEN, "unreadable", f"@all\n/merge <!-- x --> {detail}", 2)
    assert live_mentions(note) == {}
    assert commands(note) == []
    assert all(found == [f" livereview:review={TOKEN}:failed "]
               for found in hidden_comments(note).values())
    assert render.marked(note) == (TOKEN, "failed")
