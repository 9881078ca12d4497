"""What one poll cycle did (`CycleReport`), and how it is told when the cycle ends: the
cycle's duration and request count as metrics, its figures as one `poll_cycle` log line
(docs/DESIGN.md §8). The poller (sync/poller.py) fills the report as the cycle goes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import structlog

from livereview.hosts.base import Host
from livereview.metrics import Metrics

# The poller's logger: a cycle's line is the poller's, wherever it is written from.
log = structlog.get_logger("livereview.poller")


@dataclass
class CycleReport:
    listed: int = 0
    fetched: int = 0
    events: int = 0
    jobs: int = 0
    errors: int = 0
    ok: bool = True
    requests: int = 0
    seconds: float = 0.0
    planned: int = 0  # MRs this cycle set out to fetch
    in_background: int = 0  # MRs still syncing when the cycle stopped waiting
    store_error: str = ""


@dataclass(frozen=True)
class CycleStart:
    """When a cycle began, and what it measures itself against."""

    monotonic: float  # the poller's clock for durations: the cycle's own, its wait
    at: datetime  # its listing's watermark moves here once the listing is stored
    requests_sent: int  # the host's request count
    store_failures: int  # reads that had failed to store (sync/watermark.py)


def close(report: CycleReport, begun: CycleStart, host: Host, metrics: Metrics,
          now: float) -> CycleReport:
    """The cycle that `begun` ends at `now` (the poller's monotonic clock): fill in what it
    cost, observe it and log it once."""
    report.seconds = now - begun.monotonic
    report.requests = host.requests_sent - begun.requests_sent
    metrics.poll_cycle.observe(report.seconds)
    metrics.poll_requests.observe(report.requests)
    cheap = host.listing_is_cheap
    metrics.list_strategy.labels(host.name, "instance").set(int(cheap))
    metrics.list_strategy.labels(host.name, "project").set(int(not cheap))
    log.debug("poll_cycle", host=host.name, listed=report.listed,
              fetched=report.fetched, events=report.events, jobs=report.jobs,
              errors=report.errors, requests=report.requests,
              seconds=round(report.seconds, 3))
    return report
