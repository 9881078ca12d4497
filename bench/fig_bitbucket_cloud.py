"""Figure 10: Bitbucket Cloud — requests per idle minute and time-to-ack, 10 and 200 repos.

Bitbucket Cloud's quota is per rolling hour (1 000 requests; up to 10 000 for access tokens
of large workspaces), so what matters is minutes and hours, not milliseconds: the figure
runs the real daemon's code (App, poller, worker, adapter, store) against the fake
Bitbucket Cloud on *simulated* time. One clock drives the fake's timestamps, the poller,
the worker and the adapter's quota bucket; a cycle is 3 s of it (the default hot interval,
every 10th cold), and when the bucket makes a request wait, the clock moves on instead of
the benchmark sleeping. Requests are counted at the fake; times are the fake's timestamps
(mention → the bot's acknowledging reply).

Every repo has 5 open PRs last touched an hour ago. First sight (every repo listed, every
PR read) runs before the measured hour, without quota. Then, over one simulated hour,
mentions arrive at seeded random times on random PRs; the answerer replies at once (no
LLM: this measures polling and acknowledgement).
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from common import HUMANS, Row, percentile, record

from livereview.app.daemon import App
from livereview.core.prompt import Prompt
from livereview.core.triggers import acked_for
from livereview.hosts.bitbucket_cloud.adapter import BitbucketCloud
from livereview.hosts.bitbucket_cloud.budget import Budget
from livereview.jobs.llm import Answer
from livereview.sandbox.bitbucket_cloud.server import FakeBitbucketCloudServer
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.settings import Settings, parse

SECRET = "bbcloud-bench-token-0000"
HOT = 3.0
COLD_EVERY = 10
HOUR = 3600.0
FILES = {"a.py": ("x = 1\ny = 1\n", "x = 2\ny = 1\n")}


class SimTime:
    """One simulated clock for everything; `sleep` moves it instead of waiting."""

    def __init__(self) -> None:
        self.base = datetime.now(UTC)
        self.offset = 0.0

    def now(self) -> datetime:
        return self.base + timedelta(seconds=self.offset)

    def monotonic(self) -> float:
        return self.offset

    async def sleep(self, seconds: float) -> None:
        self.offset += seconds


class Immediate:
    """An answerer that answers at once: the figure measures polling, not a model."""

    async def answer(self, prompt: Prompt) -> Answer:
        return Answer("Because the reads race with the writes.", "bench")

    async def close(self) -> None:
        return None


@dataclass
class Result:
    repos: int
    limit: int
    idle_per_minute: float  # steady state, last 30 simulated minutes before any mention
    round_seconds: float  # how long until every repo was listed again, idle
    acks: list[float] = field(default_factory=list)
    first_sight_requests: int = 0
    wall_seconds: float = 0.0


def config(url: str, repos: list[str], db: Path) -> Settings:
    return parse({
        "daemon": {"database_url": f"sqlite:///{db}", "metrics_listen": "",
                   "backfill_hours": 48},
        "ai": {"api_key_env": ""},
        "hosts": [{"name": "bb", "type": "bitbucket-cloud", "url": url, "token_env": "T",
                   "login": "livereview"}],
        "repos": [{"host": "bb", "path": p} for p in repos],
    }, {"T": SECRET})


async def measure(repos: int, state_dir: Path, *, limit: int = 1000, mentions: int = 12,
                  seed: int = 7) -> Result:
    sim = SimTime()
    sim.offset = -HOUR  # the PRs were last touched an hour ago
    fake = FakeBitbucketCloud(token=SECRET, clock=sim.now, rate_limit_per_hour=10**9)
    for human in HUMANS:
        fake.add_user(human)
    prs = []
    for r in range(repos):
        path = f"bench/repo-{r:03d}"
        for m in range(5):
            number = fake.add_pr(path, title=f"change {r}.{m}", author=HUMANS[m % 4],
                                 files=FILES)
            fake.add_comment(path, number, author=HUMANS[(m + 1) % 4], body="looks fine")
            prs.append((path, number))
    sim.offset = 0.0
    started = time.perf_counter()
    with FakeBitbucketCloudServer(fake) as server:
        app = App.create(config(server.api_url, sorted({p for p, _ in prs}),
                                state_dir / f"bbcloud-{repos}-{limit}.db"),
                         answerer=Immediate())
        host = app.hosts["bb"]
        assert isinstance(host, BitbucketCloud)
        try:
            host.budget = Budget(limit=lambda: 10**9, clock=sim.monotonic, sleep=sim.sleep)
            await app.cycle(cold=True)  # first sight, without quota
            first_sight = len(fake.requests)
            for poller in app.pollers.values():
                poller.clock = sim.now
            app.worker.clock = sim.now
            host.budget = Budget(limit=lambda: limit, clock=sim.monotonic, sleep=sim.sleep)
            fake.reset_requests()
            idle, round_seconds = await idle_hour(app, fake, sim, repos)
            acks = await mentions_hour(app, fake, sim, prs, mentions, random.Random(seed))
        finally:
            await app.close()
    return Result(repos, limit, idle, round_seconds, acks, first_sight,
                  time.perf_counter() - started)


async def cycle(app: App, sim: SimTime, number: int) -> None:
    sim.offset += HOT
    await app.cycle(cold=number % COLD_EVERY == 0)
    await app.worker.drain()


async def idle_hour(app: App, fake: FakeBitbucketCloud, sim: SimTime, repos: int
                    ) -> tuple[float, float]:
    """Requests per minute over the second half of an idle hour (the bucket's first burst
    spent), and how long it then took until every repo had been listed again."""
    start, number = sim.offset, 0
    half: tuple[int, float] | None = None
    listed: dict[str, float] = {}
    while sim.offset - start < HOUR:
        seen = len(fake.requests)
        number += 1
        await cycle(app, sim, number)
        if half is not None:
            for _, path, _ in fake.requests[seen:]:
                if path.endswith("/pullrequests"):
                    listed.setdefault(path, sim.offset)
        elif sim.offset - start >= HOUR / 2:
            half = len(fake.requests), sim.offset
    assert half is not None
    per_minute = (len(fake.requests) - half[0]) / ((sim.offset - half[1]) / 60)
    whole = max(listed.values()) - half[1] if len(listed) >= repos else float("inf")
    return per_minute, whole


async def mentions_hour(app: App, fake: FakeBitbucketCloud, sim: SimTime,
                        prs: list[tuple[str, int]], count: int, rng: random.Random
                        ) -> list[float]:
    """Mentions at random times over an hour on random PRs; seconds to each one's ack."""
    start = sim.offset
    times = sorted(rng.uniform(0, HOUR) for _ in range(count))
    asked: dict[str, datetime] = {}
    number = 0
    while sim.offset - start < HOUR + 900:
        while times and sim.offset - start >= times[0]:
            times.pop(0)
            path, pr = rng.choice(prs)
            posted = fake.add_comment(path, pr, author=rng.choice(HUMANS),
                                      body="@livereview why is this needed?")
            asked[str(posted["id"])] = sim.now()
        number += 1
        await cycle(app, sim, number)
        if not times and len(acked(fake, asked)) == len(asked):
            break
    return sorted(acked(fake, asked).values())


def acked(fake: FakeBitbucketCloud, asked: dict[str, datetime]) -> dict[str, float]:
    found = {}
    for c in fake.comments_by("livereview"):
        target = acked_for(c["content"]["raw"])
        if target in asked:
            found[target] = (datetime.fromisoformat(c["created_on"]) - asked[target]
                             ).total_seconds()
    return found


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    sizes = (10, 200)
    print("\n## 10. Bitbucket Cloud on simulated time (1000 requests/hour; 5 open PRs per repo;"
          f" hot interval {HOT:g} s)")
    print(f"{'repos':>6} {'quota/h':>8} {'idle req/min':>12} {'listing round s':>15} "
          f"{'ack p50 s':>9} {'ack p95 s':>9} {'acks':>5} {'first sight req':>15} "
          f"{'wall s':>7}")
    rows: list[Row] = []
    plans = [(n, 1000) for n in sizes] + ([] if quick else [(200, 10_000)])
    for repos, limit in plans:
        r = asyncio.run(measure(repos, state_dir, limit=limit, mentions=6 if quick else 12))
        p50, p95 = percentile(r.acks, 50), percentile(r.acks, 95)
        if limit == 1000:
            record("idle", "Bitbucket Cloud, 1000 req/h (fig. 10)", [(repos, r.idle_per_minute)])
        print(f"{repos:>6} {limit:>8} {r.idle_per_minute:>12.1f} {r.round_seconds:>15.0f} "
              f"{p50:>9.1f} {p95:>9.1f} {len(r.acks):>5} {r.first_sight_requests:>15} "
              f"{r.wall_seconds:>7.1f}")
        rows.append(Row(f"10. Bitbucket Cloud idle requests/min, {repos} repos ({limit}/h)",
                        f"{r.idle_per_minute:.1f}/min (every repo listed every "
                        f"{r.round_seconds:.0f} s)", f"≤ {limit * 0.9 / 60:.0f}/min",
                        r.idle_per_minute <= limit * 0.9 / 60 + 0.5))
        rows.append(Row(f"10. Bitbucket Cloud time-to-ack, {repos} repos ({limit}/h): p50 / p95",
                        f"{p50:.0f} s / {p95:.0f} s ({len(r.acks)} mentions)"))
    return rows
