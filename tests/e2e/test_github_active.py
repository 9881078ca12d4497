"""The active tier on the fake GitHub (sync/active.py): the PRs people are busy on are looked
at between hot cycles with one conditional request each, and read only when they changed;
quiet repos stay on the hot cycle's search. Counts of requests the fake saw, never times."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from livereview.app.daemon import App
from livereview.core.model import MRKey
from livereview.hosts.base import LooksCheaply
from livereview.hosts.http import RetryPolicy
from livereview.metrics import Metrics
from livereview.settings import load
from livereview.store import jobs, state
from livereview.store.leases import INSTANCE, Leases
from livereview.sync.poller import HostPoller
from tests.e2e.conftest import BACKSTOP_SECONDS, GITHUB_REPO, GitHubSandbox, write_github_config

QUIET = [f"acme/quiet-{n}" for n in range(3)]
ACTIVE = {"hot_poll_interval_seconds": 3, "active_poll_interval_seconds": 0.5}


def watch(gh: GitHubSandbox, repos: list[str], tmp_path: Path, **daemon: object) -> App:
    """An app on its own database watching `repos` of the sandbox's fake GitHub."""
    config = tmp_path / "active.toml"
    write_github_config(config, gh.server.enterprise_url, gh.llm.url, tmp_path / "active.db",
                        **{**ACTIVE, **daemon})
    text = config.read_text(encoding="utf-8").split("[[repos]]")[0]
    config.write_text(text + "".join(f'\n[[repos]]\nhost = "gh"\npath = "{repo}"\n'
                                     for repo in repos), encoding="utf-8")
    return App.create(load(config), metrics=Metrics())


def open_prs(gh: GitHubSandbox, repos: list[str], *, hours_ago: float) -> None:
    """A PR in each repo, opened (and last touched) `hours_ago`."""
    gh.github._clock = lambda: datetime.now(UTC) - timedelta(hours=hours_ago)
    for repo in repos:
        gh.github.add_pr(repo, title="Change", body="A change.", author="bob")
    gh.github._clock = lambda: datetime.now(UTC)


async def look_once(poller: HostPoller) -> None:
    """The active tier's first look at each PR: it has no answer of its own to compare
    with (the read's may be newer than what the read saw), so it reads each PR once."""
    assert await poller.glance() == len(poller.active)
    await poller.caught_up()


def asked(gh: GitHubSandbox) -> list[tuple[str, str]]:
    return [(method, path) for method, path, _ in gh.github.requests]


async def test_a_mention_on_the_busy_pr_is_seen_by_the_active_look_and_quiet_repos_wait_for_the_search(  # noqa: E501
        gh: GitHubSandbox, tmp_path: Path) -> None:
    open_prs(gh, QUIET, hours_ago=1)
    gh.comment("people are on this PR right now")
    app = watch(gh, [GITHUB_REPO, *QUIET], tmp_path)
    busy = f"/api/v3/repos/{GITHUB_REPO}/pulls/{gh.number}"
    try:
        await app.cycle(cold=True)
        await app.cycle()  # the watermark exists: the search replaces the listing
        poller = app.pollers["gh"]
        assert poller.active == (MRKey("gh", GITHUB_REPO, gh.number),)
        await look_once(poller)
        used = gh.github.rate_limit_used()
        gh.github.reset_requests()
        assert await poller.glance() == 0
        assert asked(gh) == [("GET", busy)]
        assert gh.github.rate_limit_used() == used  # a 304: no rate limit spent

        question = gh.comment("@livereview is this lock needed?")
        quiet = gh.github.add_issue_comment(QUIET[1], 1, author="alice",
                                            body="@livereview and here?")
        gh.github.reset_requests()
        assert await poller.glance() == 1
        await poller.caught_up()
        looked = asked(gh)
        assert ("GET", busy) in looked and ("POST", "/api/graphql") not in looked
        assert not [path for _, path in looked if "/quiet-" in path]
        await app.worker.drain()
        assert ("eyes", "livereview") in gh.github.reactions_on(GITHUB_REPO, "issue",
                                                                question["id"])
        assert len(gh.replies_to(f"issuecomment-{question['id']}")) == 1
        assert gh.github.reactions_on(QUIET[1], "issue", quiet["id"]) == []

        report = (await app.cycle())["gh"]  # the hot cycle's search finds the quiet one
        assert report.jobs == 1
        await app.worker.drain()
    finally:
        await app.close()
    assert ("eyes", "livereview") in gh.github.reactions_on(QUIET[1], "issue", quiet["id"])
    assert len(gh.replies_to(f"issuecomment-{quiet['id']}")) == 1


async def test_only_the_most_recently_active_prs_up_to_the_cap_are_looked_at(
        gh: GitHubSandbox, tmp_path: Path) -> None:
    busy = [f"acme/busy-{n}" for n in range(4)]
    for n, repo in enumerate(busy):  # busy-3 the most recently active
        open_prs(gh, [repo], hours_ago=(4 - n) / 3600)
    open_prs(gh, QUIET, hours_ago=1)
    app = watch(gh, [*busy, *QUIET], tmp_path, max_active_mrs=2)
    try:
        await app.cycle(cold=True)
        await app.cycle()
        await look_once(app.pollers["gh"])
        gh.github.reset_requests()
        assert await app.pollers["gh"].glance() == 0
    finally:
        await app.close()
    assert sorted(asked(gh)) == [("GET", f"/api/v3/repos/{repo}/pulls/1")
                                 for repo in busy[2:]]


async def test_with_no_pr_active_the_look_asks_nothing(
        gh: GitHubSandbox, tmp_path: Path) -> None:
    open_prs(gh, QUIET, hours_ago=1)
    app = watch(gh, QUIET, tmp_path)
    try:
        await app.cycle(cold=True)
        await app.cycle()
        gh.github.reset_requests()
        poller = app.pollers["gh"]
        assert poller.active == ()
        assert await poller.glance() == 0
        idle = (await app.cycle())["gh"]
    finally:
        await app.close()
    assert idle.requests == 1 and asked(gh) == [("POST", "/api/graphql")]


async def test_an_active_interval_not_below_the_hot_one_means_no_active_tier(
        gh: GitHubSandbox, tmp_path: Path) -> None:
    gh.comment("people are on this PR right now")
    app = watch(gh, [GITHUB_REPO], tmp_path, active_poll_interval_seconds=3)
    try:
        await app.cycle(cold=True)
        await app.cycle()
        gh.github.reset_requests()
        assert await app.pollers["gh"].glance() == 0
    finally:
        await app.close()
    assert asked(gh) == []


async def listed_until(app: App) -> datetime | None:
    now = datetime.now(UTC)
    return (await app.store.run(state.watermark, "gh", INSTANCE, now)).listed_until


async def test_a_cycle_stops_waiting_for_a_slow_read_its_wait_after_it_began_and_the_listing_counts_once_the_read_is_done(  # noqa: E501
        gh: GitHubSandbox, tmp_path: Path) -> None:
    gh.comment("people are on this PR right now")
    app = watch(gh, [GITHUB_REPO], tmp_path)
    searched = [0.0]

    def monotonic() -> float:  # the listing (the search) takes the whole wait and more
        seen = any(path == "/api/graphql" for _, path, _ in gh.github.requests)
        return searched[0] + (3601.0 if seen else 0.0)

    try:
        await app.cycle(cold=True)
        await app.cycle()
        before = await listed_until(app)
        poller = app.pollers["gh"]
        poller.monotonic = monotonic
        gh.github.reset_requests()
        held = gh.github.hold("GET", rf"/pulls/{gh.number}$")
        report = await asyncio.wait_for(poller.cycle(wait=3600), BACKSTOP_SECONDS)
        assert report.in_background == 1  # its request may still be on its way to the fake
        assert await asyncio.to_thread(held.arrived.wait, BACKSTOP_SECONDS)
        assert await listed_until(app) == before  # the read it listed is not stored yet
        held.release()
        await poller.caught_up()
        after = await listed_until(app)
    finally:
        await app.close()
    assert before is not None and after is not None and after > before


async def test_a_pr_leaves_the_active_tier_once_its_last_activity_is_older_than_the_window(
        gh: GitHubSandbox, tmp_path: Path) -> None:
    gh.comment("people are on this PR right now")
    app = watch(gh, [GITHUB_REPO], tmp_path, active_window_seconds=60)
    try:
        await app.cycle(cold=True)
        await app.cycle()
        poller = app.pollers["gh"]
        assert poller.active == (MRKey("gh", GITHUB_REPO, gh.number),)
        later = timedelta(seconds=61)  # simulated time: the poller's clock, a minute on
        poller.clock = lambda: datetime.now().astimezone() + later
        await app.cycle()
        assert not poller.active
        gh.github.reset_requests()
        assert await poller.glance() == 0
    finally:
        await app.close()
    assert asked(gh) == []


async def test_a_mention_written_while_a_read_of_the_busy_pr_runs_is_seen_by_the_next_look(
        gh: GitHubSandbox, tmp_path: Path) -> None:
    """The read's five requests run at once: the comment lands after its comments were read
    and before its `GET` of the pull request is answered, whose ETag (the comment counted)
    then answered every later look with a 304."""
    gh.comment("people are on this PR right now")
    app = watch(gh, [GITHUB_REPO], tmp_path)
    try:
        await app.cycle(cold=True)
        await app.cycle()
        poller = app.pollers["gh"]
        await look_once(poller)
        gh.comment("a change the hot cycle reads")
        pull = gh.github.hold("GET", rf"/repos/{GITHUB_REPO}/pulls/{gh.number}$")
        comments = gh.github.hold("GET", rf"/issues/{gh.number}/comments$")
        reading = asyncio.create_task(poller.cycle())
        assert await asyncio.to_thread(comments.arrived.wait, BACKSTOP_SECONDS)
        comments.release()  # the comments are read before the question is written
        assert await asyncio.to_thread(comments.answered.wait, BACKSTOP_SECONDS)
        assert await asyncio.to_thread(pull.arrived.wait, BACKSTOP_SECONDS)
        question = gh.comment("@livereview is this lock needed?")
        pull.release()  # the pull request is read after it: its ETag counts the question
        await asyncio.wait_for(reading, BACKSTOP_SECONDS)
        await poller.caught_up()
        assert await app.store.run(jobs.listing, repo=GITHUB_REPO) == []  # not read yet
        assert await poller.glance() == 1
        await poller.caught_up()
        made = await app.store.run(jobs.listing, repo=GITHUB_REPO)
    finally:
        await app.close()
    assert [job.host_message_id for job in made] == [f"issuecomment-{question['id']}"]


async def test_a_look_whose_read_failed_says_changed_again_until_a_read_stores_the_change(
        gh: GitHubSandbox, tmp_path: Path) -> None:
    """The look remembered its answer's ETag when it said "changed", before the read it
    began was stored: that read failing, every later look answered 304 (the question waited
    for the hot cycle after the failure's backoff)."""
    gh.comment("people are on this PR right now")
    app = watch(gh, [GITHUB_REPO], tmp_path)
    key = MRKey("gh", GITHUB_REPO, gh.number)
    try:
        await app.cycle(cold=True)
        await app.cycle()
        poller, host = app.pollers["gh"], app.hosts["gh"]
        assert isinstance(host, LooksCheaply)
        await look_once(poller)
        question = gh.comment("@livereview is this lock needed?")
        gh.github.inject_fault("GET", rf"/issues/{gh.number}/comments$", status=502,
                               times=RetryPolicy().attempts)  # every try of the read's
        assert await poller.glance() == 1
        await poller.caught_up()
        assert await app.store.run(jobs.listing, repo=GITHUB_REPO) == []  # the read failed
        assert await host.mr_changed(key), "the look's answer was never stored"
        await poller.sync_mr(key, poller._glances.baselines[GITHUB_REPO])  # the retry stores it
        assert not await host.mr_changed(key)
        made = await app.store.run(jobs.listing, repo=GITHUB_REPO)
    finally:
        await app.close()
    assert [job.host_message_id for job in made] == [f"issuecomment-{question['id']}"]


async def test_the_read_a_look_begins_revalidates_the_pull_request_the_look_just_got(
        gh: GitHubSandbox, tmp_path: Path) -> None:
    """The look's 200 is the client's conditional answer for the pull request: the read's
    own `GET` of it is a 304, charged nothing (GitHub's rule: the fake's rate limit)."""
    gh.comment("people are on this PR right now")
    app = watch(gh, [GITHUB_REPO], tmp_path)
    try:
        await app.cycle(cold=True)
        await app.cycle()
        poller = app.pollers["gh"]
        await look_once(poller)
        gh.comment("@livereview is this lock needed?")
        used = gh.github.rate_limit_used()
        gh.github.reset_requests()
        assert await poller.glance() == 1
        await poller.caught_up()
        pull = f"/api/v3/repos/{GITHUB_REPO}/pulls/{gh.number}"
        assert asked(gh).count(("GET", pull)) == 2  # the look, and the read's revalidation
        # Charged: the look's 200 and the new comment's list; the pull request, its review
        # comments, reviews and commits are unchanged since they were last answered: 304s.
        assert gh.github.rate_limit_used() - used == 2
    finally:
        await app.close()


class PeersHoldEveryShard(Leases):
    """A replica whose live peers hold every shard of the host (store/leases.py)."""

    async def poll_shards(self, host: str, repos: Sequence[str], now: datetime
                          ) -> dict[str, tuple[str, ...]]:
        return {}


async def test_a_replica_whose_peers_took_every_shard_stops_looking_at_their_prs(
        gh: GitHubSandbox, tmp_path: Path) -> None:
    gh.comment("people are on this PR right now")
    app = watch(gh, [GITHUB_REPO], tmp_path)
    try:
        await app.cycle(cold=True)
        await app.cycle()
        poller = app.pollers["gh"]
        assert poller.active == (MRKey("gh", GITHUB_REPO, gh.number),)
        poller.leases = PeersHoldEveryShard(app.store)
        await app.cycle()
        gh.github.reset_requests()
        assert not poller.active
        assert await poller.glance() == 0
    finally:
        await app.close()
    assert asked(gh) == []
