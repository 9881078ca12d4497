"""`livereview once` (and `check`) against the fake Bitbucket Cloud and the fake LLM: what
people see on the pull request. Bitbucket Cloud has no reactions, so a question gets a short
acknowledging reply first, then the answer, both in its thread."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from livereview.cli.commands import main
from tests.databases import query
from tests.e2e.bitbucket_cloud_sandbox import REPO, SECRET, TOKEN_ENV, BitbucketSandbox, sandbox
from tests.e2e.conftest import retries_due


@pytest.fixture
def bb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BitbucketSandbox]:
    yield from sandbox(tmp_path, monkeypatch, access_token=False)


@pytest.fixture
def bb_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BitbucketSandbox]:
    yield from sandbox(tmp_path, monkeypatch, access_token=True)


def test_a_mention_on_a_line_gets_an_ack_then_the_answer_in_its_thread(
        bb: BitbucketSandbox) -> None:
    question = bb.inline("@livereview why hold the lock for a read?")
    assert bb.once() == 0
    asked, ack, answer = bb.thread(question["id"])
    assert asked["id"] == question["id"]
    assert ack["content"]["raw"].startswith("👀 Looking into this…")
    assert bb.acks_of(question["id"]) == [ack] and bb.answers_to(question["id"]) == [answer]
    for reply in (ack, answer):  # replies in the thread, where the question is
        assert reply["parent"]["id"] == question["id"]
        assert reply["inline"]["path"] == "src/cache.py"
    assert "sandbox answer engine" in answer["content"]["raw"]
    prompt = bb.llm.llm.prompts[0][-1]["content"]
    assert "Guard the cache with a lock" in prompt and "file: src/cache.py, line 9" in prompt
    assert re.search(r">>\s+9 \+\s+return cache.get\(key\)", prompt), prompt


def test_a_mention_picked_from_the_autocomplete_reaches_the_bot(bb: BitbucketSandbox) -> None:
    """Bitbucket stores it as `@{account_id}`: it reads as `@livereview`."""
    account = bb.bitbucket.account("livereview").account_id
    question = bb.comment(f"@{{{account}}} is this lock needed?")
    assert bb.once() == 0
    assert len(bb.acks_of(question["id"])) == 1 and len(bb.answers_to(question["id"])) == 1
    assert "@livereview is this lock needed?" in bb.llm.llm.prompts[0][-1]["content"]


def test_exactly_once_across_a_restart(bb: BitbucketSandbox) -> None:
    general = bb.comment("@livereview is this lock needed?")
    inline = bb.inline("@livereview and this line?")
    assert bb.once() == 0
    assert bb.once() == 0
    for question in (general, inline):
        assert len(bb.acks_of(question["id"])) == 1
        assert len(bb.answers_to(question["id"])) == 1
    assert len(bb.bitbucket.comments_by("livereview")) == 4
    assert len(bb.llm.llm.prompts) == 2


def test_a_reply_in_the_bots_thread_without_a_mention_is_answered(bb: BitbucketSandbox) -> None:
    question = bb.inline("@livereview why hold the lock for a read?")
    assert bb.once() == 0
    follow_up = bb.comment("But reads are atomic in CPython, no?", parent=question["id"])
    assert bb.once() == 0
    [answer] = bb.answers_to(follow_up["id"])
    assert answer["parent"]["id"] == question["id"]  # in the same thread
    assert "you (livereview)" in bb.llm.llm.prompts[-1][-1]["content"]
    assert len(bb.bitbucket.comments_by("livereview")) == 4  # two acks, two answers


def test_the_bot_answers_neither_itself_nor_another_bot(bb: BitbucketSandbox) -> None:
    bb.bitbucket.add_access_token("ci-secret", "CI Pipeline")
    bb.comment("@livereview the build passed.", author="CI Pipeline")
    bb.comment("Note to self: @livereview", author="livereview")
    bb.bitbucket.add_impostor("livereview")  # a person may take the bot's nickname…
    impostor = bb.comment("@livereview is this safe?", author="livereview#2")
    assert bb.once() == 0
    # …and is answered like anyone else, not taken for the bot.
    assert len(bb.answers_to(impostor["id"])) == 1
    assert len(bb.bitbucket.comments_by("livereview")) == 3  # the note, one ack, one answer
    assert len(bb.llm.llm.prompts) == 1


def test_a_429_is_waited_out(bb: BitbucketSandbox) -> None:
    question = bb.inline("@livereview why hold the lock for a read?")
    bb.bitbucket.inject_fault("POST", r"/comments$", status=429,
                              headers={"Retry-After": "1"},
                              body='{"type": "error", "error": {"message": '
                                   '"Rate limit for this resource has been exceeded"}}')
    started = time.monotonic()
    assert bb.once() == 0
    assert time.monotonic() - started >= 0.9
    assert len(bb.acks_of(question["id"])) == 1 and len(bb.answers_to(question["id"])) == 1
    posts = [r for r in bb.bitbucket.requests if r[0] == "POST" and r[1].endswith("/comments")]
    assert len(posts) == 3  # the refused one, then the ack and the answer


def test_an_answer_posted_but_lost_is_adopted_not_posted_again(
        bb: BitbucketSandbox, tmp_path: Path) -> None:
    question = bb.comment("@livereview is this lock needed?")
    bb.config.write_text(bb.config.read_text().replace(
        "backfill_hours", "retry_base_seconds = 0.05\nbackfill_hours"))
    bb.bitbucket.inject_fault("POST", r"/comments$", status=0, after_handling=True, times=2)
    bb.once()  # the ack and the answer both reach Bitbucket; neither answer comes back
    assert len(bb.acks_of(question["id"])) == 1
    retries_due(bb.db)
    assert bb.once() == 0
    bb.once()
    assert len(bb.acks_of(question["id"])) == 1
    assert len(bb.answers_to(question["id"])) == 1
    assert query(bb.db, "SELECT state FROM reply_jobs") == [("posted",)]


def test_an_access_token_answers_as_its_bot_user_once_across_restarts(
        bb_token: BitbucketSandbox) -> None:
    question = bb_token.inline("@livereview why hold the lock for a read?")
    assert bb_token.once() == 0
    follow_up = bb_token.comment("And for writes?", parent=question["id"])
    assert bb_token.once() == 0
    assert bb_token.once() == 0
    for asked in (question, follow_up):
        assert len(bb_token.acks_of(asked["id"])) == 1
        assert len(bb_token.answers_to(asked["id"])) == 1
    bot = bb_token.bitbucket.comments_by("livereview-bot")
    assert {c["user"]["type"] for c in bot} == {"app_user"} and len(bot) == 4


def test_check_says_which_token_it_is_and_what_it_may_do(
        bb: BitbucketSandbox, bb_token: BitbucketSandbox,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(bb.config), "check"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"identity +ok +@livereview \(id \{[0-9a-f-]+\}\)", out), out
    assert re.search(r"token +ok +API token \(Basic auth as livereview\), posts as "
                     r"'livereview'", out), out
    assert re.search(r"may +ok +read pull requests and their comments, answer, "
                     r"acknowledge and approve, read the code", out), out
    # The access token may not read code (no `repository`… but pullrequest:write implies
    # it); give it only pull requests: read, and check names what is missing.
    bb_token.bitbucket.credentials[SECRET].scopes = ("pullrequest",)
    assert main(["--config", str(bb_token.config), "check"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"identity +ok +@livereview-bot \(id access-token:livereview-bot\)", out)
    assert re.search(r"token +ok +repository access token \(Bearer\), posts as its own bot "
                     r"user 'livereview-bot'", out), out
    assert re.search(r"may +FAIL +cannot answer, acknowledge and approve \(needs Pull "
                     r"requests: Write\) — scopes: pullrequest, repository", out), out
    assert SECRET not in out


def test_check_with_a_rejected_token_says_which_kind_it_needs(
        bb: BitbucketSandbox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(TOKEN_ENV, "not-the-token")
    assert main(["--config", str(bb.config), "check"]) == 1
    out = capsys.readouterr().out
    assert "token rejected (401)" in out and "with login: an API token" in out
    assert REPO not in out.split("identity", 1)[1].split("\n", 1)[0]


def test_livereview_resolve_on_a_line_answers_and_resolves_its_thread(
        bb: BitbucketSandbox) -> None:
    question = bb.inline("I renamed it as you said. @livereview resolve")
    general = bb.comment("@livereview resolve")  # Bitbucket resolves threads on code only
    assert bb.once() == 0
    assert len(bb.answers_to(question["id"])) == 1 and len(bb.answers_to(general["id"])) == 1
    assert bb.bitbucket.is_resolved(REPO, bb.number, question["id"])
    assert not bb.bitbucket.is_resolved(REPO, bb.number, general["id"])
