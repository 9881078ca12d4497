"""Figures 1 and 6: the real daemon, in-process, against the fake GitLab and fake LLM.

The daemon runs exactly as `livereview run` does (`App.create(settings)`, then
`app.run(stop)` as a task, like demo.py); the benchmark writes mentions into the fake
GitLab and reads the outcome back from the fake's own state: the 👀 award on each
mention and the bot's reply carrying the mention's hidden marker. Times come from the
fake's timestamps (note created_at → award created_at / reply created_at, ms precision),
so the observer's polling adds no error.

1. time-to-ack / time-to-reply: mentions arrive at seeded random times on several MRs,
   default settings (hot interval 3 s).
6. throughput: a burst of mentions at once; replies/s until every mention has exactly
   one reply.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from common import (
    BOT,
    DIFF_LINE,
    HUMANS,
    LATENCY,
    SCHEDULER_ERRORS,
    BenchGitLab,
    Clock,
    Row,
    parse_time,
    percentile,
    populate,
    record_times,
    repo_path,
    settings,
)

from livereview.app.daemon import App
from livereview.core.triggers import replied_to
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.sandbox.llm_server import FakeLLM, FakeLLMServer
from livereview.sync.cycle_report import CycleReport


@dataclass
class Mention:
    repo: str
    iid: int
    note_id: int
    created: datetime


@dataclass
class Outcome:
    mentions: list[Mention]
    acks: dict[int, float]  # note id → seconds from creation to the bot's 👀
    replies: dict[int, list[float]]  # note id → seconds to each bot reply carrying its marker
    cycles: list[CycleReport] = field(default_factory=list)
    llm_calls: int = 0
    wall_seconds: float = 0.0  # first mention written → last reply seen
    scheduler_errors: list[str] = field(default_factory=list)  # APScheduler's job errors
    requests: int = 0  # GitLab requests from the first mention to the end
    request_kinds: Counter[str] = field(default_factory=Counter)  # the same, by kind

    @property
    def answered(self) -> int:
        return sum(1 for m in self.mentions if self.replies.get(m.note_id))

    @property
    def duplicates(self) -> int:
        return sum(1 for m in self.mentions if len(self.replies.get(m.note_id, [])) > 1)

    @property
    def missing(self) -> int:
        return len(self.mentions) - self.answered

    def reply_times(self) -> list[float]:
        return [min(v) for v in self.replies.values() if v]


def read_outcome(gitlab: FakeGitLab, mentions: Sequence[Mention]) -> tuple[
        dict[int, float], dict[int, list[float]]]:
    by_id = {m.note_id: m for m in mentions}
    replies: dict[int, list[float]] = {m.note_id: [] for m in mentions}
    for note in gitlab.notes_by(BOT):
        target = replied_to(str(note["body"]))
        if target is not None and target.isdigit() and int(target) in by_id:
            m = by_id[int(target)]
            replies[m.note_id].append((parse_time(note["created_at"]) - m.created)
                                      .total_seconds())
    acks: dict[int, float] = {}
    for m in mentions:
        mine = [a for a in gitlab.awards_on(m.repo, m.iid, m.note_id)
                if a["user"]["username"] == BOT]
        if mine:
            acks[m.note_id] = min((parse_time(a["created_at"]) - m.created).total_seconds()
                                  for a in mine)
    return acks, replies


def request_kind(method: str, path: str) -> str:
    """What a request to the fake GitLab did, for figure 6's breakdown per reply."""
    if method == "POST" and path.endswith("/award_emoji"):
        return "👀"
    if method == "POST" and path.endswith("/notes"):
        return "reply"
    if path.endswith(("/diffs", "/changes")) or "/versions" in path:
        return "diff"
    return "poll" if method == "GET" else f"{method} other"


def count_answered(gitlab: FakeGitLab, ids: set[str]) -> int:
    return len({t for n in gitlab.notes_by(BOT) if (t := replied_to(str(n["body"]))) in ids})


def write_mention(gitlab: FakeGitLab, rng: random.Random, mrs: Sequence[tuple[str, int]],
                  i: int) -> Mention:
    repo, iid = rng.choice(mrs)
    kwargs: dict[str, Any] = {}
    if i % 4 == 3:  # every fourth question is on a diff line (the daemon fetches the diff)
        kwargs["position"] = dict(DIFF_LINE)
    note = gitlab.add_note(repo, iid, author=rng.choice(HUMANS),
                           body=f"@livereview question {i}: why is this needed?", **kwargs)
    return Mention(repo, iid, int(note["id"]), parse_time(note["created_at"]))


async def drive(*, repos: int, mrs_per_repo: int, arrivals: Sequence[float], state_dir: Path,
                name: str, daemon: dict[str, Any] | None = None,
                host: dict[str, Any] | None = None, llm_delay: float = 0.0,
                seed: int = 1, answer_within: float = 120.0, advertised_limit: int | None = None
                ) -> Outcome:
    """Run the daemon, write one mention at each arrival offset (seconds after the
    daemon's first cycle), wait until all are answered (or `answer_within` seconds after
    the last)."""
    clock = Clock()
    clock.rewind(timedelta(hours=1))  # the MRs and their old comments are an hour old
    gitlab = BenchGitLab(clock=clock, advertised_limit=advertised_limit)
    mrs = [(r, i) for r, i in populate(gitlab, repos, mrs_per_repo)]
    clock.reset()
    rng = random.Random(seed)
    llm = FakeLLM(delay_seconds=llm_delay)
    with FakeGitLabServer(gitlab, latency_seconds=LATENCY) as server, \
            FakeLLMServer(llm) as llm_server:
        conf = settings(server.url, [repo_path(i) for i in range(repos)],
                        state_dir / f"{name}.db", llm_url=llm_server.url, daemon=daemon,
                        host=host)
        app = App.create(conf)
        errors_before = len(SCHEDULER_ERRORS.seen)
        cycles: list[CycleReport] = []
        app.on_cycle = lambda reports: cycles.extend(reports.values())
        stop = asyncio.Event()
        task = asyncio.create_task(app.run(stop))
        mentions: list[Mention] = []
        try:
            while not cycles:  # first sight of every MR is not what is measured
                if task.done():
                    await task
                await asyncio.sleep(0.05)
            first_cycles = len(cycles)
            requests_before = len(gitlab.requests)
            start = time.monotonic()
            for i, at in enumerate(arrivals):
                delay = start + at - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                mentions.append(write_mention(gitlab, rng, mrs, i))
            ids = {str(m.note_id) for m in mentions}
            deadline = time.monotonic() + answer_within
            while time.monotonic() < deadline:
                if count_answered(gitlab, ids) >= len(ids):
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)  # a duplicate reply would show up now
        finally:
            stop.set()
            await task
            await app.close()
        acks, replies = read_outcome(gitlab, mentions)
        ends = [m.created + timedelta(seconds=max(replies[m.note_id]))
                for m in mentions if replies[m.note_id]]
        wall = (max(ends) - mentions[0].created).total_seconds() if ends else float("nan")
        during = gitlab.requests[requests_before:]
        return Outcome(mentions, acks, replies, cycles[first_cycles:], len(llm.prompts), wall,
                       SCHEDULER_ERRORS.seen[errors_before:], len(during),
                       Counter(request_kind(method, path) for method, path, _ in during))


def _cycle_summary(cycles: Sequence[CycleReport]) -> str:
    if not cycles:
        return "no cycles"
    secs = [c.seconds for c in cycles]
    fetched = sum(c.fetched for c in cycles) / len(cycles)
    requests = sum(c.requests for c in cycles) / len(cycles)
    return (f"{len(cycles)} cycles: mean {sum(secs) / len(secs):.2f} s, p95 "
            f"{percentile(secs, 95):.2f} s, max {max(secs):.2f} s; "
            f"{fetched:.1f} MRs fetched and {requests:.1f} requests per cycle")


def latency(state_dir: Path, *, quick: bool) -> list[Row]:
    count, span = (20, 10.0) if quick else (100, 60.0)
    repos, per_repo = 5, 2
    rng = random.Random(42)
    arrivals = sorted(rng.uniform(0, span) for _ in range(count))
    print(f"\n## 1. time to ack / reply: {count} mentions over {span:g} s on "
          f"{repos * per_repo} MRs, default settings, {LATENCY * 1000:.0f} ms per GitLab "
          "request, fake LLM answering at once")
    out = asyncio.run(drive(repos=repos, mrs_per_repo=per_repo, arrivals=arrivals,
                            state_dir=state_dir, name="latency", seed=42))
    acks, replies = list(out.acks.values()), out.reply_times()
    record_times("GitLab (fig. 1)", acks)
    print(f"answered {out.answered}/{len(out.mentions)}, duplicates {out.duplicates}, "
          f"acked {len(acks)}")
    for what, values in (("ack", acks), ("reply", replies)):
        print(f"time to {what:5}: p50 {percentile(values, 50):.2f} s, p95 "
              f"{percentile(values, 95):.2f} s, max {max(values, default=float('nan')):.2f} s")
    print(f"poll: {_cycle_summary(out.cycles)}")
    _print_scheduler_errors(out)
    note = [] if out.missing == 0 else [f"{out.missing} mentions never answered"]
    rows = []
    for what, values, p50_target, p95_target in (("ack", acks, 3.0, 6.0),
                                                 ("reply", replies, 3.0, 6.0)):
        p50, p95 = percentile(values, 50), percentile(values, 95)
        rows.append(Row(f"1. time-to-{what} p50 ({count} mentions)", f"{p50:.2f} s",
                        f"≤ {p50_target:g} s", p50 <= p50_target and not note, list(note)))
        rows.append(Row(f"1. time-to-{what} p95 ({count} mentions)", f"{p95:.2f} s",
                        f"≤ {p95_target:g} s", p95 <= p95_target and not note, list(note)))
    return rows


@dataclass(frozen=True)
class Config:
    label: str
    daemon: dict[str, Any] = field(default_factory=dict)
    host: dict[str, Any] = field(default_factory=dict)


THROUGHPUT_CONFIGS = (
    Config("default settings (max_concurrent_jobs 4, host max_concurrent_requests 4)"),
    Config("max_concurrent_jobs 16", {"max_concurrent_jobs": 16}),
    Config("max_concurrent_jobs 16, hot_poll_interval_seconds 1",
           {"max_concurrent_jobs": 16, "hot_poll_interval_seconds": 1}),
    Config("max_concurrent_jobs 32, hosts[].max_concurrent_requests 16",
           {"max_concurrent_jobs": 32}, {"max_concurrent_requests": 16}),
)


def _throughput_run(n: int, config: Config, count: int, repos: int, per_repo: int,
                    state_dir: Path, *, advertised_limit: int | None = None) -> Outcome:
    return asyncio.run(drive(repos=repos, mrs_per_repo=per_repo, arrivals=[0.0] * count,
                             state_dir=state_dir, name=f"throughput-{n}", daemon=config.daemon,
                             host=config.host, seed=6, answer_within=300.0,
                             advertised_limit=advertised_limit))


def _rates(out: Outcome) -> tuple[float, float]:
    """Replies/s from the burst to the last reply, and from the first reply to the last."""
    rate = out.answered / out.wall_seconds if out.wall_seconds > 0 else 0.0
    times = sorted(out.reply_times())
    steady = ((len(times) - 1) / (times[-1] - times[0])
              if len(times) > 1 and times[-1] > times[0] else float("nan"))
    return rate, steady


def throughput(state_dir: Path, *, quick: bool, target: float = 10.0) -> list[Row]:
    count, repos, per_repo = (60, 4, 2) if quick else (300, 10, 2)
    print(f"\n## 6. reply throughput: {count} mentions at once on {repos * per_repo} MRs "
          f"(≤ 30 per MR: the default max_replies_per_mr_per_hour), {LATENCY * 1000:.0f} ms "
          "per GitLab request, fake LLM answering at once")
    rows: list[Row] = []
    configs = (THROUGHPUT_CONFIGS[0], THROUGHPUT_CONFIGS[2]) if quick else THROUGHPUT_CONFIGS
    for n, config in enumerate(configs):
        out = _throughput_run(n, config, count, repos, per_repo, state_dir)
        rate, steady = _rates(out)
        print(f"{config.label}: {out.answered}/{count} answered in {out.wall_seconds:.1f} s "
              f"→ {rate:.1f} replies/s (first→last reply {steady:.1f}/s); "
              f"duplicates {out.duplicates}, missing {out.missing}, LLM calls {out.llm_calls}, "
              f"{out.requests / max(out.answered, 1):.1f} GitLab requests per reply")
        answered = max(out.answered, 1)
        print("  GitLab requests per reply by kind: " + ", ".join(
            f"{kind} {n / answered:.2f}" for kind, n in out.request_kinds.most_common()))
        firsts = ", ".join(f"{t:.2f}" for t in sorted(out.reply_times())[:12])
        print(f"  first replies at (s after the burst): {firsts}")
        print(f"  poll: {_cycle_summary(out.cycles)}")
        _print_scheduler_errors(out)
        clean = out.duplicates == 0 and out.missing == 0
        rows.append(Row(f"6. replies/s, {count} at once — {config.label}",
                        f"{rate:.1f}/s (loss {out.missing}, dup {out.duplicates})",
                        f"≥ {target:g}/s, 0 loss, 0 dup", rate >= target and clean))
        if rate >= target and clean:
            per_reply = out.requests / max(out.answered, 1)
            print(f"  at {per_reply:.1f} GitLab requests per reply, a host allowing 600 "
                  f"requests/min (the stock fake's RateLimit-Limit) caps this at "
                  f"{600 / per_reply / 60:.1f} replies/s")
            break
    return rows


def _print_scheduler_errors(out: Outcome) -> None:
    if out.scheduler_errors:
        kinds = Counter(e.rsplit(" [", 1)[-1].rstrip("]") for e in out.scheduler_errors)
        print(f"  APScheduler logged {len(out.scheduler_errors)} failed poll tick(s): "
              + ", ".join(f"{n}× {k}" for k, n in kinds.items()))
