"""A mention made during the first sweep, on an MR still waiting for its turn in it: its read
begins at the next cycle, out of turn, and the MR is read once (sync/sweep.py).

At first sight the hot cycles list from where this process's first complete listing began
(sync/watermark.py); the MRs they find were dropped while queued in the sweep, so such a
mention waited for the sweep to reach its MR — minutes on a host of thousands of MRs.
The sweep here is held by the fake host (a request of each of its first reads waits, in
a few of the client's request slots), never by time.
"""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from livereview.app.daemon import App
from livereview.core.model import MRKey
from livereview.metrics import Metrics
from livereview.sandbox.loopback import Hold
from livereview.settings import load
from livereview.store import jobs
from livereview.sync.mr_syncs import MR_CONCURRENCY
from livereview.sync.poller import HostPoller
from tests.e2e import test_first_sight
from tests.e2e.conftest import (
    BACKSTOP_SECONDS,
    GITHUB_REPO,
    PROJECT,
    GitHubSandbox,
    write_github_config,
)
from tests.e2e.test_first_sight import BigGitLab
from tests.e2e.test_github_active import ACTIVE, open_prs

BUSY = [f"acme/busy-{n}" for n in range(8)]
big = test_first_sight.big  # the fixture: a fake GitLab of many MRs
SLOTS = 4 * MR_CONCURRENCY  # the host client's: the held reads leave the cycle's free


def _more_slots(config: Path) -> None:
    text = config.read_text(encoding="utf-8")
    config.write_text(re.sub(r'(token_env = "\w+")',
                             rf"\1\nmax_concurrent_requests = {SLOTS}", text, count=1),
                      encoding="utf-8")


def _watch_github(gh: GitHubSandbox, repos: list[str], tmp_path: Path) -> App:
    config = tmp_path / "sweep.toml"
    write_github_config(config, gh.server.enterprise_url, gh.llm.url, tmp_path / "sweep.db",
                        **ACTIVE)
    text = config.read_text(encoding="utf-8").split("[[repos]]")[0]
    config.write_text(text + "".join(f'\n[[repos]]\nhost = "gh"\npath = "{repo}"\n'
                                     for repo in repos), encoding="utf-8")
    _more_slots(config)
    return App.create(load(config), metrics=Metrics())


async def _held(holds: list[Hold]) -> None:
    """Until the sweep's first reads all wait at the fake host."""
    for hold in holds:
        assert await asyncio.to_thread(hold.arrived.wait, BACKSTOP_SECONDS)


def _last_queued(poller: HostPoller) -> MRKey:
    queued = sorted(poller._syncs.queued, key=str)
    assert queued, "the sweep should have MRs waiting for their turn"
    return queued[-1]


async def _read_now(poller: HostPoller, target: MRKey, holds: list[Hold]) -> None:
    """The read the cycle began for `target`, to its end: it takes the first of the poller's
    read slots that frees (one held read let go), before the sweep's next MR."""
    reading = poller._syncs.syncing.get(target)
    assert reading is not None, f"{target}: mentioned, still queued behind the sweep"
    assert target not in poller._syncs.queued
    holds[0].release()
    await asyncio.wait_for(reading, BACKSTOP_SECONDS)


async def test_a_mention_in_the_notifications_on_a_pr_queued_in_the_first_sweep_is_read_at_once_and_once(  # noqa: E501
        gh: GitHubSandbox, tmp_path: Path) -> None:
    open_prs(gh, BUSY, hours_ago=1)  # within the backfill: each read by the sweep
    app = _watch_github(gh, [GITHUB_REPO, *BUSY], tmp_path)
    holds = [gh.github.hold("GET", r"/pulls/\d+/commits$") for _ in range(MR_CONCURRENCY)]
    try:
        await asyncio.wait_for(app.cycle(cold=True, wait=0), BACKSTOP_SECONDS)
        await _held(holds)
        poller = app.pollers["gh"]
        target = _last_queued(poller)
        gh.github._clock = lambda: datetime.now(UTC) + timedelta(seconds=2)
        question = gh.github.add_issue_comment(target.repo, target.iid, author="alice",
                                               body="@livereview is this still needed?")
        host = app.hosts["gh"]
        host.notifications.next_at = 0.0  # type: ignore[attr-defined]  # X-Poll-Interval
        await asyncio.wait_for(app.cycle(wait=0), BACKSTOP_SECONDS)
        await _read_now(poller, target, holds)
        made = await app.store.run(jobs.listing, repo=target.repo)
        assert [job.host_message_id for job in made] == [f"issuecomment-{question['id']}"]
        for hold in holds:
            hold.release()
        await asyncio.wait_for(poller.caught_up(), BACKSTOP_SECONDS)
    finally:
        for hold in holds:
            hold.release()
        await app.close()
    comments = f"/api/v3/repos/{target.repo}/issues/{target.iid}/comments"
    assert [path for _, path, _ in gh.github.requests].count(comments) == 1


async def test_a_mention_the_listing_shows_on_an_mr_queued_in_the_first_sweep_is_read_at_once_and_once(  # noqa: E501
        big: BigGitLab) -> None:
    iids = big.add_mrs(12, days_ago=0.5)  # within the backfill: each read by the sweep
    holds = [big.gitlab.hold("GET", r"/merge_requests/\d+/discussions$")
             for _ in range(MR_CONCURRENCY)]
    _more_slots(big.config)
    app = App.create(load(big.config), metrics=Metrics())
    try:
        await asyncio.wait_for(app.cycle(cold=True, wait=0), BACKSTOP_SECONDS)
        await _held(holds)
        poller = app.pollers["gl"]
        assert app.hosts["gl"].listing_is_cheap  # hot cycles list: no to-do list read
        target = _last_queued(poller)
        assert target.iid in iids and target.repo == PROJECT
        asked = big.gitlab.add_note(PROJECT, target.iid, author="alice",
                                    body="@livereview is this still needed?")
        await asyncio.wait_for(app.cycle(wait=0), BACKSTOP_SECONDS)
        await _read_now(poller, target, holds)
        made = await app.store.run(jobs.listing, repo=PROJECT)
        assert [job.host_message_id for job in made] == [str(asked["id"])]
        for hold in holds:
            hold.release()
        await asyncio.wait_for(poller.caught_up(), BACKSTOP_SECONDS)
    finally:
        for hold in holds:
            hold.release()
        await app.close()
    assert big.discussions_read().count(target.iid) == 1
    assert sorted(set(big.discussions_read())) == sorted(iids)
