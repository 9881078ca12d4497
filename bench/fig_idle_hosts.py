"""Figure 2c: idle cost per host — requests per minute and CPU — at 1, 20 and 200 repos.

The fake host (GitLab or GitHub) runs in a child process, so the CPU measured is the
daemon's alone; it answers every request after 50 ms. Each repo holds one open MR whose
last activity is an hour old (outside the hot window and the listing's overlap). After
first sight and one more cycle, one simulated minute of the daemon's poll runs: 20 cycles
of 3 s, every tenth cold, as `App.tick` schedules them, the poller's clock (and GitHub's
X-Poll-Interval clock) moved 3 s per cycle. Counted: requests the fake saw in that minute;
CPU: this process's CPU time over it, as a share of one core for one minute.

Targets (docs/DESIGN.md §11): idle requests per minute ≤ 20 and flat (200 / 1 ≤ 1.2); idle CPU
≤ 1 % of one core at 200 repos.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from multiprocessing.connection import Connection
from pathlib import Path

from common import (
    LATENCY,
    TOKEN,
    TOKEN_ENV,
    NoLLM,
    Row,
    poll_cycle,
    record,
    repo_path,
    settings,
)

from livereview.app.daemon import App
from livereview.hosts.github.adapter import GitHub
from livereview.settings import Settings
from livereview.settings.loading import parse

HOT_INTERVAL = 3.0
CYCLES = int(60 / HOT_INTERVAL)
COLD_EVERY = 10
SIZES = (1, 20, 200)
GH_TOKEN = "ghp_bench-token-0000"


def _serve(kind: str, repos: int, pipe: Connection) -> None:
    """The child: a fake host with `repos` quiet MRs, answering commands on `pipe`."""
    from livereview.sandbox.github.server import FakeGitHubServer
    from livereview.sandbox.github.state import FakeGitHub
    from livereview.sandbox.gitlab.server import FakeGitLabServer
    from livereview.sandbox.gitlab.state import FakeGitLab

    offset = [timedelta(hours=1)]

    def clock() -> datetime:
        return datetime.now(UTC) - offset[0]

    fake: FakeGitHub | FakeGitLab
    server: FakeGitHubServer | FakeGitLabServer
    if kind == "github":
        fake = FakeGitHub(token=GH_TOKEN, clock=clock)
        for i in range(repos):
            fake.add_pr(repo_path(i), title=f"change {i}", author="alice",
                        files={"a.py": ("x = 1\n", "x = 2\n")})
            fake.add_issue_comment(repo_path(i), 1, author="bob", body="looks fine")
        server = FakeGitHubServer(fake)
    else:
        fake = FakeGitLab(token=TOKEN, clock=clock, rate_limit_per_minute=None)
        for i in range(repos):
            fake.add_project(repo_path(i))
            iid = fake.add_mr(repo_path(i), title=f"change {i}", author="alice",
                              files={"a.py": ("x = 1\n", "x = 2\n")})
            fake.add_note(repo_path(i), iid, author="bob", body="looks fine")
        server = FakeGitLabServer(fake)
    offset[0] = timedelta(0)
    with server:
        pipe.send(server.enterprise_url if isinstance(server, FakeGitHubServer) else server.url)
        while True:
            command = pipe.recv()
            if command == "stop":
                return
            if command == "reset":
                fake.reset_requests()
                pipe.send(None)
            elif command == "count":
                pipe.send(len(fake.requests))
            elif isinstance(command, float):
                server.latency_seconds = command
                pipe.send(None)


def _settings(kind: str, url: str, repos: int, db: Path) -> Settings:
    paths = [repo_path(i) for i in range(repos)]
    if kind == "gitlab":
        return settings(url, paths, db)
    return parse({
        "daemon": {"database_url": f"sqlite:///{db}", "metrics_listen": ""},
        "ai": {"api_key_env": ""},
        "hosts": [{"name": "gh", "type": "github", "url": url, "token_env": TOKEN_ENV}],
        "repos": [{"host": "gh", "path": p} for p in paths],
    }, {TOKEN_ENV: GH_TOKEN})


class SimClock:
    def __init__(self) -> None:
        self.ahead = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now().astimezone() + self.ahead

    def monotonic(self) -> float:
        return time.monotonic() + self.ahead.total_seconds()


@dataclass(frozen=True)
class IdleCost:
    host: str
    repos: int
    requests: int  # in one simulated minute
    cpu_seconds: float  # the daemon's, over that minute

    @property
    def cpu_share(self) -> float:
        return self.cpu_seconds / 60.0


async def _minute(kind: str, url: str, repos: int, db: Path, pipe: Connection) -> IdleCost:
    app = App.create(_settings(kind, url, repos, db), answerer=NoLLM())
    try:
        await poll_cycle(app, cold=True)  # first sight, no latency: not measured
        sim = SimClock()
        for poller in app.pollers.values():
            poller.clock = sim
        for host in app.hosts.values():
            if isinstance(host, GitHub):
                host.notifications.clock = sim.monotonic
        sim.ahead += timedelta(seconds=HOT_INTERVAL)
        await poll_cycle(app)  # the watermark exists from here on
        pipe.send(LATENCY)
        pipe.recv()
        pipe.send("reset")
        pipe.recv()
        cpu = time.process_time()
        for i in range(1, CYCLES + 1):
            sim.ahead += timedelta(seconds=HOT_INTERVAL)
            await poll_cycle(app, cold=i % COLD_EVERY == 0)
        cpu = time.process_time() - cpu
        pipe.send("count")
        requests = int(pipe.recv())
    finally:
        await app.close()
    return IdleCost(kind, repos, requests, cpu)


def measure(kind: str, repos: int, state_dir: Path) -> IdleCost:
    os.environ[TOKEN_ENV] = GH_TOKEN if kind == "github" else TOKEN
    ours, theirs = multiprocessing.Pipe()
    child = multiprocessing.get_context("fork").Process(
        target=_serve, args=(kind, repos, theirs), daemon=True)
    child.start()
    try:
        url = ours.recv()
        return asyncio.run(_minute(kind, url, repos, state_dir / f"idle-{kind}-{repos}.db",
                                   ours))
    finally:
        ours.send("stop")
        child.join(30)


def run(state_dir: Path, *, quick: bool = False, sizes: tuple[int, ...] = SIZES
        ) -> list[Row]:
    sizes = (1, 20) if quick else sizes
    print(f"\n## 2c. idle cost per host ({LATENCY * 1000:.0f} ms per request, one simulated "
          f"minute of {CYCLES} cycles; the fake host in its own process)")
    print(f"{'host':>7} {'repos':>6} {'req/min':>8} {'CPU s/min':>10} {'CPU % core':>10}")
    rows: list[Row] = []
    for kind in ("github", "gitlab"):
        results = []
        for n in sizes:
            r = measure(kind, n, state_dir)
            results.append(r)
            record("idle", f"{'GitHub' if kind == 'github' else 'GitLab'} (fig. 2c)",
                   [(n, r.requests)])
            print(f"{kind:>7} {n:>6} {r.requests:>8} {r.cpu_seconds:>10.3f} "
                  f"{r.cpu_share * 100:>9.2f}%")
            rows.append(Row(f"2c. {kind} idle requests/min, {n} repos", f"{r.requests}/min",
                            "≤ 20", r.requests <= 20))
        small, large = results[0], results[-1]
        ratio = large.requests / max(1, small.requests)
        rows.append(Row(f"2c. {kind} idle req/min ratio {large.repos} / {small.repos} repos",
                        f"{ratio:.2f}×", "≤ 1.2×", ratio <= 1.2))
        rows.append(Row(f"2c. {kind} idle CPU, {large.repos} repos",
                        f"{large.cpu_share * 100:.2f} % of a core",
                        "≤ 1 %", large.cpu_share <= 0.01))
    return rows
