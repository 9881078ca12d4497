"""GitHub's change signals, pure parts: how watched repositories are packed into search
queries (GitHub refuses a query over 256 characters: https://docs.github.com/en/
search-github/getting-started-with-searching-on-github/troubleshooting-search-queries),
and which notifications are about a watched pull request."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from livereview.core.model import MRKey
from livereview.hosts.github.poll import MAX_QUERY, notices, search_batches
from livereview.hosts.payload import json_objects
from livereview.sandbox.github.search import SearchError, search
from livereview.sandbox.github.state import FakeGitHub

SINCE = datetime(2026, 11, 27, 6, 0, 0, tzinfo=UTC)
NAME = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}", fullmatch=True)
REPO = st.builds(lambda owner, name: f"{owner}/{name}", NAME,
                 st.from_regex(r"[A-Za-z0-9._-]{1,100}", fullmatch=True))


@given(st.lists(REPO, unique=True, max_size=60))
def test_every_repo_is_in_exactly_one_query_and_no_query_is_too_long(repos: list[str]
                                                                      ) -> None:
    batches = search_batches(tuple(repos), SINCE)
    assert [r for _, batch in batches for r in batch] == repos
    for query, batch in batches:
        assert len(query) <= MAX_QUERY
        assert query.split()[:len(batch)] == [f"repo:{r}" for r in batch]
        assert query.endswith("is:pr is:open updated:>=2026-11-27T06:00:00Z")


def test_the_fake_refuses_what_github_refuses_and_finds_what_the_batches_ask_for() -> None:
    fake = FakeGitHub()
    repos = [f"acme/service-{n:03d}" for n in range(40)]
    for repo in repos:
        fake.add_pr(repo, title="Change", author="bob")
    found = {(pr.repo.full_name, pr.number)
             for query, _ in search_batches(tuple(repos), SINCE)
             for pr in search(fake.repos, query)}
    assert found == {(repo, 1) for repo in repos}
    too_long = " ".join(f"repo:{r}" for r in repos)
    with pytest.raises(SearchError, match="256"):
        search(fake.repos, too_long)


def test_only_pull_requests_of_watched_repos_are_announced() -> None:
    fake = FakeGitHub()
    fake.add_user("alice")
    pr = fake.add_pr("acme/widgets", title="Lock", author="bob")
    other = fake.add_pr("acme/elsewhere", title="Other", author="bob")
    issue = fake.add_issue("acme/widgets", title="A bug", author="bob")
    for repo, number in (("acme/widgets", pr), ("acme/elsewhere", other),
                         ("acme/widgets", issue)):
        fake.add_issue_comment(repo, number, author="alice", body="@livereview look")
    items = json_objects(fake.notifications_of("livereview"), "GET /notifications")
    found = notices(items, "gh", {"acme/widgets": "Acme/Widgets"})
    assert [(n.key, n.reason) for n in found] == [(MRKey("gh", "Acme/Widgets", pr),
                                                   "mention")]
