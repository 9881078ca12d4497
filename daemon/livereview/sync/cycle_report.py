"""What one poll cycle did (`CycleReport`), and how it is told when the cycle ends: the
cycle's duration and request count as metrics, its figures as one `poll_cycle` log line
(docs/DESIGN.md §8). The poller (sync/poller.py) fills the report as the cycle goes."""

from __future__ import annotations

from dataclasses import dataclass

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


def close(report: CycleReport, host: Host, metrics: Metrics, seconds: float,
          sent_before: int) -> CycleReport:
    """The cycle ended `seconds` after it began, the host having sent `sent_before` requests
    before it: fill in what it cost, observe it and log it once."""
    report.seconds = seconds
    report.requests = host.requests_sent - sent_before
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
