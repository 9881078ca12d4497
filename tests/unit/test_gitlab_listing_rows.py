"""GitLab's listing rows as MRs (hosts/base.py ReadsFromListing; bench figure 16): the row
carries every field a read keeps but the diff refs, which "Get single MR" alone has
(API::Entities::MergeRequestBasic vs API::Entities::MergeRequest; the fake lists MRs the
same way: sandbox/gitlab/payloads.py `mr_json(full=False)`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from dataclasses import replace

import pytest

from livereview.core.model import MergeRequest, RefsNotRead
from livereview.hosts.gitlab import adapter
from livereview.hosts.gitlab.adapter import GitLab
from livereview.hosts.http import HttpClient, RetryPolicy
from livereview.metrics import Metrics
from livereview.reply.diff_refs import with_refs
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab

TOKEN = "glpat-listing-rows-token"
REPO = "acme/widgets"


@pytest.fixture
async def gitlab() -> AsyncIterator[tuple[FakeGitLab, GitLab]]:
    fake = FakeGitLab(token=TOKEN, rate_limit_per_minute=None)
    fake.add_user("alice", "Alice")
    fake.add_user("bob", "Bob")
    fake.add_project(REPO)
    for n in range(3):
        iid = fake.add_mr(REPO, title=f"Guard the cache {n}", author="alice",
                          description=f"Why {n}", files={"a.py": ("a\n", "b\n")})
        fake.set_reviewers(REPO, iid, ["bob"], by="alice")
    with FakeGitLabServer(fake) as server:
        http = HttpClient(base_url=server.url, headers={"PRIVATE-TOKEN": TOKEN},
                          host_type="gitlab", metrics=Metrics(), retry=RetryPolicy(attempts=1))
        host = GitLab("gl", http)
        try:
            yield fake, host
        finally:
            await host.close()


def _paths(fake: FakeGitLab) -> list[str]:
    return [path for _, path, _ in fake.requests]


async def test_a_listing_row_is_the_mr_a_read_of_it_finds_but_for_its_unread_diff_refs(
        gitlab: tuple[FakeGitLab, GitLab]) -> None:
    _, host = gitlab
    rows = await host.list_changed_mrs((REPO,), None)
    assert all(row.mr is not None for row in rows)
    for row in rows:
        assert row.mr is not None
        read = await host.fetch_merge_request(row.mr.key)
        assert (row.mr.base_sha, row.mr.start_sha) == (None, None)  # not read, never ""
        assert not row.mr.refs_read and read.refs_read
        assert replace(row.mr, base_sha=read.base_sha, start_sha=read.start_sha) == read
        with pytest.raises(RefsNotRead):
            row.mr.diff_refs()


async def test_reading_from_a_listing_row_asks_for_the_discussions_alone(
        gitlab: tuple[FakeGitLab, GitLab]) -> None:
    fake, host = gitlab
    [row, *_] = await host.list_changed_mrs((REPO,), None)
    assert row.mr is not None
    fake.requests.clear()
    snapshot = await host.fetch_threads(row.mr)
    assert _paths(fake) == [f"/api/v4/projects/acme%2Fwidgets/merge_requests/{row.iid}"
                            "/discussions"]
    whole = await host.fetch_mr_without_commits(REPO, row.iid)
    assert snapshot == replace(whole, mr=row.mr)


async def test_a_listing_keeps_the_mrs_of_its_first_rows_within_its_bounds(
        gitlab: tuple[FakeGitLab, GitLab], monkeypatch: pytest.MonkeyPatch) -> None:
    """The most recently updated first (the order a sweep reads them in): the rows past
    ROWS_KEPT, or past ROW_TEXT_KEPT characters of text, keep no MR."""
    _, host = gitlab
    monkeypatch.setattr(adapter, "ROWS_KEPT", 2)
    assert [row.mr is not None for row in await host.list_changed_mrs((REPO,), None)] == [
        True, True, False]
    monkeypatch.setattr(adapter, "ROWS_KEPT", 10)
    monkeypatch.setattr(adapter, "ROW_TEXT_KEPT", len("Guard the cache 0Why 0"))
    assert [row.mr is not None for row in await host.list_changed_mrs((REPO,), None)] == [
        True, False, False]


async def test_a_job_on_an_mr_stored_from_its_listing_row_reads_its_diff_refs_first(
        gitlab: tuple[FakeGitLab, GitLab]) -> None:
    fake, host = gitlab
    [row, *_] = await host.list_changed_mrs((REPO,), None)
    assert row.mr is not None
    stored = await host.fetch_threads(row.mr)

    async def step(call: Awaitable[MergeRequest]) -> MergeRequest:
        return await call

    fake.requests.clear()
    read = await with_refs(host, stored, step)
    version = fake.find_mr(REPO, row.iid).versions[-1]
    refs = read.mr.diff_refs()
    assert (refs.base_sha, refs.start_sha, refs.head_sha) == (
        version.base, version.start, version.head)
    assert read.threads == stored.threads and read.commits == stored.commits
    assert len(fake.requests) == 1
    fake.requests.clear()
    assert await with_refs(host, read, step) is read  # read already: nothing asked
    assert fake.requests == []



@pytest.mark.parametrize("odd", [{"title": 42}, {"description": ["not", "text"]},
                                 {"created_at": None}, {"author": {"username": "no id"}},
                                 {"reviewers": [{"id": None, "username": "ghost"}]}])
async def test_a_row_that_cannot_be_an_mr_is_listed_without_one_and_the_others_keep_theirs(
        gitlab: tuple[FakeGitLab, GitLab], odd: dict[str, object]) -> None:
    """The listing needs a row's iid, updated_at and state only: one odd row must not fail
    every MR's listing (its MR is read whole, where its trouble is its own)."""
    fake, host = gitlab
    [_, middle, _] = await host.list_changed_mrs((REPO,), None)

    def garbled(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{**row, **odd} if row["iid"] == middle.iid else row for row in rows]

    fake.rewrite_json("GET", r"/merge_requests$", garbled)
    rows = await host.list_changed_mrs((REPO,), None)
    assert [(row.iid, row.mr is not None) for row in rows] == [
        (row.iid, row.iid != middle.iid) for row in rows]
    assert len(rows) == 3
