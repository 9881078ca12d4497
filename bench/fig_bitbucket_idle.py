"""Figure 15: Bitbucket Data Center and Cloud — idle requests per repo per minute and idle
CPU at 1, 20 and 200 repos, and how long a mention on a quiet repo waits.

Bitbucket lists each repo with a request of its own and has no change feed: a repo is
listed every hot cycle only while it has a hot pull request, all repos once per
`quiet_repo_interval_seconds` (60 s), and Data Center's dashboard (one request for every
repo) between sweeps, at most once per repo per quiet interval (sync/quiet.py).

Every repo has 2 open pull requests last touched an hour ago. After first sight (no
latency, not measured), one simulated minute runs at 50 ms per request: 20 hot cycles, the
pollers' clock moved 3 s per cycle (as figure 9). CPU is the daemon's own — the event
loop's thread and the store's — not the fake's, per simulated minute. Then a mention is
written on a quiet repo right after a sweep (its worst case) and the cycles are counted
until its reply job exists; on Data Center, the bot is also added as a reviewer of a pull
request in another quiet repo, and the cycles until that pull request is read are counted.
Cloud runs with a scaled quota (10 000 an hour would not cover 200 repos a minute: the
quota budget of figure 10, not this schedule, then sets the pace).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from common import HUMANS, LATENCY, Clock, NoLLM, Row

from livereview.app.daemon import App
from livereview.hosts.bitbucket_cloud.adapter import BitbucketCloud
from livereview.hosts.bitbucket_cloud.budget import Budget
from livereview.sandbox.bitbucket_cloud.server import FakeBitbucketCloudServer
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.settings import Settings, parse

SECRET = "bb-idle-bench-token-0000"
HOT, QUIET, CYCLES_PER_MINUTE = 3.0, 60.0, 20
SIZES = (1, 20, 200)
TARGET_PER_REPO, TARGET_CPU, TARGET_QUIET_ACK = 2.0, 1.0, QUIET + 5
FILES = {"a.py": ("x = 1\n", "x = 2\n")}
Fake = FakeBitbucketDC | FakeBitbucketCloud


def repo_path(i: int) -> str:
    return f"BENCH/repo-{i:03d}"


def settings(kind: str, url: str, repos: int, db: Path) -> Settings:
    host: dict[str, Any] = {"name": "bb", "type": kind, "url": url, "token_env": "T"}
    if kind == "bitbucket-cloud":
        host["login"] = "livereview"
    return parse({
        "daemon": {"database_url": f"sqlite:///{db}", "metrics_listen": "",
                   "hot_poll_interval_seconds": HOT, "quiet_repo_interval_seconds": QUIET},
        "ai": {"api_key_env": ""}, "hosts": [host],
        "repos": [{"host": "bb", "path": repo_path(i)} for i in range(repos)],
    }, {"T": SECRET})


def daemon_cpu() -> float:
    """CPU seconds of the daemon's threads: this one (the event loop) and the store's."""
    total, tick = time.thread_time(), os.sysconf("SC_CLK_TCK")
    for thread in threading.enumerate():
        if thread.name.startswith("livereview-store") and thread.native_id:
            stat = Path(f"/proc/self/task/{thread.native_id}/stat").read_text()
            fields = stat.rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def populate(fake: Fake, repos: int) -> None:
    for r in range(repos):
        for m in range(2):
            if isinstance(fake, FakeBitbucketDC):
                pr = fake.add_pr(repo_path(r), title=f"change {r}.{m}", author=HUMANS[m],
                                 files=FILES)
                fake.add_comment(repo_path(r), pr, author=HUMANS[m + 1], text="looks fine")
            else:
                pr = fake.add_pr(repo_path(r), title=f"change {r}.{m}", author=HUMANS[m],
                                 files=FILES)
                fake.add_comment(repo_path(r), pr, author=HUMANS[m + 1], body="looks fine")


@dataclass
class Idle:
    kind: str
    repos: int
    requests: int  # over one simulated idle minute
    cpu_seconds: float  # the daemon's, over that minute
    quiet_mention_s: float  # simulated seconds until a quiet repo's mention had its job
    reviewer_s: float | None  # DC: until a PR the bot was asked to review was read

    @property
    def per_repo(self) -> float:
        return self.requests / self.repos

    @property
    def cpu_percent(self) -> float:
        return self.cpu_seconds / 60 * 100


class Sim:
    def __init__(self, clock: Clock) -> None:
        self.clock, self.ahead = clock, timedelta(0)

    def __call__(self) -> Any:
        return self.clock() + self.ahead


async def measure(kind: str, repos: int, state_dir: Path) -> Idle:
    clock = Clock()
    clock.rewind(timedelta(hours=1))
    fake: Fake
    if kind == "bitbucket-server":
        fake = FakeBitbucketDC(token=SECRET, clock=clock)
        server: Any = FakeBitbucketDCServer(fake)
    else:
        fake = FakeBitbucketCloud(token=SECRET, clock=clock, rate_limit_per_hour=10**9)
        server = FakeBitbucketCloudServer(fake)
    for human in HUMANS:
        fake.add_user(human)
    populate(fake, repos)
    clock.reset()
    with server:
        url = server.url if kind == "bitbucket-server" else server.api_url
        app = App.create(settings(kind, url, repos, state_dir / f"{kind}-idle-{repos}.db"),
                         answerer=NoLLM())
        host = app.hosts["bb"]
        if isinstance(host, BitbucketCloud):
            host.budget = Budget(limit=lambda: 10**9)
        try:
            await app.cycle()  # first sight: every repo listed (the first sweep), PRs read
            sim = Sim(clock)
            for poller in app.pollers.values():
                poller.clock = sim
            fake.reset_requests()
            server.latency_seconds = LATENCY
            cpu = daemon_cpu()
            for _ in range(CYCLES_PER_MINUTE):
                sim.ahead += timedelta(seconds=HOT)
                await app.cycle()
            cpu = daemon_cpu() - cpu
            requests = len(fake.requests)
            quiet, reviewer = await mention_and_review(app, fake, sim, repos)
        finally:
            await app.close()
    return Idle(kind, repos, requests, cpu, quiet, reviewer)


async def mention_and_review(app: App, fake: Fake, sim: Sim, repos: int
                             ) -> tuple[float, float | None]:
    """Simulated seconds until a mention on a quiet repo has its reply job, and (DC, two
    repos or more) until a PR the bot was just asked to review is read."""
    if isinstance(fake, FakeBitbucketDC):
        fake.add_comment(repo_path(0), 1, author="alice", text="@livereview why this?")
        if repos > 1:
            fake.add_reviewer(repo_path(repos - 1), 2, "livereview")
    else:
        fake.add_comment(repo_path(0), 1, author="alice", body="@livereview why this?")
    reviewed = f"/{repo_path(repos - 1).split('/')[1]}/pull-requests/2"
    mention: float | None = None
    reviewer: float | None = None
    waited = 0.0
    fake.reset_requests()
    while mention is None or (reviewer is None and isinstance(fake, FakeBitbucketDC)
                              and repos > 1):
        if waited > 4 * QUIET:
            break
        sim.ahead += timedelta(seconds=HOT)
        waited += HOT
        report = (await app.cycle())["bb"]
        if mention is None and report.jobs:
            mention = waited
        if reviewer is None and any(p.endswith(reviewed) for _, p, _ in fake.requests):
            reviewer = waited
    return (mention if mention is not None else float("inf")), reviewer


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    print(f"\n## 15. Bitbucket idle cost per repo ({LATENCY * 1000:.0f} ms per request, hot "
          f"interval {HOT:g} s, quiet interval {QUIET:g} s, 2 open PRs per repo)")
    print(f"{'host':>17} {'repos':>6} {'req/min':>8} {'req/min/repo':>12} {'CPU %':>6} "
          f"{'quiet mention s':>15} {'reviewer s':>10}")
    rows: list[Row] = []
    for kind in ("bitbucket-server", "bitbucket-cloud"):
        for n in SIZES[:2] if quick else SIZES:
            r = asyncio.run(measure(kind, n, state_dir))
            shown = "—" if r.reviewer_s is None else f"{r.reviewer_s:.0f}"
            print(f"{kind:>17} {n:>6} {r.requests:>8} {r.per_repo:>12.2f} "
                  f"{r.cpu_percent:>6.2f} {r.quiet_mention_s:>15.0f} {shown:>10}")
            name = "DC" if kind == "bitbucket-server" else "Cloud"
            rows.append(Row(f"15. Bitbucket {name} idle requests/min per repo, {n} repos",
                            f"{r.per_repo:.2f} ({r.requests}/min)",
                            f"≤ {TARGET_PER_REPO:g}", r.per_repo <= TARGET_PER_REPO))
            rows.append(Row(f"15. Bitbucket {name} idle CPU, {n} repos",
                            f"{r.cpu_percent:.2f} % of a core", f"≤ {TARGET_CPU:g} %",
                            r.cpu_percent <= TARGET_CPU))
            rows.append(Row(f"15. Bitbucket {name} mention on a quiet repo seen, {n} repos",
                            f"{r.quiet_mention_s:.0f} s" + (
                                "" if r.reviewer_s is None else
                                f" (bot added as reviewer: read after {r.reviewer_s:.0f} s)"),
                            f"≤ {TARGET_QUIET_ACK:g} s",
                            r.quiet_mention_s <= TARGET_QUIET_ACK))
    return rows
