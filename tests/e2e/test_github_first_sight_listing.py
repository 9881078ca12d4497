"""While the first sweep's reads are still going on (no watermark stored yet), the hot cycles
on the fake GitHub search from where this process's first listing began instead of listing
every repository again (sync/watermark.py): at 200 repos the repeated per-repo listings took
most of the request slots from the sweep and from the mentions made meanwhile (bench
figure 2d). Requests are counted on the fake, never timed."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from livereview.core.model import MergeRequest, MRKey, Snapshot
from livereview.store import jobs, state
from livereview.store.engine import StoreError
from livereview.store.leases import INSTANCE
from livereview.sync.poller import HostPoller
from tests.e2e.conftest import BACKSTOP_SECONDS, GITHUB_REPO, GitHubSandbox
from tests.e2e.test_github_active import open_prs, watch

QUIET = [f"acme/quiet-{n}" for n in range(3)]


def listings(gh: GitHubSandbox) -> list[str]:
    """The per-repo PR listings the fake answered (`GET /repos/{owner}/{repo}/pulls`)."""
    return [path for method, path, _ in gh.github.requests
            if method == "GET" and path.endswith("/pulls")]


def searches(gh: GitHubSandbox) -> int:
    return sum(1 for method, path, _ in gh.github.requests
               if (method, path) == ("POST", "/api/graphql"))


def later_on_the_host(gh: GitHubSandbox) -> None:
    """The fake's timestamps have whole seconds: what is written from now on is later."""
    gh.github._clock = lambda: datetime.now(UTC) + timedelta(seconds=2)


async def test_a_mention_made_during_the_first_sweep_is_found_by_a_search_not_by_listing_every_repo_again(  # noqa: E501
        gh: GitHubSandbox, tmp_path: Path) -> None:
    open_prs(gh, QUIET, hours_ago=48)  # older than the backfill: sightings, not reads
    gh.comment("people are on this PR right now")
    app = watch(gh, [GITHUB_REPO, *QUIET], tmp_path)
    gate, host = asyncio.Event(), app.hosts["gh"]
    real_fetch = host.fetch_mr

    async def slow_fetch(repo: str, iid: int,
                         reactions_for: frozenset[str] = frozenset()) -> Snapshot:
        await gate.wait()  # the first sweep's read: thousands of MRs ahead of it
        return await real_fetch(repo, iid, reactions_for)

    host.fetch_mr = slow_fetch  # type: ignore[method-assign]
    try:
        first = (await asyncio.wait_for(app.cycle(cold=True, wait=0), BACKSTOP_SECONDS))["gh"]
        assert first.in_background == 1
        assert sorted(listings(gh)) == sorted(f"/api/v3/repos/{r}/pulls"
                                              for r in [GITHUB_REPO, *QUIET])
        marks = await app.store.run(state.watermark, "gh", INSTANCE,
                                    datetime.now().astimezone())
        assert marks.listed_until is None  # the sweep is not stored yet

        later_on_the_host(gh)
        question = gh.github.add_issue_comment(QUIET[1], 1, author="alice",
                                               body="@livereview is this still needed?")
        gh.github.reset_requests()
        second = (await asyncio.wait_for(app.cycle(wait=0), BACKSTOP_SECONDS))["gh"]
        assert listings(gh) == [] and searches(gh) == 1
        assert second.planned == 1  # the quiet PR the search found

        gate.set()
        await asyncio.wait_for(app.pollers["gh"].caught_up(), BACKSTOP_SECONDS)
        made = await app.store.run(jobs.listing, repo=QUIET[1])
        assert [job.host_message_id for job in made] == [f"issuecomment-{question['id']}"]
    finally:
        gate.set()
        await app.close()


async def test_a_first_sweep_read_that_failed_to_store_makes_the_next_cycle_list_every_repo_again(
        gh: GitHubSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_prs(gh, QUIET, hours_ago=48)
    gh.comment("people are on this PR right now")
    app = watch(gh, [GITHUB_REPO, *QUIET], tmp_path)
    gate, failed = asyncio.Event(), asyncio.Event()
    real = HostPoller.sync_mr

    async def unstorable(self: HostPoller, key: MRKey, baseline: datetime,
                         concessions: frozenset[str] = frozenset(),
                         listed: MergeRequest | None = None) -> tuple[int, int]:
        await gate.wait()
        failed.set()
        raise StoreError("database is locked")  # one transaction's trouble

    monkeypatch.setattr(HostPoller, "sync_mr", unstorable)
    try:
        await asyncio.wait_for(app.cycle(cold=True, wait=0), BACKSTOP_SECONDS)
        gate.set()
        await asyncio.wait_for(failed.wait(), BACKSTOP_SECONDS)
        await asyncio.wait_for(app.pollers["gh"].caught_up(), BACKSTOP_SECONDS)
        monkeypatch.setattr(HostPoller, "sync_mr", real)
        gh.github.reset_requests()
        await asyncio.wait_for(app.cycle(wait=0), BACKSTOP_SECONDS)
        assert sorted(listings(gh)) == sorted(f"/api/v3/repos/{r}/pulls"
                                              for r in [GITHUB_REPO, *QUIET])
        assert searches(gh) == 0
    finally:
        gate.set()
        await app.close()
