"""Figure 2d: time to 👀 on GitHub with 200 watched repositories, the real daemon.

The daemon runs as `livereview run` does (`App.create`, `app.run(stop)`, default settings:
hot interval 3 s) against the fake GitHub at 50 ms per request, the fake LLM answering at
once. 200 repos hold one PR each, quiet for an hour; one more PR is active (people
commented a minute ago). Mentions arrive at seeded random times, half on the active PR and
half on quiet PRs of random repos. Time to 👀: from writing the mention to the bot's eyes
reaction appearing in the fake's state, observed every 20 ms (the fake's own timestamps
have whole seconds only). Every mention must get exactly one answer.

Targets (docs/DESIGN.md §11): p50 ≤ 1.5 s and p95 ≤ 2.5 s on an active PR; ≤ 5 s on any other PR
(p95 here).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ack_phases import TimedFake, TimedServer, phases, summary
from common import LATENCY, TOKEN_ENV, Row, percentile, record_times, repo_path

from livereview.app.daemon import App
from livereview.core.triggers import replied_to
from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.llm_server import FakeLLM, FakeLLMServer
from livereview.settings.loading import parse
from livereview.sync.cycle_report import CycleReport

GH_TOKEN = "ghp_bench-token-0000"
ACTIVE = "bench/active"


@dataclass(frozen=True)
class Asked:
    repo: str
    comment_id: int
    written: float  # time.monotonic()
    active: bool


def _populate(fake: FakeGitHub, repos: int) -> None:
    offset = [timedelta(hours=1)]
    fake._clock = lambda: datetime.now(UTC) - offset[0]  # the fake's clock: old activity
    for i in range(repos):
        fake.add_pr(repo_path(i), title=f"change {i}", author="alice",
                    files={"a.py": ("x = 1\n", "x = 2\n")})
        fake.add_issue_comment(repo_path(i), 1, author="bob", body="looks fine")
    fake.add_pr(ACTIVE, title="busy change", author="alice",
                files={"a.py": ("x = 1\n", "x = 2\n")})
    offset[0] = timedelta(minutes=1)
    fake.add_issue_comment(ACTIVE, 1, author="bob", body="what about the lock?")
    fake._clock = lambda: datetime.now(UTC)


def _eyes(fake: FakeGitHub, asked: Asked) -> bool:
    with fake.lock:
        comment = fake.find_issue_comment(asked.repo, asked.comment_id)
        return any(r.content == "eyes" and r.user.login == "livereview"
                   for r in comment.reactions)


@dataclass(frozen=True)
class Acked:
    asked: Asked
    seconds: float  # to the 👀 (NaN: never)
    phases: tuple[float, ...]  # ack_phases.PHASES


async def drive(repos: int, count: int, span: float, state_dir: Path) -> tuple[
        list[Acked], int, int]:
    """Each mention with its time to 👀 and phases; answered; duplicated."""
    fake = TimedFake(token=GH_TOKEN)
    fake.add_user("alice")
    fake.add_user("bob")
    _populate(fake, repos)
    rng = random.Random(26)
    arrivals = sorted(rng.uniform(0, span) for _ in range(count))
    os.environ[TOKEN_ENV] = GH_TOKEN
    with TimedServer(fake, latency_seconds=LATENCY) as server, \
            FakeLLMServer(FakeLLM()) as llm:
        conf = parse({
            "daemon": {"database_url": f"sqlite:///{state_dir / 'gh-ack.db'}",
                       "metrics_listen": ""},
            "ai": {"api_key_env": "", "base_url": llm.url, "model": "sandbox",
                   "timeout_seconds": 30},
            "hosts": [{"name": "gh", "type": "github", "url": server.enterprise_url,
                       "token_env": TOKEN_ENV}],
            "repos": [{"host": "gh", "path": p} for p in
                      [*(repo_path(i) for i in range(repos)), ACTIVE]],
        }, {TOKEN_ENV: GH_TOKEN})
        app = App.create(conf)
        cycles: list[CycleReport] = []
        app.on_cycle = lambda reports: cycles.extend(reports.values())
        stop = asyncio.Event()
        task = asyncio.create_task(app.run(stop))
        asked: list[Asked] = []
        acked: dict[int, float] = {}
        try:
            # First sight is not what is measured: until the sweep that read every PR is
            # done (its report's counts grow until its MRs are; counting every cycle's
            # reads, the active PR's hot reads made mentions start during first sight).
            while not any(c.planned >= repos + 1 and c.fetched + c.errors >= c.planned
                          for c in cycles):
                if task.done():
                    await task
                await asyncio.sleep(0.05)
            start = time.monotonic()
            pending = list(enumerate(arrivals))
            while pending or len(acked) < len(asked):
                now = time.monotonic()
                while pending and start + pending[0][1] <= now:
                    i, _ = pending.pop(0)
                    active = i % 2 == 0
                    repo = ACTIVE if active else repo_path(rng.randrange(repos))
                    c = fake.add_issue_comment(repo, 1, author="alice",
                                               body=f"@livereview question {i}: why?")
                    asked.append(Asked(repo, int(c["id"]), time.monotonic(), active))
                for a in asked:
                    if a.comment_id not in acked and _eyes(fake, a):
                        acked[a.comment_id] = time.monotonic() - a.written
                if now > start + span + 60:
                    break
                await asyncio.sleep(0.02)
            ids = {f"issuecomment-{a.comment_id}" for a in asked}
            for _ in range(300):  # until every mention is answered (or 30 s)
                answers = [t for c in fake.comments_by("livereview")
                           if (t := replied_to(str(c["body"]))) in ids]
                if set(answers) >= ids:
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(1.0)  # a duplicate would show up now
        finally:
            stop.set()
            await task
            await app.close()
        answers = [t for c in fake.comments_by("livereview")
                   if (t := replied_to(str(c["body"]))) in ids]
    results = [Acked(a, acked.get(a.comment_id, float("nan")),
                     phases(server.log, a.repo, 1, a.comment_id, a.written)) for a in asked]
    return results, len(set(answers)), len(answers) - len(set(answers))


def run(state_dir: Path, *, quick: bool = False) -> list[Row]:
    # Quick: 20 mentions per kind of PR, so that p95 is not the maximum of 10.
    repos, count, span = (200, 40, 60.0) if quick else (200, 60, 90.0)
    print(f"\n## 2d. GitHub time to 👀, {repos} watched repos + 1 active PR, {count} mentions "
          f"over {span:g} s, default settings, {LATENCY * 1000:.0f} ms per request")
    results, answered, duplicated = asyncio.run(drive(repos, count, span, state_dir))
    rows = []
    missing = count - answered
    note = [f"{missing} unanswered, {duplicated} duplicated"] if missing or duplicated else []
    print(f"answered {answered}/{count}, duplicated {duplicated}")
    for label, active, p50_target, p95_target in (("active PR", True, 1.5, 2.5),
                                                  ("quiet PRs", False, None, 5.0)):
        times = [r.seconds for r in results if r.asked.active == active]
        record_times(f"GitHub, {repos} repos, {label} (fig. 2d)", times)
        p50, p95 = percentile(times, 50), percentile(times, 95)
        print(f"{label:>10}: {len(times)} mentions, 👀 p50 {p50:.2f} s, p95 {p95:.2f} s, "
              f"max {max(times, default=float('nan')):.2f} s")
        print(summary(label, [r.phases for r in results if r.asked.active == active]))
        if p50_target is not None:
            rows.append(Row(f"2d. GitHub time to 👀 p50, {label}", f"{p50:.2f} s",
                            f"≤ {p50_target:g} s", p50 <= p50_target and not note, list(note)))
        rows.append(Row(f"2d. GitHub time to 👀 p95, {label}", f"{p95:.2f} s",
                        f"≤ {p95_target:g} s", p95 <= p95_target and not note, list(note)))
    return rows
