"""Review requested (core/review_requests.py), through `livereview once` (a fresh process
each time: a restart between every poll): adding the bot as a reviewer starts one review;
re-requesting starts another; the bot itself, another bot or a disabled setting start none."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.databases import query
from tests.e2e import bitbucket_cloud_sandbox as cloud
from tests.e2e import test_bitbucket_server_once as dc
from tests.e2e.conftest import GITHUB_REPO, PROJECT, GitHubSandbox, Sandbox


def runs(db: Any) -> list[tuple[Any, ...]]:
    return query(db, "SELECT trigger, state FROM review_runs ORDER BY id")


def test_gitlab_adding_the_bot_as_reviewer_starts_one_review_and_a_rerequest_another(
        sandbox: Sandbox) -> None:
    gitlab, iid = sandbox.gitlab, sandbox.iid
    gitlab.set_reviewers(PROJECT, iid, ["livereview"], by="alice")
    assert sandbox.once() == 0
    assert runs(sandbox.db) == [("requested", "done")]
    assert sandbox.once() == 0  # seen again: nothing more
    gitlab.set_reviewers(PROJECT, iid, ["livereview", "bob"], by="alice")  # others: no
    assert sandbox.once() == 0
    assert len(runs(sandbox.db)) == 1
    gitlab.set_reviewers(PROJECT, iid, ["bob"], by="alice")
    assert sandbox.once() == 0
    gitlab.set_reviewers(PROJECT, iid, ["bob", "livereview"], by="alice")
    assert sandbox.once() == 0
    assert runs(sandbox.db) == [("requested", "done")] * 2
    gitlab.rerequest_review(PROJECT, iid, "livereview", by="alice")  # between two polls
    assert sandbox.once() == 0
    assert runs(sandbox.db) == [("requested", "done")] * 3
    events = query(sandbox.db, "SELECT detail FROM events WHERE kind = 'review_requested' "
                               "ORDER BY id")
    assert all(str(d).startswith(("@livereview by @alice at ", "@bob by @alice at "))
               for (d,) in events), events


def test_gitlab_a_request_by_the_bot_or_another_bot_starts_nothing(sandbox: Sandbox) -> None:
    sandbox.gitlab.add_user("renovate-bot", bot=True)
    sandbox.gitlab.set_reviewers(PROJECT, sandbox.iid, ["livereview"], by="renovate-bot")
    assert sandbox.once() == 0
    sandbox.gitlab.rerequest_review(PROJECT, sandbox.iid, "livereview", by="livereview")
    assert sandbox.once() == 0
    assert runs(sandbox.db) == []


def test_gitlab_on_review_request_false_starts_nothing(sandbox: Sandbox) -> None:
    sandbox.config.write_text(sandbox.config.read_text()
                              + "\n[review]\non_review_request = false\n")
    sandbox.gitlab.set_reviewers(PROJECT, sandbox.iid, ["livereview"], by="alice")
    assert sandbox.once() == 0
    assert runs(sandbox.db) == []


def test_github_requesting_the_bots_review_starts_one_review_and_asking_again_another(
        gh: GitHubSandbox) -> None:
    github, number = gh.github, gh.number
    github.request_review(GITHUB_REPO, number, reviewer="livereview")
    assert gh.once() == 0
    assert runs(gh.db) == [("requested", "done")]
    # GitHub takes a reviewer off `requested_reviewers` once they reviewed: the bot was.
    assert github.find_issue(GITHUB_REPO, number, pull=True).requested_reviewers == []
    assert gh.once() == 0
    assert len(runs(gh.db)) == 1
    # GitHub's updated_at has whole seconds, and a person re-requests later than the same
    # second: the fake's clock says so, however fast this machine ran the steps above.
    later = github.now() + timedelta(seconds=5)
    github._clock = lambda: later  # the fake's clock, as its own tests set it
    github.request_review(GITHUB_REPO, number, reviewer="livereview")  # re-request
    assert gh.once() == 0
    assert runs(gh.db) == [("requested", "done")] * 2
    github.request_review(GITHUB_REPO, number, reviewer="bob")  # someone else: nothing
    assert gh.once() == 0
    assert len(runs(gh.db)) == 2


@pytest.fixture
def bb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[cloud.BitbucketSandbox]:
    yield from cloud.sandbox(tmp_path, monkeypatch, access_token=False)


@pytest.fixture
def bbs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dc.BitbucketSandbox]:
    yield from dc._sandbox(tmp_path, monkeypatch, reactions=True)


def test_bitbucket_cloud_adding_the_bot_to_reviewers_starts_one_review_and_readding_another(
        bb: cloud.BitbucketSandbox) -> None:
    fake, number = bb.bitbucket, bb.number
    fake.set_reviewers(cloud.REPO, number, [bb.bot])
    assert bb.once() == 0
    assert runs(bb.db) == [("requested", "done")]
    assert bb.once() == 0
    fake.set_reviewers(cloud.REPO, number, [bb.bot, "alice"])  # someone else: nothing
    assert bb.once() == 0
    assert len(runs(bb.db)) == 1
    fake.set_reviewers(cloud.REPO, number, ["alice"])
    assert bb.once() == 0
    fake.set_reviewers(cloud.REPO, number, ["alice", bb.bot])
    assert bb.once() == 0
    assert runs(bb.db) == [("requested", "done")] * 2


def test_bitbucket_data_center_adding_the_bot_as_reviewer_starts_one_review_and_readding_another(
        bbs: dc.BitbucketSandbox) -> None:
    fake, pr = bbs.fake, bbs.pr
    fake.add_reviewer(dc.REPO, pr, "livereview", by="alice")
    assert bbs.once() == 0
    assert runs(bbs.db) == [("requested", "done")]
    assert bbs.once() == 0
    fake.add_reviewer(dc.REPO, pr, "alice")  # someone else: nothing
    assert bbs.once() == 0
    assert len(runs(bbs.db)) == 1
    fake.remove_reviewer(dc.REPO, pr, "livereview", by="alice")
    assert bbs.once() == 0
    fake.add_reviewer(dc.REPO, pr, "livereview", by="alice")
    assert bbs.once() == 0
    assert runs(bbs.db) == [("requested", "done")] * 2
