"""Bitbucket lists each repo with a request of its own and has no change feed: a repo is
listed every hot cycle only while it has recent human activity, the others once per quiet
interval, and Data Center's dashboard (the bot's pull requests across repositories) brings
what involves the bot in between (sync/quiet.py).

Time is the daemon's own: one simulated clock drives the fakes' timestamps and the
pollers, moved 3 s (the hot interval) per cycle; the tests count requests and cycles,
never wall-clock time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from livereview.app.daemon import App
from livereview.hosts.bitbucket_cloud.adapter import BitbucketCloud
from livereview.hosts.bitbucket_cloud.budget import Budget
from livereview.metrics import Metrics
from livereview.sandbox.bitbucket_cloud.server import FakeBitbucketCloudServer
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.settings import Settings, parse
from livereview.sync.cycle_report import CycleReport
from tests.databases import url_for

SECRET = "bb-quiet-SECRET-token-7"
HOT, QUIET, WINDOW = 3.0, 60.0, 600.0
PER_MINUTE = int(60 / HOT)
SCALED_QUOTA = 10_000


@dataclass
class Sim:
    """The one clock of a test: the fake's timestamps and the pollers' `now`."""

    at: datetime = field(default_factory=lambda: datetime(2026, 5, 4, 9, 0, tzinfo=UTC))

    def __call__(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


def repo(i: int) -> str:
    return f"ACME/repo-{i:03d}"


def settings(kind: str, url: str, repos: int, db: Path) -> Settings:
    host: dict[str, object] = {"name": "bb", "type": kind, "url": url, "token_env": "T"}
    if kind == "bitbucket-cloud":
        host["login"] = "livereview"
    return parse({
        "daemon": {"database_url": url_for(db), "metrics_listen": "",
                   "hot_poll_interval_seconds": HOT, "poll_interval_seconds": 30,
                   "hot_window_seconds": WINDOW, "quiet_repo_interval_seconds": QUIET},
        "ai": {"api_key_env": ""},
        "hosts": [host], "repos": [{"host": "bb", "path": repo(i)} for i in range(repos)],
    }, {"T": SECRET})


@dataclass
class Daemon:
    """A fake Bitbucket with one open PR per repo (last touched an hour ago) and the daemon
    polling it on the simulated clock."""

    fake: FakeBitbucketDC | FakeBitbucketCloud
    url: str
    kind: str
    repos: int
    db: Path
    sim: Sim
    app: App | None = None

    async def start(self) -> None:
        self.app = App.create(settings(self.kind, self.url, self.repos, self.db),
                              metrics=Metrics())
        cloud = self.app.hosts["bb"]
        if isinstance(cloud, BitbucketCloud):
            # A workspace's scaled quota (bitbucket_cloud_budget.py): at the base 1 000 an
            # hour, 20 repos listed once a minute (1 200 an hour) are spread out by the
            # budget instead, which tests/unit/test_bitbucket_cloud_quota.py covers.
            cloud.budget = Budget(limit=lambda: SCALED_QUOTA)

    async def stop(self) -> None:
        if self.app is not None:
            await self.app.close()
            self.app = None

    async def cycle(self) -> CycleReport:
        """One hot cycle, 3 s after the last one."""
        assert self.app is not None
        self.sim.advance(HOT)
        report = (await self.app.cycle())["bb"]
        assert report.ok
        return report

    def comment(self, i: int, text: str, author: str = "alice") -> None:
        if isinstance(self.fake, FakeBitbucketDC):
            self.fake.add_comment(repo(i), 1, author=author, text=text)
        else:
            self.fake.add_comment(repo(i), 1, author=author, body=text)

    def listings(self, i: int) -> int:
        """Requests so far for repo i's open pull requests."""
        slug = repo(i).split("/")[1]
        return sum(1 for _, path, _ in self.fake.requests
                   if path.endswith(f"/{slug}/pull-requests")
                   or path.endswith(f"/{slug}/pullrequests"))

    def reads_of(self, i: int) -> int:
        """Requests so far that read repo i's pull request 1 itself."""
        slug = repo(i).split("/")[1]
        return sum(1 for _, path, _ in self.fake.requests
                   if path.endswith((f"/{slug}/pull-requests/1", f"/{slug}/pullrequests/1")))


def _populate(fake: FakeBitbucketDC | FakeBitbucketCloud, sim: Sim, repos: int) -> None:
    sim.advance(-3600)
    for i in range(repos):
        if isinstance(fake, FakeBitbucketDC):
            fake.add_pr(repo(i), title=f"change {i}", author="bob",
                        files={"a.py": ("x = 1\n", "x = 2\n")})
            fake.add_comment(repo(i), 1, author="carol", text="looks fine")
        else:
            fake.add_pr(repo(i), title=f"change {i}", author="bob",
                        files={"a.py": ("x = 1\n", "x = 2\n")})
            fake.add_comment(repo(i), 1, author="carol", body="looks fine")
    sim.advance(3600)


@pytest.fixture(params=["bitbucket-server", "bitbucket-cloud"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _daemon(kind: str, repos: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
            ) -> Iterator[Daemon]:
    sim = Sim()
    monkeypatch.setattr("livereview.app.daemon.now", sim)  # the daemon's clock, pollers' included
    if kind == "bitbucket-server":
        dc = FakeBitbucketDC(token=SECRET, clock=sim)
        for human in ("alice", "bob", "carol"):
            dc.add_user(human)
        _populate(dc, sim, repos)
        with FakeBitbucketDCServer(dc) as server:
            yield Daemon(dc, server.url, kind, repos, tmp_path / "bb.db", sim)
    else:
        cloud = FakeBitbucketCloud(token=SECRET, clock=sim, rate_limit_per_hour=10**9)
        for human in ("alice", "bob", "carol"):
            cloud.add_user(human)
        _populate(cloud, sim, repos)
        with FakeBitbucketCloudServer(cloud) as server:
            yield Daemon(cloud, server.api_url, kind, repos, tmp_path / "bb.db", sim)


@pytest.fixture
def twenty(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Daemon]:
    yield from _daemon(kind, 20, tmp_path, monkeypatch)


@pytest.fixture
def dc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Daemon]:
    yield from _daemon("bitbucket-server", 20, tmp_path, monkeypatch)


async def _warm(d: Daemon) -> None:
    """First sight (every repo listed, every PR read), then the requests are counted."""
    await d.start()
    assert d.app is not None
    assert all(r.ok for r in (await d.app.cycle(cold=True)).values())
    d.fake.reset_requests()


async def test_an_idle_minute_costs_each_repo_at_most_two_requests(twenty: Daemon) -> None:
    await _warm(twenty)
    try:
        reports = [await twenty.cycle() for _ in range(PER_MINUTE)]
    finally:
        await twenty.stop()
    assert sum(r.fetched for r in reports) == 0
    requests = len(twenty.fake.requests)
    assert requests <= 2 * twenty.repos, f"{requests} requests in an idle minute"
    # Each repo was listed once (the sweep); Data Center's dashboard took the rest.
    assert [twenty.listings(i) for i in range(twenty.repos)] == [1] * twenty.repos


async def test_a_repo_with_a_human_comment_goes_hot_then_cold_after_the_activity_window(
        twenty: Daemon) -> None:
    await _warm(twenty)
    try:
        twenty.comment(7, "Should this not use a lock?")
        cycles = 0
        while twenty.reads_of(7) == 0:  # the sweep finds it
            await twenty.cycle()
            cycles += 1
        assert cycles * HOT <= QUIET
        before = (twenty.listings(7), twenty.listings(8))
        for _ in range(5):
            await twenty.cycle()
        # Hot: listed (and its PR read) every cycle; a quiet neighbour was not listed.
        assert twenty.listings(7) - before[0] == 5
        assert twenty.listings(8) - before[1] == 0
        twenty.sim.advance(WINDOW)  # the activity window passes without anything new
        await twenty.cycle()
        before = (twenty.listings(7), twenty.reads_of(7))
        for _ in range(PER_MINUTE):
            await twenty.cycle()
    finally:
        await twenty.stop()
    # Cold again: listed once a quiet interval, like every other repo, its PR not re-read.
    assert twenty.listings(7) - before[0] == 1
    assert twenty.reads_of(7) == before[1]


async def test_a_mention_on_a_quiet_repo_is_taken_up_within_one_quiet_interval(
        twenty: Daemon) -> None:
    await _warm(twenty)
    try:
        twenty.comment(3, "@livereview why is this needed?")
        jobs, cycles = 0, 0
        while not jobs and cycles * HOT <= QUIET:
            jobs = (await twenty.cycle()).jobs
            cycles += 1
        assert jobs == 1, f"no reply job after {cycles * HOT:g} s"
        for _ in range(PER_MINUTE):  # the PR is hot now: seen again, asked once
            assert (await twenty.cycle()).jobs == 0
    finally:
        await twenty.stop()


async def test_the_dashboard_brings_a_pr_where_the_bot_was_asked_to_review_at_once(
        dc: Daemon) -> None:
    await _warm(dc)
    assert isinstance(dc.fake, FakeBitbucketDC)
    try:
        await dc.cycle()
        dc.fake.add_reviewer(repo(11), 1, "livereview")
        await dc.cycle()
        assert dc.reads_of(11) == 1, "the PR the bot reviews was not read on the next cycle"
        assert dc.listings(11) == 0  # read from the dashboard, not its repo's listing
    finally:
        await dc.stop()


async def test_the_dashboard_brings_a_reply_on_a_pr_the_bot_took_part_in_at_once(
        dc: Daemon) -> None:
    assert isinstance(dc.fake, FakeBitbucketDC)
    dc.sim.advance(-1800)
    root = dc.fake.add_comment(repo(5), 1, author="alice", text="is this safe?")
    dc.fake.add_comment(repo(5), 1, author="livereview", text="Yes, the lock covers it.",
                        parent=int(root["id"]))
    dc.sim.advance(1800)
    await _warm(dc)
    try:
        await dc.cycle()
        dc.comment(5, "@livereview and on retry?")
        report = await dc.cycle()
    finally:
        await dc.stop()
    assert report.jobs == 1
    assert dc.listings(5) == 0


async def test_a_mention_made_while_the_daemon_is_down_is_answered_once_after_restarts(
        twenty: Daemon) -> None:
    await _warm(twenty)
    await twenty.cycle()
    await twenty.stop()
    twenty.sim.advance(HOT)
    twenty.comment(9, "@livereview what does this change?")
    jobs = []
    for _ in range(3):  # restarted three times: the first cycle of each is a sweep
        await twenty.start()
        try:
            jobs += [(await twenty.cycle()).jobs, (await twenty.cycle()).jobs]
        finally:
            await twenty.stop()
    assert jobs == [1, 0, 0, 0, 0, 0]
