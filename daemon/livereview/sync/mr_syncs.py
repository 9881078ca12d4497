"""The MR syncs one host's poller began, as tasks (docs/DESIGN.md §6): a few read at once, a
sweep's MRs begun as their turn comes (sync/sweep.py), an MR listed again while it is read
read once more after that read, and a read that fails logged once, noted in the store and
retried later with backoff. One MR is never read by two syncs at once. The poller
(sync/poller.py) decides what to read; one read itself is sync/read.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime

import structlog

from livereview.core.model import MergeRequest, MRKey
from livereview.hosts.base import Host
from livereview.log_setup import FailureLog
from livereview.settings import DaemonSettings
from livereview.store import sync_failures
from livereview.store.db import Store
from livereview.store.engine import StoreError
from livereview.sync.cycle_report import CycleReport
from livereview.sync.first_sight import by_recency
from livereview.sync.plan import Plan
from livereview.sync.sweep import Queued, feed, out_of_turn

log = structlog.get_logger("livereview.poller")  # the poller's events, wherever written
MR_CONCURRENCY = 4  # MRs fetched at once per host (each is 3+ sequential requests)
MAX_BACKOFF_SECONDS = 900.0
# A sweep of this many MRs or more logs its progress every this many (the daemon's progress
# in its log; `once` on a terminal draws a bar instead: cli/progress.py).
SWEEP_LOG_EVERY = 100

# One MR read and stored: (key, baseline, concessions, listing row) → (events, new jobs).
ReadMR = Callable[[MRKey, datetime, frozenset[str], MergeRequest | None],
                  Awaitable[tuple[int, int]]]


@dataclass
class MRSyncs:
    """One host's MR syncs: running, waiting for their turn, to read again, backing off."""

    host: Host
    read: ReadMR  # HostPoller.sync_mr
    store: Callable[[], Store]
    settings: DaemonSettings
    clock: Callable[[], datetime]
    monotonic: Callable[[], float]  # the poller's: when a read began
    read_failed: Callable[[MRKey], None]  # what the active tier last saw is not stored
    progress: Callable[[int, int], None]  # a cycle's reads (done, planned) ended
    failures_log: FailureLog
    syncing: dict[MRKey, asyncio.Task[None]] = field(default_factory=dict)
    # Syncs past the concurrency limit: when each began reading (monotonic).
    reading: dict[MRKey, float] = field(default_factory=dict)
    queued: Queued = field(default_factory=dict)  # a sweep's MRs not begun (sweep.py)
    feeders: set[asyncio.Task[None]] = field(default_factory=set)
    # MRs a cycle listed while they were being read: read once more when that read ends
    # (it may have fetched them before the change listed), one re-read however many cycles.
    again: dict[MRKey, asyncio.Task[None]] = field(default_factory=dict)
    failures: dict[MRKey, tuple[int, float]] = field(default_factory=dict)  # count, retry at
    store_failures: int = 0  # reads whose storing failed: a listing they held stays put
    halted: bool = False  # stopping: syncs not yet begun were dropped, never to begin
    # The listing rows of the newest cycle's plan, the only ones a read may be built from:
    # a row is the MR as its listing showed it, and an MR closed or merged since is never
    # listed again (the listing is of opened MRs). A read that begins after a newer cycle
    # did reads the MR itself: what it stores is never older than the poller's newest look
    # at the host (a hot interval at most) — a first sweep's reads queue for minutes.
    rows: dict[MRKey, MergeRequest] = field(default_factory=dict)
    _limit: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(MR_CONCURRENCY))

    def taken(self, key: MRKey) -> bool:
        """Being read, waiting for its turn, or waiting out a failure's backoff."""
        return (key in self.syncing or key in self.queued
                or self.failures.get(key, (0, 0.0))[1] > time.monotonic())

    def begin(self, plan: Plan, baselines: dict[str, datetime], report: CycleReport,
              early: dict[MRKey, asyncio.Task[None]], since: float,
              active: Collection[MRKey]) -> tuple[list[asyncio.Task[None]],
                                                  list[asyncio.Task[None]]]:
        """Begin a cycle's reads of `plan.targets` that began `since` (monotonic), those
        `early` begun by its mention inbox aside: returns the tasks it waits for (`early`'s
        among them) and the re-reads it began."""
        # Stopping: nothing new begins (the watermark stays, the next start lists it again).
        keys = [] if self.halted else by_recency(
            plan.targets - set(self.syncing) - set(early) - self.queued.keys(), plan.recency)
        jumped = [] if self.halted else out_of_turn(
            plan.targets - set(self.syncing) - set(early), plan.inbox.keys(), plan.recency,
            self.queued)
        report.planned = len(keys) + len(jumped)
        if len(keys) > MR_CONCURRENCY:  # a sweep: more MRs than are read at once
            log.info("poll_sweep_started", host=self.host.name, mrs=len(keys),
                     listed=report.listed)
        tasks = [*early.values()]
        for key in jumped:  # the sweep that queued it waits for this read (sync/sweep.py)
            del self.queued[key]
            tasks.append(self.start(key, baselines[key.repo], report, plan))
        # Listed while a read of it that began before this cycle runs: read again after it.
        # (One still waiting for its turn reads after this cycle began: it sees the change;
        # one in the active tier is looked at every second and read by every hot cycle.)
        stale = {key for key, began in self.reading.items()
                 if began < since and key not in active}
        again = [] if self.halted else [
            self.read_again(key, baselines[key.repo], report, plan)
            for key in sorted(plan.targets & stale - set(early), key=str)]
        if keys:
            tasks.append(self.sweep(keys, baselines, report, plan))
        return tasks, again

    async def first(self, plan: Plan, baselines: dict[str, datetime], report: CycleReport
                    ) -> dict[MRKey, asyncio.Task[None]]:
        """Begin the reads of `plan.targets` not being read — first sight's mention inbox
        (sync/poller.py) — and wait for them up to a hot interval."""
        tasks = {key: self.start(key, baselines[key.repo], report, plan)
                 for key in sorted(plan.targets, key=str) if key not in self.syncing}
        if tasks:  # before the repo checks and the listing fill the host's request slots
            await asyncio.wait(tasks.values(),
                               timeout=self.settings.hot_poll_interval_seconds)
        return tasks

    def start(self, key: MRKey, baseline: datetime, report: CycleReport, plan: Plan
              ) -> asyncio.Task[None]:
        async def bounded() -> None:
            # A few MRs at a time, each fetched and stored before the next starts: all at
            # once, every MR's first response would wait in memory for its second (295 MiB
            # at first sight of 10 000 MRs), and nothing would be stored until the end.
            async with self._limit:
                self.reading[key] = self.monotonic()
                try:
                    await self._sync_one(key, baseline, report, plan)
                finally:
                    self.reading.pop(key, None)

        task = asyncio.create_task(bounded(), name=f"sync-{key}")
        self.syncing[key] = task
        task.add_done_callback(lambda _: self.syncing.pop(key, None))
        return task

    def read_again(self, key: MRKey, baseline: datetime, report: CycleReport, plan: Plan
                   ) -> asyncio.Task[None]:
        """`key` is listed while a read of it runs, which may have fetched it before the
        change listed: once that read ends, read it again (one re-read for every cycle that
        listed it meanwhile — it begins after all of them started)."""
        if (waiting := self.again.get(key)) is not None:
            return waiting
        running = self.syncing[key]

        async def after() -> None:
            await asyncio.wait([running])
            # From here on a cycle that lists it needs a read begun after it: its own.
            self.again.pop(key, None)
            if not self.halted:
                await (self.syncing.get(key) or self.start(key, baseline, report, plan))

        task = asyncio.create_task(after(), name=f"sync-again-{key}")
        self.again[key] = task
        return task

    def sweep(self, keys: list[MRKey], baselines: dict[str, datetime], report: CycleReport,
              plan: Plan) -> asyncio.Task[None]:
        """Queue `keys` and feed them in turn, MR_CONCURRENCY at once (sync/sweep.py)."""
        self.queued.update((key, plan.recency.get(key)) for key in keys)

        def turn(key: MRKey, in_turn: bool) -> asyncio.Task[None] | None:
            running = self.syncing.get(key)
            if not in_turn or running is not None:  # begun out of turn, or meanwhile
                return None if in_turn else running
            return self.start(key, baselines[key.repo], report, plan)

        feeder = asyncio.create_task(feed(
            keys, turn, MR_CONCURRENCY, self.queued, lambda: self.halted),
            name="sync-sweep")
        self.feeders.add(feeder)
        feeder.add_done_callback(self.feeders.discard)
        return feeder

    async def _sync_one(self, key: MRKey, baseline: datetime, report: CycleReport,
                        plan: Plan) -> None:
        """Sync one MR; whatever fails is logged once and retried later with backoff."""
        inbox_items = plan.inbox.get(key, [])
        try:
            events, created = await self.read(key, baseline,
                                              plan.concessions.get(key, frozenset()),
                                              plan.rows.pop(key, None))
            if inbox_items:  # the mentions are in the store now (and jobs made for them)
                await self.host.clear_mentions(inbox_items)
        except StoreError as exc:  # the next cycle tries again; the app says it once
            self.read_failed(key)
            report.errors += 1
            self.store_failures += 1
            report.store_error = str(exc)
            return
        except Exception as exc:  # noqa: BLE001 - one MR's trouble never stops the others
            await self._failed(key, report, exc)
            return
        await self._synced(key, report, plan, events, created)

    async def _failed(self, key: MRKey, report: CycleReport, exc: Exception) -> None:
        """Logged once while it keeps failing; retried after a backoff that doubles."""
        reason = f"{type(exc).__name__}: {exc}"
        self.failures_log.failed(f"mr:{key}", "mr_fetch_failed", reason,
                                 level=logging.WARNING, host=self.host.name, repo=key.repo,
                                 mr=key.iid)
        self.read_failed(key)
        failures = self.failures.get(key, (0, 0.0))[0] + 1
        delay = min(MAX_BACKOFF_SECONDS, self.settings.hot_poll_interval_seconds * 2**failures)
        self.failures[key] = (failures, time.monotonic() + delay)
        report.errors += 1
        with contextlib.suppress(StoreError):  # said by the store; memory keeps it
            await self.store().run(sync_failures.note, key, reason, self.clock())

    async def _synced(self, key: MRKey, report: CycleReport, plan: Plan, events: int,
                      created: int) -> None:
        self.failures.pop(key, None)
        if key in plan.failed:
            with contextlib.suppress(StoreError):
                await self.store().run(sync_failures.clear, self.host.name, [key])
        self.failures_log.ok(f"mr:{key}", "mr_fetch_failed", host=self.host.name,
                             repo=key.repo, mr=key.iid)
        report.fetched += 1
        report.events += events
        report.jobs += created
        done = report.fetched + report.errors
        if report.planned >= SWEEP_LOG_EVERY and (done % SWEEP_LOG_EVERY == 0
                                                  or done == report.planned):
            log.info("poll_sweep_progress", host=self.host.name, done=done,
                     mrs=report.planned)
        self.progress(done, report.planned)

    async def caught_up(self) -> None:
        """Until no sync, sweep or re-read begun here is running."""
        while self.syncing or self.feeders or self.again:
            await asyncio.wait([*self.syncing.values(), *self.feeders, *self.again.values()])

    def halt(self) -> int:
        """Stopping: begin nothing more, and cancel what has not begun reading. Returns how
        many syncs were dropped (begun and waiting for a slot, or queued by a sweep)."""
        self.halted = True
        queued = [task for key, task in self.syncing.items() if key not in self.reading]
        for task in [*queued, *self.feeders, *self.again.values()]:
            task.cancel()
        return len(queued) + len(self.queued)

    async def fed(self) -> None:
        """Until the sweeps' feeders are done (after `halt`: they start nothing more)."""
        if self.feeders:
            await asyncio.wait(self.feeders)

    async def settle(self, grace: float | None) -> bool:
        """Wait for the syncs being read up to `grace` seconds, cancel the rest. True if
        none had to be cancelled."""
        if not self.syncing:
            return True
        _, pending = await asyncio.wait(list(self.syncing.values()), timeout=grace)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)
        return not pending
