"""What to poll when, for one host: list changed MRs, fetch them, diff, persist, trigger.

Each cycle makes one listing request for all watched repos of the host (when the token
may list the instance) with `updated_after` = the last successful listing minus an
overlap: GitLab bumps an MR's `updated_at` at most once a minute per note, so a note can
arrive "in the past" of the watermark. Re-fetching is harmless — the diff dedupes by id.
MRs with recent activity or open jobs are fetched every cycle anyway (hot). A host whose
listing costs a request per repo and that has no change feed (Bitbucket) lists only the
repos with a hot MR every cycle, and every repo once per quiet interval (sync/quiet.py).
What a cycle reads is decided in sync/plan.py, its reads run in sync/mr_syncs.py (one MR
read and stored: sync/read.py), its listing's watermark moves in sync/watermark.py, the
active tier reads between cycles in sync/active_reads.py; this module runs the cycle.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import structlog

from livereview.core.model import Identity, MergeRequest, MRKey, Policy
from livereview.hosts.base import Forbidden, Host, HostError, LooksCheaply, NotFound
from livereview.log_setup import FailureLog
from livereview.metrics import Metrics
from livereview.settings import DaemonSettings
from livereview.store import state
from livereview.store.db import Store
from livereview.store.engine import StoreError
from livereview.store.leases import INSTANCE, Leases
from livereview.sync import cycle_report, repo_checks
from livereview.sync.active import ActiveTier, tier_on
from livereview.sync.active_reads import ActiveReads
from livereview.sync.cycle_report import CycleReport, CycleStart
from livereview.sync.mr_syncs import MRSyncs
from livereview.sync.plan import Plan, Planner
from livereview.sync.read import MRReader
from livereview.sync.watermark import ListingMarks

log = structlog.get_logger("livereview.poller")


@dataclass(frozen=True)
class _Planned:
    """A cycle's plan, its repos' baselines, and the reads its mention inbox began first."""

    plan: Plan
    baselines: dict[str, datetime]
    early: dict[MRKey, asyncio.Task[None]]


@dataclass
class HostPoller:
    host: Host
    identity: Identity
    repos: tuple[str, ...]
    store: Store
    settings: DaemonSettings
    policy: Policy
    metrics: Metrics
    on_new_jobs: Callable[[], None] = lambda: None
    on_progress: Callable[[str, int, int], None] | None = None  # (host, done, total)
    leases: Leases | None = None  # replicas: poll only the shards this one holds
    clock: Callable[[], datetime] = field(default=lambda: datetime.now().astimezone())
    monotonic: Callable[[], float] = time.monotonic  # a cycle's own duration
    unhealthy: dict[str, str] = field(default_factory=dict)  # repo → reason
    _repos_checked: bool = False
    last_cycle_ok: bool = False
    _failures_log: FailureLog = field(default_factory=lambda: FailureLog(log))
    planning: bool = False  # listing and deciding what to read (no sync begun by it yet)
    review_on: dict[str, tuple[str, ...]] = field(default_factory=dict)  # repo → events
    on_new_reviews: Callable[[], None] = lambda: None
    _planner: Planner = field(init=False)
    _glances: ActiveReads = field(init=False)  # sync/active_reads.py: the active tier's
    _marks: ListingMarks = field(init=False)
    _reader: MRReader = field(init=False)  # sync/read.py: one MR read and stored
    _syncs: MRSyncs = field(init=False)  # sync/mr_syncs.py: the reads begun, as tasks

    def __post_init__(self) -> None:
        self._reader = MRReader(
            self.host, lambda: self.identity, lambda: self.store, self.policy, self.metrics,
            lambda: self.clock(), self.review_on, lambda: self.on_new_jobs(),
            lambda: self.on_new_reviews())
        self._planner = Planner(self.host, self.store, self.settings)
        self._marks = ListingMarks(self.store, self.host.name)
        self._syncs = MRSyncs(  # late-bound, as the reader's: each may be replaced
            self.host, lambda key, baseline, concessions, listed: self.sync_mr(
                key, baseline, concessions, listed), lambda: self.store, self.settings,
            lambda: self.clock(), lambda: self.monotonic(),
            lambda key: self._glances.read_failed(key), self._progress, self._failures_log)
        self._glances = ActiveReads(ActiveTier(self.host, self.host.name, self.metrics) if (
            isinstance(self.host, LooksCheaply) and tier_on(self.settings)) else None,
            self._syncs)

    @property
    def active(self) -> tuple[MRKey, ...]:
        """The MRs in the active tier, as the last hot cycle chose them."""
        return self._glances.keys

    async def glance(self) -> int:
        """The active tier's look: the active MRs that changed begin syncing
        (sync/active_reads.py). Returns how many began."""
        return await self._glances.glance()

    async def _baselines(self, now: datetime) -> dict[str, datetime]:
        """Per repo: comments created before this are history, never answered."""
        backfill = timedelta(hours=self.settings.backfill_hours)
        first_seen = await self.store.run(state.first_seen, self.host.name, self.repos, now)
        return {repo: at - backfill for repo, at in first_seen.items()}

    @property
    def healthy(self) -> bool:
        return self.last_cycle_ok and not self.unhealthy

    async def check_repos(self, repos: tuple[str, ...] | None = None,
                          done: frozenset[str] = frozenset()) -> None:
        """Find watched repos (all but those `done` already, or only those in `repos`) that
        do not exist or may not be read, so one wrong path does not stop the host's
        listing; they are checked again on every cold cycle."""
        some = repos is not None
        repos = tuple(r for r in self.repos if r not in done) if repos is None else repos
        await repo_checks.check(self.host, repos, self.unhealthy)
        self.metrics.repo_unhealthy.labels(self.host.name).set(len(self.unhealthy))
        self._repos_checked = self._repos_checked or not some

    async def sync_mr(self, key: MRKey, baseline: datetime,
                      concessions: frozenset[str] = frozenset(),
                      listed: MergeRequest | None = None) -> tuple[int, int]:
        """Fetch one MR (`listed`: its listing row's MR, if it was never read), persist
        what changed; returns (events, new jobs)."""
        return await self._reader.read(key, baseline, concessions, listed)

    async def _first_mentions(self, repos: tuple[str, ...], baselines: dict[str, datetime],
                              report: CycleReport
                              ) -> tuple[dict[MRKey, asyncio.Task[None]], frozenset[str]]:
        """First sight: the host's mention inbox (one request) is read before the repos are
        checked and the instance listed — seconds to minutes on a big instance — and its
        MRs begin syncing as soon as their own repos are checked, so a mention made before
        the start is answered in seconds. Returns the syncs begun and the repos checked."""
        if not self.host.capabilities.mention_inbox:
            return {}, frozenset()
        early = Plan(inbox=await self.host.mention_inbox(tuple(sorted(repos))))
        checked = frozenset(key.repo for key in early.inbox)
        await self.check_repos(tuple(sorted(checked)))
        early.targets = {key for key in early.inbox if key.repo not in self.unhealthy}
        return await self._syncs.first(early, baselines, report), checked

    def _progress(self, done: int, planned: int) -> None:
        if self.on_progress is not None:
            self.on_progress(self.host.name, done, planned)

    def _listing_trouble(self, exc: HostError | None) -> None:
        """Log a listing's failure once when it starts or changes, and once when it is over
        — not every cycle while a host stays broken (cycles run every few seconds)."""
        if exc is None:
            self._failures_log.ok("listing", "host_listing_failed", host=self.host.name)
        else:
            self._failures_log.failed("listing", "host_listing_failed",
                                      f"{type(exc).__name__}: {exc}", level=logging.WARNING,
                                      host=self.host.name)

    async def caught_up(self) -> None:
        """Until no MR sync begun by this poller is running, and the listing watermark has
        moved for those that were (callers that look once)."""
        await self._syncs.caught_up()
        await self._marks.settled()

    def halt(self) -> int:
        """Stopping: drop the MR syncs still waiting for their turn (a first sweep queues
        thousands) so that only the few being read hold the stop up; the listing watermark
        stays put and the next start lists them again. Returns how many were dropped."""
        self._marks.cancel()
        return self._syncs.halt()

    async def settle(self, grace: float | None = None) -> bool:
        """Stopping: drop the syncs not begun, wait for those being read (up to `grace`
        seconds), cancel the rest. True if none being read had to be cancelled."""
        self.halt()
        await self._syncs.fed()  # cancelled by halt: they start nothing more
        await self._marks.settled()
        return await self._syncs.settle(grace)

    async def cycle(self, *, cold: bool = False, wait: float | None = None) -> CycleReport:
        """One poll cycle: never raises for host trouble, reports it instead.

        MRs sync as tasks the cycle waits for until `wait` seconds after it began (None:
        until all are done). One MR that takes long — a 100 000-note thread — goes on syncing in the
        background, is not started again meanwhile, and does not hold up the next cycles
        and the mentions they bring on other MRs. The steps (docs/DESIGN.md §6): the shards
        to list, where their listing begins, the plan, its reads begun and waited for, and
        the listing's watermark once they are stored."""
        report = CycleReport()
        begun = CycleStart(self.monotonic(), self.clock(), self.host.requests_sent,
                           self._syncs.store_failures)
        self._syncs.rows.clear()  # an older cycle's: its queued reads read the MR itself
        shards = await self._shards(begun.at)
        if not shards:  # live peers hold every shard: this replica's part is done
            self._glances.choose(())  # their MRs are theirs to look at
            return self._succeeded(report, begun)
        repos = tuple(repo for group in shards.values() for repo in group)
        since = await self._listed_since(shards, begun)
        planned = await self._plan(repos, since, cold, begun, report)
        if planned is None:
            return self._finish(report, begun)
        report.listed = planned.plan.listed or 0
        tasks, again = self._syncs.begin(planned.plan, planned.baselines, report,
                                         planned.early, begun.monotonic, self.active)
        await self._wait(tasks, wait, begun, report)
        if planned.plan.listed is not None and not self._syncs.halted:
            await self._hold_listing(shards, begun, again)
        return self._succeeded(report, begun)

    async def _shards(self, now: datetime) -> dict[str, tuple[str, ...]]:
        """The shards this replica lists, scope → repos (no leases: the instance)."""
        return ({INSTANCE: self.repos} if self.leases is None else
                await self.leases.poll_shards(self.host.name, self.repos, now))

    async def _listed_since(self, shards: dict[str, tuple[str, ...]], begun: CycleStart
                            ) -> datetime | None:
        """One listing for the shards held: from the oldest of their watermarks, less the
        overlap (at first sight, from this process's first complete listing:
        sync/watermark.py). None: list everything."""
        listed = [self._marks.since(scope, (await self.store.run(
            state.watermark, self.host.name, scope, begun.at)).listed_until,
            begun.store_failures) for scope in shards]
        if not all(at is not None for at in listed):
            return None
        return min(at for at in listed if at is not None) - timedelta(
            seconds=self.settings.watermark_overlap_seconds)

    async def _plan(self, repos: tuple[str, ...], since: datetime | None, cold: bool,
                    begun: CycleStart, report: CycleReport) -> _Planned | None:
        """List and decide what to read (sync/plan.py) — at first sight the mention inbox's
        MRs begin first — and choose the active tier. None: the host failed, logged once."""
        early: dict[MRKey, asyncio.Task[None]] = {}
        checked: frozenset[str] = frozenset()
        self.planning = True
        try:
            baselines = await self._baselines(begun.at)
            if since is None and not self._syncs.halted:
                early, checked = await self._first_mentions(repos, baselines, report)
            if not self._repos_checked or (cold and self.unhealthy):
                await self.check_repos(done=checked)
            plan = await self._planner.plan(begun.at, since, cold,
                                            set(repos) - set(self.unhealthy), baselines,
                                            self._syncs.failures)
            self._glances.seen(baselines, plan.concessions)
            self._syncs.rows = plan.rows
            self._glances.choose(plan.active)
        except HostError as exc:
            self._listing_trouble(exc)
            if isinstance(exc, NotFound | Forbidden):  # a repo may have gone: look again
                self._repos_checked = False
            report.ok = False
            return None
        finally:
            self.planning = False
        self._listing_trouble(None)
        return _Planned(plan, baselines, early)

    async def _wait(self, tasks: list[asyncio.Task[None]], wait: float | None,
                    begun: CycleStart, report: CycleReport) -> None:
        """Wait for the cycle's reads until `wait` seconds after it began; the rest go on
        in the background. A read that failed to store fails the cycle."""
        pending: set[asyncio.Task[None]] = set()
        if tasks:  # `wait` counts from the cycle's start (app/daemon.py TICK_WAIT_SHARE)
            left = None if wait is None else max(0.0, wait - (self.monotonic() - begun.monotonic))
            _, pending = await asyncio.wait(tasks, timeout=left)
        syncs = self._syncs
        report.in_background = len(syncs.queued) + len(syncs.syncing) if pending else 0
        if report.store_error:
            raise StoreError(report.store_error)

    async def _hold_listing(self, shards: dict[str, tuple[str, ...]], begun: CycleStart,
                            again: list[asyncio.Task[None]]) -> None:
        """Failed MRs are kept in the store and retried (with backoff); while an MR this
        cycle or an earlier one listed is still syncing the listing stays where it was, so a
        crash meanwhile loses nothing (sync/watermark.py). The active tier's reads are of
        MRs the hot cycle reads anyway: they hold nothing up."""
        syncs = self._syncs
        self._marks.listed(shards, begun.at, begun.store_failures)
        held = [task for key, task in syncs.syncing.items()
                if key not in self._glances.glancing]
        await self._marks.advance_after(
            [*held, *again, *syncs.feeders], tuple(shards), begun.at,
            lambda: not syncs.halted and syncs.store_failures == begun.store_failures)

    def _succeeded(self, report: CycleReport, begun: CycleStart) -> CycleReport:
        self.metrics.last_poll_success.labels(self.host.name).set(time.time())
        return self._finish(report, begun)

    def _finish(self, report: CycleReport, begun: CycleStart) -> CycleReport:
        self.last_cycle_ok = report.ok
        return cycle_report.close(report, begun, self.host, self.metrics, self.monotonic())
