"""Figure 9: Bitbucket Data Center — requests per idle minute and time-to-ack, 10 and 200
repos, against the fake Bitbucket DC at 50 ms per request.

Bitbucket has no "changed since" listing and no conditional requests: a watched repo's
open pull requests are listed newest first (one request while nothing changed) every cycle
while the repo has a hot pull request, else once per `quiet_repo_interval_seconds` (60 s),
with the bot's dashboard in between (sync/quiet.py; figure 15 has the cost per repo);
activities are read only for pull requests that changed.

- idle: every repo has 5 open pull requests whose last activity is an hour old. After the
  first cycle (first sight, no latency), one simulated minute runs as in figure 2: 20 hot
  cycles of 3 s, every 10th cold, the poller's clock moved 3 s per cycle.
- time-to-ack: the real daemon (`App.create`, `app.run`) with default settings; mentions
  arrive at seeded random times on random pull requests, once first sight of every pull
  request is over. Ack = the fake's time of the bot's 👀 reaction (or of its ack reply on a
  server without reactions) minus the comment's. The pull requests were quiet (last touched
  an hour ago), so a repo's first mention waits for its sweep — up to one quiet interval;
  the repo is hot from then on.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from common import LATENCY, Clock, NoLLM, Row, percentile, poll_cycle, record, record_times

from livereview.app.daemon import App
from livereview.core.triggers import acked_for, replied_to
from livereview.hosts.bitbucket_server.payloads import incoming
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.sandbox.llm_server import FakeLLMServer
from livereview.settings import Settings, parse
from livereview.sync.cycle_report import CycleReport

TOKEN, TOKEN_ENV = "BBDC-bench-token-0000", "BENCH_BBDC_TOKEN"
HOT_INTERVAL, CYCLES_PER_MINUTE, COLD_EVERY = 3.0, 20, 10
HUMANS = ("alice", "bob", "carol", "dave")
QUIET = 60.0  # the default quiet_repo_interval_seconds
ACK_TARGET = QUIET + 5  # a quiet repo's mention within one quiet interval + 5 s


def repo_path(i: int) -> str:
    return f"BENCH/repo-{i:03d}"


def populate(fake: FakeBitbucketDC, repos: int, per_repo: int) -> list[tuple[str, int]]:
    prs = []
    for r in range(repos):
        for m in range(per_repo):
            pr = fake.add_pr(repo_path(r), title=f"change {r}.{m}", author=HUMANS[m % 4],
                             files={"a.py": ("x = 1\n", "x = 2\n")})
            fake.add_comment(repo_path(r), pr, author=HUMANS[(m + 1) % 4], text="looks fine")
            prs.append((repo_path(r), pr))
    return prs


def settings(url: str, repos: int, db: Path, llm_url: str | None = None,
             concurrency: int = 4) -> Settings:
    ai: dict[str, Any] = {"api_key_env": ""}
    if llm_url is not None:
        ai.update(base_url=llm_url, model="sandbox", timeout_seconds=30)
    return parse({
        "daemon": {"database_url": f"sqlite:///{db}", "metrics_listen": ""}, "ai": ai,
        "hosts": [{"name": "bbs", "type": "bitbucket-server", "url": url,
                   "token_env": TOKEN_ENV, "max_concurrent_requests": concurrency}],
        "repos": [{"host": "bbs", "path": repo_path(i)} for i in range(repos)],
    }, {TOKEN_ENV: TOKEN})


class SimClock:
    def __init__(self) -> None:
        self.ahead = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now().astimezone() + self.ahead


async def idle_minute(repos: int, state_dir: Path) -> tuple[int, float]:
    """Requests in one simulated idle minute, and the mean hot cycle in ms."""
    clock = Clock()
    clock.rewind(timedelta(hours=1))
    fake = FakeBitbucketDC(token=TOKEN, clock=clock)
    populate(fake, repos, 5)
    clock.reset()
    with FakeBitbucketDCServer(fake) as server:
        app = App.create(settings(server.url, repos, state_dir / f"bbs-idle-{repos}.db"),
                         answerer=NoLLM())
        try:
            await poll_cycle(app, cold=True)
            sim = SimClock()
            for poller in app.pollers.values():
                poller.clock = sim
            fake.reset_requests()
            server.latency_seconds = LATENCY
            hot: list[float] = []
            for i in range(1, CYCLES_PER_MINUTE + 1):
                sim.ahead += timedelta(seconds=HOT_INTERVAL)
                started = time.perf_counter()
                await poll_cycle(app, cold=i % COLD_EVERY == 0)
                if i % COLD_EVERY:
                    hot.append(time.perf_counter() - started)
        finally:
            await app.close()
        return len(fake.requests), sum(hot) / len(hot) * 1000


@dataclass
class Acks:
    mentions: int
    acks: list[float]
    replies: list[float]
    duplicates: int


async def acks(repos: int, count: int, span: float, state_dir: Path, *,
               reactions: bool = True, seed: int = 9, concurrency: int = 4) -> Acks:
    clock = Clock()
    clock.rewind(timedelta(hours=1))
    fake = FakeBitbucketDC(token=TOKEN, clock=clock, reactions=reactions)
    prs = populate(fake, repos, 2)
    clock.reset()
    rng = random.Random(seed)
    arrivals = sorted(rng.uniform(0, span) for _ in range(count))
    with FakeBitbucketDCServer(fake, latency_seconds=LATENCY) as server, \
            FakeLLMServer() as llm:
        app = App.create(settings(server.url, repos, state_dir / f"bbs-ack-{repos}-"
                                  f"{reactions}-{concurrency}.db", llm.url, concurrency))
        cycles: list[CycleReport] = []  # reports of the daemon's cycles
        app.on_cycle = lambda reports: cycles.extend(reports.values())
        stop = asyncio.Event()
        task = asyncio.create_task(app.run(stop))
        written: list[tuple[int, datetime]] = []
        try:
            # First sight of every PR (3 requests each, sharing the host's 4 connections
            # with every cycle's listing) goes on in the background for a while: not what
            # is measured. Mentions start once every PR's activities were read.
            while sum(1 for _, path, _ in fake.requests if path.endswith("/activities")
                      ) < len(prs) or not cycles:
                if task.done():
                    await task
                await asyncio.sleep(0.1)
            await asyncio.sleep(HOT_INTERVAL)
            start = time.monotonic()
            for i, at in enumerate(arrivals):
                await asyncio.sleep(max(0.0, start + at - time.monotonic()))
                repo, pr = rng.choice(prs)
                c = fake.add_comment(repo, pr, author=rng.choice(HUMANS),
                                     text=f"@livereview question {i}: why?")
                written.append((int(c["id"]), fake.now()))
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                done = {replied_to(incoming(str(c["text"])))
                        for c in fake.comments_by("livereview")}
                if len(done - {None}) >= count:
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)
        finally:
            stop.set()
            await task
            await app.close()
    mine = fake.comments_by("livereview")
    created = dict(written)

    def seconds(c: dict[str, Any], cid: int) -> float:
        return float(c["createdDate"]) / 1000 - created[cid].timestamp()

    acked = [(at - created[cid]).total_seconds()
             for (cid, _, who), at in fake.reacted_at.items() if who == "livereview"]
    acked += [seconds(c, int(t)) for c in mine if (t := acked_for(incoming(str(c["text"]))))]
    answered = [(int(t), seconds(c, int(t))) for c in mine
                if (t := replied_to(incoming(str(c["text"]))))]
    dup = len(answered) - len({cid for cid, _ in answered})
    return Acks(count, acked, [s for _, s in answered], dup)


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    sizes = (10, 200)
    print(f"\n## 9. Bitbucket Data Center ({LATENCY * 1000:.0f} ms per request, hot interval "
          f"{HOT_INTERVAL:g} s, 5 open PRs per repo for the idle minute)")
    rows: list[Row] = []
    print(f"{'repos':>6} {'req/min':>8} {'req/min/repo':>12} {'hot cycle ms':>12}")
    for n in sizes:
        requests, hot_ms = asyncio.run(idle_minute(n, state_dir))
        print(f"{n:>6} {requests:>8} {requests / n:>12.1f} {hot_ms:>12.0f}")
        record("idle", "Bitbucket Data Center (fig. 9)", [(n, requests)])
        rows.append(Row(f"9. Bitbucket DC idle requests/min, {n} repos",
                        f"{requests}/min ({requests / n:.0f} per repo; hot cycle "
                        f"{hot_ms:.0f} ms)"))
    count, span = (10, 10.0) if quick else (30, 30.0)
    for n in sizes:
        for reactions in (True, False) if n == sizes[0] or not quick else (True,):
            out = asyncio.run(acks(n, count, span, state_dir, reactions=reactions))
            how = "👀 reaction" if reactions else "ack reply (no reactions)"
            p50, p95 = percentile(out.acks, 50), percentile(out.acks, 95)
            record_times(f"Bitbucket DC, {n} repos, {how} (fig. 9)", out.acks)
            print(f"{n} repos, {how}: {len(out.acks)}/{out.mentions} acked, time-to-ack p50 "
                  f"{p50:.2f} s, p95 {p95:.2f} s; replies {len(out.replies)}, "
                  f"duplicates {out.duplicates}")
            ok = len(out.acks) == out.mentions and out.duplicates == 0
            rows.append(Row(f"9. Bitbucket DC time-to-ack p50/p95, {n} repos, {how}",
                            f"{p50:.2f} / {p95:.2f} s ({len(out.acks)}/{out.mentions} acked, "
                            f"dup {out.duplicates})",
                            f"p95 ≤ {ACK_TARGET:g} s (quiet repos), all acked, 0 dup",
                            ok and p95 <= ACK_TARGET))
    # Every cycle's listing queues n requests on the host's connections ahead of the ack:
    # with many repos, more connections (hosts[].max_concurrent_requests) shorten the wait.
    out = asyncio.run(acks(sizes[-1], count, span, state_dir, concurrency=8))
    p50, p95 = percentile(out.acks, 50), percentile(out.acks, 95)
    print(f"{sizes[-1]} repos, 👀 reaction, max_concurrent_requests 8: time-to-ack p50 "
          f"{p50:.2f} s, p95 {p95:.2f} s; duplicates {out.duplicates}")
    rows.append(Row(f"9. Bitbucket DC time-to-ack p50/p95, {sizes[-1]} repos, 👀, "
                    "max_concurrent_requests 8", f"{p50:.2f} / {p95:.2f} s "
                    f"({len(out.acks)}/{out.mentions} acked, dup {out.duplicates})",
                    f"p95 ≤ {ACK_TARGET:g} s (quiet repos), all acked, 0 dup",
                    len(out.acks) == out.mentions and not out.duplicates
                    and p95 <= ACK_TARGET))
    return rows
