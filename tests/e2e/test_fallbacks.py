"""The fallbacks of docs/DESIGN.md §4 on every host: a question deleted before its answer
is posted gets a general comment quoting it; a bot that may not react, or whose reaction the
host does not offer, still acknowledges (by a short reply) and answers.

Each host's fake answers as the host does: GitHub 404s a reply to a deleted review comment
(https://docs.github.com/en/rest/pulls/comments#create-a-reply-for-a-review-comment, "404
Resource not found"); Data Center 404s a reply whose parent is gone and answers a missing
permission with 401 AuthorisationException (its REST reference lists no 403); its
comment-likes API answers an emoticon outside its picker with 400."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from livereview.app.daemon import App
from livereview.cli.commands import main
from livereview.core.triggers import acked_for, replied_to
from livereview.hosts.bitbucket_server.payloads import incoming
from livereview.metrics import Metrics
from livereview.settings import load
from tests.e2e.bitbucket_cloud_sandbox import BitbucketSandbox as CloudSandbox
from tests.e2e.bitbucket_cloud_sandbox import sandbox as cloud_sandbox
from tests.e2e.conftest import GITHUB_REPO, PROJECT, GitHubSandbox, Sandbox, write_config
from tests.e2e.test_bitbucket_server_once import REPO, BitbucketSandbox, _sandbox
from tests.e2e.test_bitbucket_server_once import write_config as write_bbs_config

DEFUSED = "@\u2060livereview"  # a quoted mention pings nobody


@pytest.fixture
def bbs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BitbucketSandbox]:
    yield from _sandbox(tmp_path, monkeypatch, reactions=True)


@pytest.fixture
def bb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CloudSandbox]:
    yield from cloud_sandbox(tmp_path, monkeypatch, access_token=False)


def with_bot(config: Path, **keys: str) -> None:
    config.write_text(config.read_text() + "\n[bot]\n"
                      + "".join(f'{k} = "{v}"\n' for k, v in keys.items()))


async def poll_then_work(config: Path, meanwhile: object = None) -> App:
    """One cold poll (the jobs are stored), then — after the host changed meanwhile, as the
    test arranges before calling — the jobs run. Returns the closed app for its metrics."""
    app = App.create(load(config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
        if callable(meanwhile):
            meanwhile()
        await app.worker.drain()
    finally:
        await app.close()
    return app


# ---- (a) a deleted parent ------------------------------------------------------------------------
async def test_github_a_review_comment_deleted_before_the_answer_gets_a_pr_comment_quoting_it(
        gh: GitHubSandbox) -> None:
    question = gh.review_comment("@livereview why hold the lock for a read?")
    await poll_then_work(gh.config, lambda: gh.github.delete_comment(
        GITHUB_REPO, "review", question["id"]))
    [answer] = gh.replies_to(f"discussion_r{question['id']}")
    assert answer["issue_url"].endswith(f"/issues/{gh.number}")  # a general PR comment
    assert answer["body"].startswith(f"> {DEFUSED} why hold the lock for a read?\n\n")
    assert len(gh.github.comments_by("livereview")) == 1


async def test_data_center_a_comment_deleted_before_the_answer_gets_a_general_comment_quoting_it(
        bbs: BitbucketSandbox) -> None:
    question = bbs.inline("@livereview why hold the lock for a read?")
    await poll_then_work(bbs.config, lambda: bbs.fake.delete_comment(
        REPO, bbs.pr, question["id"]))
    [answer] = bbs.replies_to(question["id"])
    assert bbs.thread(answer["id"])[0]["id"] == answer["id"]  # a root comment of its own
    assert incoming(answer["text"]).startswith(f"> {DEFUSED} why hold the lock for a read?")
    assert len(bbs.fake.comments_by("livereview")) == 1


async def test_bitbucket_cloud_a_question_gone_from_the_pull_request_gets_a_general_comment(
        bb: CloudSandbox) -> None:
    """Bitbucket Cloud keeps a deleted comment as a `deleted: true` placeholder a reply can
    still hang under (the fake's rule); a comment that is gone altogether is Bitbucket's
    404 "Resource not found" on the reply — answered on the pull request instead."""
    question = bb.comment("@livereview is this lock needed?")
    await poll_then_work(bb.config, lambda: bb.bitbucket.inject_fault(
        "POST", r"/pullrequests/\d+/comments$", status=404, times=2,
        body='{"type": "error", "error": {"message": "Resource not found"}}'))
    [answer] = bb.answers_to(question["id"])
    assert answer.get("parent") is None
    assert answer["content"]["raw"].startswith(f"> {DEFUSED} is this lock needed?\n\n")


# ---- (b) may not react ------------------------------------------------------------
async def test_github_a_bot_that_may_not_react_acks_by_a_reply_and_answers(
        gh: GitHubSandbox) -> None:
    question = gh.review_comment("@livereview why hold the lock for a read?")
    gh.github.inject_fault("POST", r"/comments/\d+/reactions$", status=403, body=(
        '{"message": "Resource not accessible by personal access token", '
        '"documentation_url": "https://docs.github.com/rest/reactions/reactions"}'))
    app = await poll_then_work(gh.config)
    bot = gh.github.comments_by("livereview")
    assert [acked_for(c["body"]) for c in bot].count(f"discussion_r{question['id']}") == 1
    assert len(gh.replies_to(f"discussion_r{question['id']}")) == 1
    assert gh.github.reactions_on(GITHUB_REPO, "review", question["id"]) == []
    assert app.metrics.acks.labels("github", "ok")._value.get() == 1


async def test_data_center_a_bot_that_may_not_react_acks_by_a_reply_and_answers(
        bbs: BitbucketSandbox) -> None:
    question = bbs.inline("@livereview why hold the lock for a read?")
    bbs.fake.inject_fault("PUT", r"/comment-likes/", status=401, body=(
        '{"errors": [{"context": null, "message": "You are not permitted to access this '
        'resource", "exceptionName": "com.atlassian.bitbucket.AuthorisationException"}]}'))
    await poll_then_work(bbs.config)
    [ack] = bbs.acks_for(question["id"])
    [answer] = bbs.replies_to(question["id"])
    assert [c["id"] for c in bbs.thread(question["id"])] == [
        question["id"], ack["id"], answer["id"]]


async def test_gitlab_a_bot_that_may_not_award_emoji_acks_by_a_reply_and_answers(
        sandbox: Sandbox) -> None:
    """AwardEmojis::AddService answers a user who may not award with 403 (`status:
    :forbidden`, app/services/award_emojis/add_service.rb)."""
    question = sandbox.note("@livereview is this lock needed?")
    sandbox.gitlab.inject_fault("POST", r"/notes/\d+/award_emoji$", status=403,
                                body='{"message": "403 Forbidden"}')
    await poll_then_work(sandbox.config)
    notes = sandbox.bot_notes()
    assert [acked_for(str(n["body"])) for n in notes].count(str(question["id"])) == 1
    assert [replied_to(str(n["body"])) for n in notes].count(str(question["id"])) == 1
    assert sandbox.gitlab.awards_on(PROJECT, sandbox.iid, question["id"]) == []


# ---- (c) a reaction the host does not offer ----------------------------------------------------
async def test_data_center_refusing_the_reaction_acks_by_replies_and_asks_only_once(
        bbs: BitbucketSandbox) -> None:
    # One job at a time: the second question is asked after the refusal is known.
    write_bbs_config(bbs.config, bbs.server.url, bbs.llm.url, bbs.db, max_concurrent_jobs=1)
    with_bot(bbs.config, ack_reaction="eyes")  # not in Data Center's picker
    first = bbs.inline("@livereview why hold the lock for a read?")
    second = bbs.comment("@livereview and is the cache bounded?")
    with structlog.testing.capture_logs() as logs:
        await poll_then_work(bbs.config)
    for question in (first, second):
        assert len(bbs.acks_for(question["id"])) == 1
        assert len(bbs.replies_to(question["id"])) == 1
        assert bbs.fake.reactions_on(REPO, bbs.pr, question["id"]) == []
    tried = [p for m, p, _ in bbs.fake.requests if m == "PUT" and "/reactions/" in p]
    assert len(tried) == 1 and tried[0].endswith("/reactions/eyes")  # refused once, remembered
    refused = [e for e in logs if e["event"] == "ack_reaction_refused"]
    assert len(refused) == 1 and refused[0]["reaction"] == "eyes"


async def test_github_a_reaction_outside_its_eight_is_never_asked_for(gh: GitHubSandbox) -> None:
    with_bot(gh.config, ack_reaction="thinking_face")
    question = gh.comment("@livereview is this lock needed?")
    await poll_then_work(gh.config)
    bot = gh.github.comments_by("livereview")
    assert [acked_for(c["body"]) for c in bot].count(f"issuecomment-{question['id']}") == 1
    assert len(gh.replies_to(f"issuecomment-{question['id']}")) == 1
    assert not any("/reactions" in p for _, p, _ in gh.github.requests)


async def test_gitlab_refusing_an_emoji_name_acks_by_replies_and_asks_only_once(
        sandbox: Sandbox) -> None:
    """GitLab answers a name outside its emoji set with `not_found!("Award Emoji …")`
    (lib/api/award_emoji.rb): a 404 while the note is there."""
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 max_concurrent_jobs=1)  # the second question is asked once the first is
    with_bot(sandbox.config, ack_reaction="looking_into_it")
    first = sandbox.note("@livereview is this lock needed?")
    second = sandbox.note("@livereview and is the cache bounded?")
    sandbox.gitlab.inject_fault("POST", r"/notes/\d+/award_emoji$", status=404, body=(
        '{"message": "404 Award Emoji Name is not a valid emoji name Not Found"}'))
    await poll_then_work(sandbox.config)
    notes = sandbox.bot_notes()
    for question in (first, second):
        assert [acked_for(str(n["body"])) for n in notes].count(str(question["id"])) == 1
        assert [replied_to(str(n["body"])) for n in notes].count(str(question["id"])) == 1
    awards = [p for m, p, _ in sandbox.gitlab.requests if m == "POST" and "award_emoji" in p]
    assert len(awards) == 1


# ---- (d) check says what will happen; (e) each host's default is one it offers ----------
def test_check_on_data_center_says_a_reaction_it_does_not_offer_becomes_a_reply(
        bbs: BitbucketSandbox, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(bbs.config), "check"]) == 0
    assert re.search(r"acks +ok +'thinking_face' as a reaction on the comment",
                     capsys.readouterr().out)
    with_bot(bbs.config, ack_reaction="eyes")
    assert main(["--config", str(bbs.config), "check"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"acks +ok +reaction 'eyes' is not offered by Bitbucket Data Center \(it "
                     r"offers thumbsup, thumbsdown, heart, thinking_face, laughing\): the ack "
                     r"will be a short reply", out), out
    assert not any(m == "PUT" for m, _, _ in bbs.fake.requests)  # nothing was posted


def test_check_on_github_names_its_default_reaction(
        gh: GitHubSandbox, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(gh.config), "check"]) == 0
    assert re.search(r"acks +ok +'eyes' as a reaction on the comment", capsys.readouterr().out)
    assert not any("/reactions" in p for _, p, _ in gh.github.requests)  # nothing posted


def test_data_center_acks_with_its_own_default_when_none_is_configured(
        bbs: BitbucketSandbox) -> None:
    question = bbs.comment("@livereview is this lock needed?")
    assert bbs.once() == 0
    assert bbs.fake.reactions_on(REPO, bbs.pr, question["id"]) == [
        ("thinking_face", "livereview")]
    assert bbs.acks_for(question["id"]) == []


def test_bitbucket_cloud_check_says_acks_are_replies(
        bb: CloudSandbox, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(bb.config), "check"]) == 0
    assert re.search(r"acks +ok +with a short reply: this host has no comment reactions",
                     capsys.readouterr().out)
