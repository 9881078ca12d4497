"""Prometheus metrics (docs/DESIGN.md §8). Labels are bounded: host type, outcome, state —
never a repo, MR, user or message. One `Metrics` object per process, passed explicitly.
Replicas (`daemon.replica = "name"`) add a `replica` label to every sample."""

from __future__ import annotations

import platform
from collections.abc import Iterable

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    start_http_server,
)
from prometheus_client.metrics_core import Metric

from livereview import __version__

REVIEW_OUTCOMES = ("approved", "changes_requested", "commented", "skipped", "failed", "retry")
REVIEW_FAILURE_CAUSES = ("unreadable", "llm", "timeout", "rate_limited", "auth", "host",
                         "notifier", "config", "unexpected")
LATENCY_BUCKETS = (1, 2, 3, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600)


class ListenError(Exception):
    """The metrics endpoint cannot listen where the config says; the message says why."""


class ReplicaRegistry(CollectorRegistry):
    """A registry whose every sample carries `replica="<name>"`: several daemons behind one
    scrape job stay apart, and dashboards sum (or take the max) over them."""

    def __init__(self, replica: str) -> None:
        super().__init__()
        self.replica = replica

    def collect(self) -> Iterable[Metric]:
        for family in super().collect():  # collectors build new families on every scrape
            family.samples = [sample._replace(labels={**sample.labels,
                                                      "replica": self.replica})
                              for sample in family.samples]
            yield family


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None, replica: str = "") -> None:
        self.registry = registry or (ReplicaRegistry(replica) if replica
                                     else CollectorRegistry())
        self.serving: str | None = None  # the address /metrics is served on
        r = self.registry
        # What the default registry would give: process_* (CPU, memory, open files, start
        # time) and python_* (version, GC), which dashboards and alerts expect.
        ProcessCollector(registry=r)
        PlatformCollector(registry=r)
        GCCollector(registry=r)
        self.build_info = Gauge(
            "livereview_build_info", "Always 1; the labels say which build is running.",
            ["version", "python"], registry=r)
        self.build_info.labels(__version__, platform.python_version()).set(1)
        self.time_to_ack = Histogram(
            "livereview_time_to_ack_seconds",
            "From the comment's creation on the host to the bot's acknowledgement.",
            ["host_type"], buckets=LATENCY_BUCKETS, registry=r)
        self.time_to_reply = Histogram(
            "livereview_time_to_reply_seconds",
            "From the comment's creation on the host to the bot's posted answer.",
            ["host_type"], buckets=LATENCY_BUCKETS, registry=r)
        self.replies = Counter(
            "livereview_replies_total", "Reply jobs finished, by outcome.",
            ["host_type", "outcome"], registry=r)
        self.job_retries = Counter(
            "livereview_job_retries_total",
            "Reply job runs that will be retried, by cause (auth: a 401/403 a person must "
            "fix; host, rate_limited, llm, timeout; unexpected: a bug, see the log).",
            ["host_type", "cause"], registry=r)
        self.edit_answers_capped = Counter(
            "livereview_edit_answers_capped_total",
            "Edits of an answered question left unanswered: it had max_edit_answers new "
            "answers already (an edit loop?).", ["host"], registry=r)
        self.acks = Counter(
            "livereview_acks_total", "Acknowledgements, by outcome.",
            ["host_type", "outcome"], registry=r)
        self.host_requests = Counter(
            "livereview_host_requests_total", "HTTP requests to hosts, by status class.",
            ["host_type", "status_class"], registry=r)
        self.rate_limited = Counter(
            "livereview_rate_limited_total", "Responses that told us to slow down (429 etc.).",
            ["host_type"], registry=r)
        self.rate_limit_remaining = Gauge(
            "livereview_rate_limit_remaining",
            "Requests left in the host's rate-limit window, as its last answer said "
            "(RateLimit-Remaining, GitHub's X-RateLimit-Remaining for the REST budget).",
            ["host_type"], registry=r)
        self.poll_cycle = Histogram(
            "livereview_poll_cycle_seconds", "Duration of one poll cycle of one host.",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120), registry=r)
        self.poll_requests = Histogram(
            "livereview_poll_requests", "Host requests made by one poll cycle of one host.",
            buckets=(1, 2, 3, 5, 10, 20, 50, 100, 200, 500), registry=r)
        self.list_strategy = Gauge(
            "livereview_list_strategy",
            "1 for the way each host's changed MRs are listed (instance: one request for "
            "all repos; project: one per repo, on the cold cycle).",
            ["host", "strategy"], registry=r)
        self.active_looks = Counter(
            "livereview_active_looks_total",
            "The active tier's looks at MRs people are busy on (one conditional request "
            "each): changed (then read) or unchanged.", ["host", "outcome"], registry=r)
        self.last_poll_success = Gauge(
            "livereview_last_poll_success_timestamp_seconds",
            "Unix time of the last successful poll cycle, per configured host name.",
            ["host"], registry=r)
        self.jobs = Gauge("livereview_jobs", "Reply jobs in the store, by state.", ["state"],
                          registry=r)
        self.llm_tokens = Counter("livereview_llm_tokens_total", "LLM tokens used.", ["kind"],
                                  registry=r)
        # Reviews (docs/DESIGN.md §11): outcome is a verdict, or skipped / failed / retry.
        self.reviews = Counter(
            "livereview_reviews_total", "Review runs finished (by verdict) or not, by outcome.",
            ["host_type", "outcome"], registry=r)
        self.review_failures = Counter(
            "livereview_review_failures_total",
            "Review runs that gave up (a note on the MR says so), by cause.",
            ["host_type", "cause"], registry=r)
        self.review_seconds = Histogram(
            "livereview_review_seconds",
            "One review attempt that put a review on the host: reading, model, posting.",
            ["host_type"], buckets=LATENCY_BUCKETS, registry=r)
        self.repo_unhealthy = Gauge(
            "livereview_unhealthy_repos", "Watched repos that currently fail (403/404).",
            ["host"], registry=r)

    def prepare(self, host_types: set[str], hosts: set[str]) -> None:
        """Create every known label combination at zero, so that the first failure after a
        start is an increase Prometheus can see, and dashboards list the host types."""
        for host_type in host_types:
            for status in ("2xx", "3xx", "4xx", "5xx", "error"):
                self.host_requests.labels(host_type, status)
            self.time_to_ack.labels(host_type)
            self.time_to_reply.labels(host_type)
            self.rate_limited.labels(host_type)
            for outcome in ("posted", "retry", "failed", "skipped", "superseded"):
                self.replies.labels(host_type, outcome)
            for cause in ("auth", "host", "rate_limited", "llm", "timeout", "unexpected"):
                self.job_retries.labels(host_type, cause)
            for outcome in ("ok", "forbidden", "not_found", "error"):
                self.acks.labels(host_type, outcome)
            for outcome in REVIEW_OUTCOMES:
                self.reviews.labels(host_type, outcome)
            for cause in REVIEW_FAILURE_CAUSES:
                self.review_failures.labels(host_type, cause)
        for host in hosts:
            self.repo_unhealthy.labels(host).set(0)
        for kind in ("prompt", "completion"):
            self.llm_tokens.labels(kind)

    def rate_limit_state(self, host_type: str) -> tuple[float | None, float]:
        """Requests left in the host type's window as its last answer said (None before
        one said), and how many answers told us to slow down: the console's view of it."""
        labels = {"host_type": host_type}
        if isinstance(self.registry, ReplicaRegistry):
            labels["replica"] = self.registry.replica
        left = self.registry.get_sample_value("livereview_rate_limit_remaining", labels)
        throttled = self.registry.get_sample_value("livereview_rate_limited_total", labels)
        return left, throttled or 0.0

    def serve(self, listen: str) -> None:
        """Expose /metrics on HOST:PORT (a daemon thread of prometheus-client); once."""
        if self.serving == listen:
            return
        host, _, port = listen.rpartition(":")
        try:
            start_http_server(int(port), addr=host.strip("[]") or "127.0.0.1",
                              registry=self.registry)
        except OSError as exc:  # in use, not an address of this machine, a privileged port
            cause = exc.strerror or str(exc)
            raise ListenError(f"daemon.metrics_listen: cannot listen on {listen}: "
                              f"{cause}") from None
        self.serving = listen
