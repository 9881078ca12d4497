"""The `[daemon]` section: where state lives, how often and how hard the daemon polls,
its job limits and time limits, and what a replica is called (docs/configuration.md)."""

from __future__ import annotations

import os
from typing import Annotated, Self

from pydantic import AfterValidator, ValidationInfo, field_validator, model_validator

from livereview.settings import section_rules
from livereview.settings.rules import Between, database_url, one_of
from livereview.settings.section import Section, reading_of

SECONDS_PER_DAY = 86_400.0


class DaemonSettings(Section):
    state_dir: str = ""
    """Shorthand for a SQLite database: the file `livereview.db` goes in this directory."""
    database_url: str = ""
    """`sqlite:///PATH` (WAL) or `postgresql+psycopg://USER@HOST/DB` (install `.[postgres]`);
    "" → `livereview.db` in `state_dir`, else in `$STATE_DIRECTORY`, else in
    `~/.local/state/livereview`."""
    poll_interval_seconds: Annotated[float, Between(1, SECONDS_PER_DAY)] = 30.0
    """The cold cycle: per-project listing (where used), re-checking failing repos."""
    hot_poll_interval_seconds: Annotated[float, Between(0.1, 3600)] = 3.0
    """The hot cycle: the listing and the hot MRs; at most `poll_interval_seconds`."""
    hot_window_seconds: Annotated[float, Between(10, SECONDS_PER_DAY)] = 600.0
    """An MR with human activity this recent is hot (fetched every hot cycle)."""
    active_poll_interval_seconds: Annotated[float, Between(0.1, 3600)] = 1.0
    """The active tier, on hosts that can tell cheaply whether an MR changed (GitHub: one
    conditional request, a 304 costing no rate limit): an MR with human activity within
    `active_window_seconds` is looked at this often between hot cycles, and read when it
    changed. At or above `hot_poll_interval_seconds` there is no active tier."""
    active_window_seconds: Annotated[float, Between(10, SECONDS_PER_DAY)] = 180.0
    """An MR with human activity this recent is active (see `active_poll_interval_seconds`);
    idle longer, it goes back to the hot cycle's pace."""
    max_active_mrs: Annotated[int, Between(0, 100)] = 5
    """At most this many MRs of a host are active at once, the most recently active first:
    the tier costs at most this many requests per active interval (5 a second: 300 a
    minute, a third of GitHub's secondary limit of 900 points a minute per endpoint); 0
    turns it off."""
    quiet_repo_interval_seconds: Annotated[float, Between(1, SECONDS_PER_DAY)] = 60.0
    """Hosts that list each repo with a request of its own (Bitbucket): a repo without an MR
    hot is listed this often; the bot's dashboard, where the host has one, is read within
    the same budget. Idle cost at most 120 / this requests per repo per minute; a mention on
    a quiet repo is seen within this long (one below `hot_poll_interval_seconds` lists every
    repo every cycle)."""
    metrics_listen: str = "127.0.0.1:9464"
    """`HOST:PORT` of the Prometheus endpoint (`/metrics`); "" disables it."""
    backfill_hours: Annotated[float, Between(0, 720)] = 24.0
    """On the first sight of a repo, comments older than this are never answered."""
    watermark_overlap_seconds: Annotated[float, Between(60, 3600, why=(
        "GitLab bumps an MR's updated_at at most once a minute per note"))] = 120.0
    """How far each listing reaches back before the watermark."""
    max_concurrent_jobs: Annotated[int, Between(1, 64)] = 4
    """Reply jobs in flight at once."""
    max_attempts: Annotated[int, Between(1, 50)] = 6
    """A reply job's tries (delays doubling, jittered, at most 15 min) before it fails
    visibly."""
    retry_base_seconds: Annotated[float, Between(0.01, 900)] = 5.0
    """The first retry's delay."""
    step_timeout_seconds: Annotated[float, Between(1, 3600)] = 120.0
    """Soft limit of one step of a job (ack, model call, post)."""
    job_timeout_seconds: Annotated[float, Between(1, 7200)] = 600.0
    """Hard limit of one job; at least `step_timeout_seconds`."""
    shutdown_grace_seconds: Annotated[float, Between(1, 40)] = 30.0
    """On SIGTERM, the time the running cycle and in-flight replies get to finish; below
    the systemd unit's `TimeoutStopSec=45`, which kills a daemon that takes longer."""
    busy_timeout_seconds: Annotated[float, Between(0.1, 300)] = 10.0
    """SQLite: wait this long for a lock, then fail with one line rather than hang."""
    log_format: Annotated[str, one_of("auto", "console", "json")] = "auto"
    """`auto`: readable lines on a terminal or journald, JSON lines otherwise."""
    # -- several daemons on one PostgreSQL database (docs/DESIGN.md §12; ignored on SQLite) --
    replica: Annotated[str, AfterValidator(section_rules.replica_name)] = ""
    """Replicas on PostgreSQL: this daemon's name (up to 64 letters, digits, `-`, `_`, `.`),
    the `replica` label of every metric; "" → no label."""
    lease_seconds: Annotated[float, Between(1, 600)] = 30.0
    """Replicas on PostgreSQL: a dead replica's polls and reply jobs pass to another after
    this long."""

    @field_validator("database_url", mode="after")
    @classmethod
    def _database_url(cls, url: str, info: ValidationInfo) -> str:
        if url:
            return database_url(url)
        reading = reading_of(info)
        return section_rules.default_database_url(info.data.get("state_dir"),
                                                  reading.env if reading else os.environ)

    @field_validator("metrics_listen", mode="after")
    @classmethod
    def _metrics_listen(cls, listen: str) -> str:
        return section_rules.metrics_listen(listen)

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        section_rules.daemon_consistent(
            hot=self.hot_poll_interval_seconds, poll=self.poll_interval_seconds,
            job=self.job_timeout_seconds, step=self.step_timeout_seconds)
        return self
