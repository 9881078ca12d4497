"""Edited questions (core/edits.py) on each host, through `livereview once`: an answered
question edited to ask something new gets one new answer marked as answering the edit; a
cosmetic edit gets none; the cap stops an edit loop."""

from __future__ import annotations

from livereview.core.model import EDIT_SUFFIX
from livereview.core.triggers import replied_to
from livereview.reply.compose import EDITED_LEAD
from livereview.sandbox.gitlab.model import JSON
from tests.e2e.conftest import PROJECT, Sandbox

QUESTION = "@livereview is this lock needed?"
NEW_QUESTION = "@livereview is this lock needed for writes as well as reads?"


def _answers(bodies: list[str], message_id: object) -> list[str]:
    """The bot's answers to `message_id`, to any version of it, oldest first."""
    return [b for b in bodies
            if (replied_to(b) or "").split(EDIT_SUFFIX)[0] == str(message_id)]


def _gitlab_answers(sandbox: Sandbox, note: JSON) -> list[str]:
    return _answers([str(n["body"]) for n in sandbox.bot_notes()], note["id"])


def _edit(sandbox: Sandbox, note: JSON, body: str) -> None:
    sandbox.gitlab.edit_note(PROJECT, sandbox.iid, int(str(note["id"])), body)


def test_gitlab_an_edit_that_asks_something_new_gets_one_answer_marked_as_such(
        sandbox: Sandbox) -> None:
    note = sandbox.note(QUESTION)
    assert sandbox.once() == 0
    assert len(_gitlab_answers(sandbox, note)) == 1
    _edit(sandbox, note, NEW_QUESTION)
    assert sandbox.once() == 0
    first, second = _gitlab_answers(sandbox, note)
    assert second.startswith(EDITED_LEAD) and not first.startswith(EDITED_LEAD)
    assert "for writes as well as reads" in sandbox.llm.llm.prompts[-1][-1]["content"]
    assert sandbox.once() == 0  # polled again, and after a restart: nothing more
    assert len(_gitlab_answers(sandbox, note)) == 2


def test_gitlab_a_cosmetic_edit_gets_no_new_answer(sandbox: Sandbox) -> None:
    note = sandbox.note(QUESTION)
    assert sandbox.once() == 0
    _edit(sandbox, note, "@LiveReview  is this lock neeedd??")
    assert sandbox.once() == 0
    assert len(_gitlab_answers(sandbox, note)) == 1


def test_gitlab_an_edit_before_the_answer_is_answered_once_on_the_new_text(
        sandbox: Sandbox) -> None:
    note = sandbox.note(QUESTION)
    _edit(sandbox, note, NEW_QUESTION)
    assert sandbox.once() == 0
    [answer] = _gitlab_answers(sandbox, note)
    assert not answer.startswith(EDITED_LEAD)
    assert "for writes as well as reads" in sandbox.llm.llm.prompts[-1][-1]["content"]


def test_gitlab_edits_past_max_edit_answers_are_not_answered(sandbox: Sandbox) -> None:
    sandbox.config.write_text(sandbox.config.read_text() + "\n[bot]\nmax_edit_answers = 2\n")
    note = sandbox.note(QUESTION)
    assert sandbox.once() == 0
    for topic in ("writes", "deletes", "iteration", "pickling"):
        _edit(sandbox, note, f"@livereview is this lock needed for {topic}?")
        assert sandbox.once() == 0
    assert len(_gitlab_answers(sandbox, note)) == 3  # the question, then two edits
