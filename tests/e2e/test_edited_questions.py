"""Edited questions (core/edits.py) on each host, through `livereview once`: an answered
question edited to ask something new gets one new answer marked as answering the edit; a
cosmetic edit gets none; the cap stops an edit loop."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from livereview.core.model import EDIT_SUFFIX
from livereview.core.triggers import replied_to
from livereview.hosts.bitbucket_server.payloads import incoming
from livereview.reply.compose import EDITED_LEAD
from livereview.sandbox.gitlab.model import JSON
from tests.e2e import bitbucket_cloud_sandbox as cloud
from tests.e2e import test_bitbucket_server_once as dc
from tests.e2e.conftest import GITHUB_REPO, PROJECT, GitHubSandbox, Sandbox

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


# ---- GitHub (issue and review comments), Bitbucket Cloud, Bitbucket Data Center ----------------
def _lead(body: str) -> str:
    """The answer's first line after the quote of the question an unthreaded host's reply
    starts with (GitHub's conversation tab)."""
    return next(line for line in body.splitlines() if line and not line.startswith(">"))


def _bot_answers(bodies: list[str]) -> list[str]:
    """The bot's answers (not its acknowledgements), oldest first: one question per test."""
    return [b for b in bodies if replied_to(b)]


@pytest.fixture
def bb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[cloud.BitbucketSandbox]:
    yield from cloud.sandbox(tmp_path, monkeypatch, access_token=False)


@pytest.fixture
def bbs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dc.BitbucketSandbox]:
    yield from dc._sandbox(tmp_path, monkeypatch, reactions=True)


def _flow(once: Callable[[], int], answers: Callable[[], list[str]],
          edit: Callable[[str], object], prompts: Callable[[], str]) -> None:
    """Answered; a cosmetic edit: nothing; an edit that asks more: one marked answer, once."""
    assert once() == 0
    assert len(answers()) == 1
    edit("@LiveReview, is this lock needed??")
    assert once() == 0
    assert len(answers()) == 1
    edit(NEW_QUESTION)
    assert once() == 0
    assert once() == 0
    first, second = answers()
    assert _lead(second) == EDITED_LEAD and _lead(first) != EDITED_LEAD
    assert "for writes as well as reads" in prompts()


def test_github_edited_issue_comment_gets_one_answer_to_the_edit(gh: GitHubSandbox) -> None:
    comment = gh.comment(QUESTION)
    _flow(gh.once, lambda: _bot_answers([c["body"] for c in gh.github.comments_by("livereview")]),
          lambda body: gh.github.edit_comment(GITHUB_REPO, "issue", comment["id"], body),
          lambda: gh.llm.llm.prompts[-1][-1]["content"])


def test_github_edited_review_comment_gets_one_answer_to_the_edit(gh: GitHubSandbox) -> None:
    comment = gh.review_comment(QUESTION)
    _flow(gh.once, lambda: _bot_answers([c["body"] for c in gh.github.comments_by("livereview")]),
          lambda body: gh.github.edit_comment(GITHUB_REPO, "review", comment["id"], body),
          lambda: gh.llm.llm.prompts[-1][-1]["content"])


def test_bitbucket_cloud_edited_comment_gets_one_answer_to_the_edit(
        bb: cloud.BitbucketSandbox) -> None:
    comment = bb.comment(QUESTION)
    _flow(bb.once, lambda: _bot_answers([c["content"]["raw"]
                                         for c in bb.bitbucket.comments_by(bb.bot)]),
          lambda body: bb.bitbucket.edit_comment(cloud.REPO, bb.number, comment["id"], body),
          lambda: bb.llm.llm.prompts[-1][-1]["content"])


def test_bitbucket_data_center_edited_comment_gets_one_answer_to_the_edit(
        bbs: dc.BitbucketSandbox) -> None:
    comment = bbs.comment(QUESTION)
    _flow(bbs.once, lambda: _bot_answers([incoming(str(c["text"]))
                                          for c in bbs.fake.comments_by("livereview")]),
          lambda body: bbs.fake.edit_comment(dc.REPO, bbs.pr, comment["id"], body),
          lambda: bbs.llm.llm.prompts[-1][-1]["content"])
