"""Figure 2: requests per idle minute for N watched repos, and the naive baseline.

Every repo has open MRs whose last activity is an hour old: outside the listing's overlap
window and the hot window. After the first cycle (first sight fetches every MR; run with
no latency to save time, it is not what is measured), one simulated minute of the
daemon's poll runs against the fake at 50 ms per request: 20 hot cycles of 3 s, two of
them cold (every 30 s) exactly as `App.tick` schedules them. The poller's clock is
advanced 3 s per cycle so that time-based rules see a minute pass; no daemon code
changes. A variant has the bot's own reply in one MR of every repo (revisions up to
df571f4 re-fetched every such MR on each cold cycle).

The naive strategy polls every open MR's discussions every 3 s: one request per open MR
per cycle. It is counted, and issued once against the fake at the smallest size to check
the count.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import httpx2
from common import (
    LATENCY,
    TOKEN,
    BenchGitLab,
    Clock,
    NoLLM,
    Row,
    poll_cycle,
    populate,
    repo_path,
    settings,
)

from livereview.app.daemon import App
from livereview.sandbox.gitlab.server import FakeGitLabServer

HOT_INTERVAL = 3.0  # the default hot_poll_interval_seconds
CYCLES_PER_MINUTE = int(60 / HOT_INTERVAL)
COLD_EVERY = 10  # poll_interval_seconds (30) / hot interval (3)


@dataclass
class Idle:
    repos: int
    open_mrs: int
    requests: int  # over one simulated minute (20 cycles)
    hot_ms: float  # mean duration of an idle hot cycle
    cold_ms: float  # mean duration of a cold cycle
    first_cycle_s: float  # first sight, no latency
    naive_checked: int | None = None  # requests one naive cycle actually made

    @property
    def per_cycle(self) -> float:
        return self.requests / CYCLES_PER_MINUTE

    @property
    def per_minute(self) -> float:
        return self.per_cycle * 60 / HOT_INTERVAL

    @property
    def naive_per_minute(self) -> float:
        return self.open_mrs * 60 / HOT_INTERVAL


class SimClock:
    """The poller's clock: real time plus however far the benchmark moved it."""

    def __init__(self) -> None:
        self.ahead = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now().astimezone() + self.ahead


async def naive_cycle(url: str, mrs: list[tuple[str, int]], concurrency: int = 4) -> None:
    """What a naive poller does every cycle: GET every open MR's discussions."""
    limit = asyncio.Semaphore(concurrency)
    async with httpx2.AsyncClient(base_url=url, headers={"PRIVATE-TOKEN": TOKEN}) as client:
        async def one(repo: str, iid: int) -> None:
            async with limit:
                response = await client.get(
                    f"/api/v4/projects/{quote(repo, safe='')}/merge_requests/{iid}/discussions",
                    params={"per_page": 100})
                response.raise_for_status()

        await asyncio.gather(*(one(r, i) for r, i in mrs))


async def measure(repos: int, mrs_per_repo: int, state_dir: Path, *, bot_replied: int = 0,
                  check_naive: bool = False) -> Idle:
    clock = Clock()
    clock.rewind(timedelta(hours=1))  # everything happened an hour ago
    gitlab = BenchGitLab(clock=clock)
    mrs = populate(gitlab, repos, mrs_per_repo, bot_replied=bot_replied)
    clock.reset()
    db = state_dir / f"idle-{repos}-{mrs_per_repo}-{bot_replied}.db"
    with FakeGitLabServer(gitlab, latency_seconds=0.0) as server:
        app = App.create(settings(server.url, [repo_path(i) for i in range(repos)], db),
                         answerer=NoLLM())
        try:
            started = time.perf_counter()
            await poll_cycle(app, cold=True)  # first sight: fetch everything
            first = time.perf_counter() - started
            sim = SimClock()
            for poller in app.pollers.values():
                poller.clock = sim
            gitlab.reset_requests()
            server.latency_seconds = LATENCY
            hot: list[float] = []
            cold: list[float] = []
            for i in range(1, CYCLES_PER_MINUTE + 1):
                sim.ahead += timedelta(seconds=HOT_INTERVAL)
                is_cold = i % COLD_EVERY == 0
                started = time.perf_counter()
                await poll_cycle(app, cold=is_cold)
                (cold if is_cold else hot).append(time.perf_counter() - started)
            requests = len(gitlab.requests)
            naive_checked = None
            if check_naive:
                gitlab.reset_requests()
                await naive_cycle(server.url, mrs)
                naive_checked = len(gitlab.requests)
        finally:
            await app.close()
    return Idle(repos, len(mrs), requests, sum(hot) / len(hot) * 1000,
                sum(cold) / len(cold) * 1000, first, naive_checked)


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    sizes, mrs_per_repo = ((10, 200), 5) if quick else ((10, 50, 200), 5)
    print(f"\n## 2. requests per idle minute ({mrs_per_repo} open MRs per repo, "
          f"{LATENCY * 1000:.0f} ms per request, hot interval {HOT_INTERVAL:g} s)")
    print(f"{'repos':>6} {'open MRs':>8} {'req/cycle':>9} {'req/min':>8} {'naive/min':>9} "
          f"{'naive÷lr':>8} {'hot ms':>7} {'cold ms':>7} {'first sight s':>13}")
    results: list[Idle] = []
    for n in sizes:
        r = asyncio.run(measure(n, mrs_per_repo, state_dir, check_naive=n == sizes[0]))
        results.append(r)
        print(f"{n:>6} {r.open_mrs:>8} {r.per_cycle:>9.2f} {r.per_minute:>8.1f} "
              f"{r.naive_per_minute:>9.0f} {r.naive_per_minute / r.per_minute:>8.0f} "
              f"{r.hot_ms:>7.1f} {r.cold_ms:>7.1f} {r.first_cycle_s:>13.1f}")
    small, large = results[0], results[-1]
    if small.naive_checked is not None:
        print(f"naive check: one naive cycle over {small.open_mrs} open MRs made "
              f"{small.naive_checked} requests (counted: {small.open_mrs})")
    ratio = large.per_minute / small.per_minute
    rows = [Row(f"2. idle requests/min, {s.repos} repos ({s.open_mrs} open MRs)",
                f"{s.per_minute:.0f}/min ({s.per_cycle:.2f}/cycle, {s.hot_ms:.0f} ms/cycle)")
            for s in results]
    rows.append(Row(f"2. idle req/min ratio {large.repos} / {small.repos} repos",
                    f"{ratio:.2f}×", "≤ 1.5×", ratio <= 1.5))
    for s in results:
        naive = s.naive_per_minute / s.per_minute
        rows.append(Row(f"2. naive ÷ livereview, {s.repos} repos ({s.open_mrs} open MRs)",
                        f"{naive:.0f}× ({s.naive_per_minute:.0f} vs {s.per_minute:.0f} req/min)",
                        "≥ 50×", naive >= 50))

    # The cold cycle re-fetches every open MR the bot has spoken in, every 30 s, forever.
    bot_sizes = (10, 50) if quick else (10, 200)
    print("\nvariant: one open MR per repo, in which the bot has answered a mention")
    print(f"{'repos':>6} {'req/min':>8} {'cold cycle ms':>13}")
    bot_rows: list[Idle] = []
    for n in bot_sizes:
        r = asyncio.run(measure(n, 1, state_dir, bot_replied=1))
        bot_rows.append(r)
        print(f"{n:>6} {r.per_minute:>8.0f} {r.cold_ms:>13.0f}")
    w_small, w_large = bot_rows
    rows.append(Row(f"2b. idle req/min, 1 MR/repo with a bot reply: {w_small.repos} → "
                    f"{w_large.repos} repos",
                    f"{w_small.per_minute:.0f} → {w_large.per_minute:.0f}/min "
                    f"({w_large.per_minute / w_small.per_minute:.1f}×); cold cycle "
                    f"{w_large.cold_ms / 1000:.1f} s"))
    return rows
