"""Shared pieces of the benchmark suite: the loopback fakes, settings, result rows.

Everything runs on 127.0.0.1. Benchmarks print figures; they never assert.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from livereview import log_setup as logs
from livereview.app.daemon import App
from livereview.core.prompt import Prompt
from livereview.core.triggers import reply_marker
from livereview.jobs.llm import Answer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.settings import Settings, parse
from livereview.sync.cycle_report import CycleReport

TOKEN = "glpat-bench-token-000000"
TOKEN_ENV = "BENCH_TOKEN"
BOT = "livereview"
LATENCY = 0.050  # seconds the fake GitLab waits before answering each request
FILES = {"a.py": ("x = 1\ny = 1\n", "x = 2\ny = 1\n")}
DIFF_LINE = {"new_path": "a.py", "new_line": 1}  # a line the fake's diff of FILES knows
HUMANS = ("alice", "bob", "carol", "dave")


class _SchedulerErrors(logging.Filter):
    """Keeps APScheduler's "job raised an exception" records (with their traceback) off
    the benchmark's output and remembers one line for each, for the report."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        self.seen.append(f"{record.getMessage()} [{type(error).__name__ if error else '-'}]")
        return False


SCHEDULER_ERRORS = _SchedulerErrors()


def quiet() -> None:
    """The daemon logs only warnings and errors while benchmarks run."""
    logs.configure("console", level="WARNING")
    scheduler_log = logging.getLogger("apscheduler.executors.default")
    if SCHEDULER_ERRORS not in scheduler_log.filters:
        scheduler_log.addFilter(SCHEDULER_ERRORS)


# What bench/plots.py draws: plot → series label → (x, y) points. Figures add to it as
# they measure; run.py draws it into docs/img/ at the end.
SERIES: dict[str, dict[str, list[tuple[float, float]]]] = {}


def record(plot: str, label: str, points: Sequence[tuple[float, float]]) -> None:
    SERIES.setdefault(plot, {}).setdefault(label, []).extend(points)


def record_times(label: str, seconds: Sequence[float]) -> None:
    """Times to 👀 for the distribution plot (NaN: never acknowledged, left out)."""
    record("ack", label, [(0.0, s) for s in seconds if s == s])


@dataclass
class Row:
    """One line of the results table."""

    figure: str
    measured: str
    target: str = "—"
    ok: bool | None = None  # None: informational, no target
    notes: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return "info" if self.ok is None else ("pass" if self.ok else "FAIL")


class Clock:
    """A settable clock for the fake: set it in the past to create old activity."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) - self.offset

    def rewind(self, by: timedelta) -> None:
        self.offset = by

    def reset(self) -> None:
        self.offset = timedelta(0)


class BenchGitLab(FakeGitLab):
    """The fake GitLab, advertising `advertised_limit` requests per minute in its
    RateLimit-* headers, or none at all (None: self-managed GitLab's default, where the
    user and IP rate limits are off). The stock fake advertises 600/min, which the daemon
    paces itself against once 90 % of it is used: this suite measures the daemon, not that
    limit, except where a figure says so."""

    def __init__(self, *, advertised_limit: int | None = None, **kwargs: Any) -> None:
        super().__init__(token=TOKEN, rate_limit_per_minute=advertised_limit, **kwargs)


class NoLLM:
    """An answerer for benchmarks in which nothing must be answered."""

    async def answer(self, prompt: Prompt) -> Answer:
        raise AssertionError("this benchmark must not call the LLM")

    async def close(self) -> None:
        return None


async def poll_cycle(app: App, *, cold: bool = False) -> dict[str, CycleReport]:
    """`app.cycle()`, cold (every `poll_interval_seconds`, as `App.tick` schedules it) or
    hot."""
    return await app.cycle(cold=cold)


def repo_path(i: int) -> str:
    return f"bench/repo-{i:03d}"


def populate(gitlab: FakeGitLab, repos: int, mrs_per_repo: int, *, notes_per_mr: int = 1,
             bot_replied: int = 0) -> list[tuple[str, int]]:
    """Open MRs with a few human comments each; in the first `bot_replied` MRs of every
    repo the bot has already answered a mention (so the daemon's cold cycle re-fetches
    them). Returns (repo, iid) of every MR."""
    mrs: list[tuple[str, int]] = []
    for r in range(repos):
        path = repo_path(r)
        gitlab.add_project(path)
        for m in range(mrs_per_repo):
            iid = gitlab.add_mr(path, title=f"change {r}.{m}", author=HUMANS[m % len(HUMANS)],
                                files=FILES)
            for n in range(notes_per_mr):
                gitlab.add_note(path, iid, author=HUMANS[(m + n + 1) % len(HUMANS)],
                                body=f"looks fine ({n})")
            if m < bot_replied:
                asked = gitlab.add_note(path, iid, author="alice", body="@livereview why?")
                gitlab.add_note(path, iid, author=BOT, body="because.\n\n" + reply_marker(
                    str(asked["id"])), reply_to_discussion=_discussion_of(gitlab, path, iid,
                                                                          asked["id"]))
            mrs.append((path, iid))
    return mrs


def _discussion_of(gitlab: FakeGitLab, path: str, iid: int, note_id: object) -> str:
    return str(next(d["id"] for d in gitlab.discussions(path, iid)
                    if any(n["id"] == note_id for n in d["notes"])))


def settings(url: str, repos: Sequence[str], db: Path, *, llm_url: str | None = None,
             daemon: dict[str, Any] | None = None, host: dict[str, Any] | None = None
             ) -> Settings:
    """A config with the daemon's defaults except database, metrics, hosts, repos and ai
    (plus whatever `daemon`/`host` override)."""
    ai: dict[str, Any] = {"api_key_env": ""}
    if llm_url is not None:
        ai.update(base_url=llm_url, model="sandbox", timeout_seconds=30)
    return parse({
        "daemon": {"database_url": f"sqlite:///{db}", "metrics_listen": "", **(daemon or {})},
        "ai": ai,
        "hosts": [{"name": "gl", "type": "gitlab", "url": url, "token_env": TOKEN_ENV,
                   **(host or {})}],
        "repos": [{"host": "gl", "path": p} for p in repos],
    }, {TOKEN_ENV: TOKEN})


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100); NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def parse_time(value: object) -> datetime:
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def cores() -> int:
    return os.cpu_count() or 1


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Best of `repeat` runs of `fn`, in seconds."""
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best
