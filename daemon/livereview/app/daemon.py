"""Wires settings → store, hosts, pollers, worker; runs one cycle or the daemon."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

import structlog
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from livereview.app.hosts import connect
from livereview.app.wiring import open_store
from livereview.core.model import Identity, JobState, Policy
from livereview.hosts.base import Host, HostError, LooksCheaply
from livereview.hosts.local.git import tracked
from livereview.jobs.knowledge import Knowledge
from livereview.jobs.llm import Answerer, OpenAIAnswerer
from livereview.metrics import Metrics
from livereview.reply.worker import Worker
from livereview.review.notify import notifiers
from livereview.review.runner import ReviewRunner
from livereview.settings import Settings
from livereview.store import jobs, state
from livereview.store.db import Store
from livereview.store.engine import StoreError, StoreFatal
from livereview.store.leases import Leases, holder_name
from livereview.store.review_export import RepoBooks
from livereview.sync.active import tier_on
from livereview.sync.cycle_report import CycleReport
from livereview.sync.poller import HostPoller
from livereview.systemd import Notifier

log = structlog.get_logger("livereview.app")


def now() -> datetime:
    return datetime.now().astimezone()


def policy(settings: Settings) -> Policy:
    bot = settings.bot
    return Policy(aliases=bot.mention_aliases, ignore_users=bot.ignore_users,
                  backfill_hours=settings.daemon.backfill_hours,
                  max_consecutive_replies=bot.max_consecutive_replies,
                  max_exchange_replies=bot.max_exchange_replies,
                  max_replies_per_thread_per_hour=bot.max_replies_per_thread_per_hour,
                  max_replies_per_mr_per_hour=bot.max_replies_per_mr_per_hour,
                  automated_reply_seconds=bot.automated_reply_seconds,
                  max_edit_answers=bot.max_edit_answers,
                  review_on_request=settings.review.on_review_request)


IDENTITY_TIMEOUT_SECONDS = 10.0  # READY must not wait on a host that never answers
# A tick waits for the reads it began this share of the hot interval, counted from its start,
# then leaves them running: the next tick (jittered by at most a tenth of the interval)
# finds it done and is never skipped for it (APScheduler skips a tick while one still runs).
TICK_WAIT_SHARE = 0.8


@dataclass
class App:
    settings: Settings
    store: Store
    metrics: Metrics
    hosts: dict[str, Host]
    worker: Worker
    reviewer: ReviewRunner
    leases: Leases
    pollers: dict[str, HostPoller] = field(default_factory=dict)
    _last_cold: float = 0.0
    _tick_task: asyncio.Task[object] | None = None
    _lookups: dict[str, asyncio.Task[HostPoller | None]] = field(default_factory=dict)
    _stop: asyncio.Event | None = None  # set while `run` runs: a fatal store error stops it
    last_tick: float = 0.0
    on_cycle: Callable[[dict[str, CycleReport]], None] | None = None  # the demo's live view
    on_progress: Callable[[str, int, int], None] | None = None  # `once` on a terminal
    stopped_by: int | None = None  # the signal that stopped `run`: the CLI's exit code says it

    @classmethod
    def create(cls, settings: Settings, *, answerer: Answerer | None = None,
               metrics: Metrics | None = None, upgrade_apart: bool = False) -> App:
        """The daemon for `settings`. `upgrade_apart`: a schema upgrade, if one is due, runs
        in a child process (store/migrate_apart.py) — `run` and `once`, which live on with
        the memory an in-process upgrade keeps; the rest upgrade in-process."""
        metrics = metrics or Metrics(replica=settings.daemon.replica)
        metrics.prepare({h.type for h in settings.hosts}, {h.name for h in settings.hosts})
        store = open_store(settings.daemon, apart=upgrade_apart)
        leases = Leases(store, settings.daemon.lease_seconds,
                        holder_name(settings.daemon.replica))
        # A local host's reviews live in each repository's own store (docs/DESIGN.md §14).
        hosts = {h.name: connect(h, metrics, books=RepoBooks(tracked)) for h in settings.hosts}
        worker = Worker(store=store, hosts=hosts, identities={}, policy=policy(settings),
                        leases=leases,
                        lessons=settings.lessons,
                        knowledge=Knowledge(settings.knowledge_sources(),
                                            settings.daemon.step_timeout_seconds),
                        answers=settings.answers_for,
                        answerer=answerer or OpenAIAnswerer(settings.ai, metrics),
                        daemon=settings.daemon, bot=settings.bot, metrics=metrics, clock=now)
        review = settings.review
        reviewer = ReviewRunner(
            store=store, hosts=hosts, identities=worker.identities, answerer=worker.answerer,
            settings=review, bot=settings.bot, daemon=settings.daemon, metrics=metrics,
            notifiers=notifiers(review.notify_command, review.notify_url,
                                review.notify_timeout_seconds), clock=now,
            knowledge=worker.knowledge, leases=leases)
        return cls(settings, store, metrics, hosts, worker, reviewer, leases)

    async def _identity(self, name: str, *, bounded: bool = True) -> Identity | None:
        """Who the bot is on this host (`GET /user`, within IDENTITY_TIMEOUT_SECONDS if
        `bounded`), else the stored identity."""
        host, override = self.hosts[name], self.settings.host(name).username
        try:
            async with asyncio.timeout(IDENTITY_TIMEOUT_SECONDS if bounded else None):
                identity = await host.whoami()
        except (HostError, TimeoutError) as exc:
            stored = await self.store.run(state.identity, name)
            log.error("identity_unavailable", host=name,
                      error=str(exc) or f"no answer within {IDENTITY_TIMEOUT_SECONDS:g}s",
                      using_stored=stored is not None)
            return stored
        if override:  # the other tokens' identities (`also`) stay the bot's own
            identity = replace(identity, host=name, username=override)
        await self.store.run(state.save_identity, identity, now())
        return identity

    def _install(self, name: str, identity: Identity) -> HostPoller:
        self.worker.identities[name] = identity
        if name in self.pollers:
            self.pollers[name].identity = identity
            return self.pollers[name]
        self.pollers[name] = HostPoller(
            host=self.hosts[name], identity=identity, repos=self.settings.repos_of(name),
            store=self.store, settings=self.settings.daemon, policy=policy(self.settings),
            metrics=self.metrics, on_new_jobs=self.worker.kick, on_progress=self.on_progress,
            clock=now, on_new_reviews=self.reviewer.kick,
            review_on={r.path: r.review_on for r in self.settings.repos
                       if r.host == name and r.review_on}, leases=self.leases)
        return self.pollers[name]

    async def _poller(self, name: str) -> HostPoller | None:
        if name in self.pollers:
            return self.pollers[name]
        try:
            identity = await self._identity(name)
        except StoreError:  # said by the store; a fatal one stops the daemon at the tick
            return None
        return None if identity is None else self._install(name, identity)

    def _lookup(self, name: str) -> asyncio.Task[HostPoller | None]:
        """The identity lookup of a host not known yet: one at a time per host."""
        task = self._lookups.get(name)
        if task is None or task.done():
            task = self._lookups[name] = asyncio.create_task(self._poller(name),
                                                             name=f"identity-{name}")
        return task

    async def _start_host(self, name: str) -> asyncio.Task[None] | None:
        """Before READY: the stored identity when there is one (then refreshed in the
        background), else a lookup bounded by IDENTITY_TIMEOUT_SECONDS; a host still
        unknown after that is looked up again on every tick."""
        stored = await self.store.run(state.identity, name)
        if stored is None:
            await self._lookup(name)
            return None
        override = self.settings.host(name).username
        if self.settings.host(name).tokens:
            # The store keeps the host's own token's identity only: a host with
            # `[[hosts.tokens]]` learns the others' (Identity.also) before it polls, else
            # what another token posted could pass for a human's (docs/DESIGN.md
            # "Identities"); if the host does not answer in time, the refresh below does.
            await self._lookup(name)
        else:
            self._install(name, Identity(name, stored.user_id, override) if override
                          else stored)

        async def refresh() -> None:
            try:
                identity = await self._identity(name, bounded=False)
            except StoreError:  # said by the store; the stored identity serves meanwhile
                return
            if identity is not None and identity != self.worker.identities.get(name):
                log.info("identity_changed", host=name, username=identity.username)
                self._install(name, identity)

        return asyncio.create_task(refresh(), name=f"identity-{name}")

    async def cycle(self, *, cold: bool = False, wait: float | None = None,
                    wait_for_identities: bool = True) -> dict[str, CycleReport]:
        """One poll cycle over every host, concurrently; a failing host does not stop others.
        MR syncs still running after `wait` seconds go on in the background. A host whose
        identity is still unknown is looked up first, or — for the daemon's ticks — in the
        background while the others are polled."""
        lookups = [self._lookup(name) for name in self.hosts if name not in self.pollers]
        if lookups and wait_for_identities:
            await asyncio.gather(*lookups)
        pollers = [self.pollers[name] for name in self.hosts if name in self.pollers]
        reports = await asyncio.gather(*(p.cycle(cold=cold, wait=wait) for p in pollers))
        counts = await self.store.run(jobs.counts)
        for job_state in JobState:
            self.metrics.jobs.labels(job_state.value).set(counts.get(job_state.value, 0))
        return {p.host.name: r for p, r in zip(pollers, reports, strict=True)}

    async def tick(self) -> None:
        self.last_tick = time.monotonic()  # the scheduler heartbeat the watchdog checks
        cold = time.monotonic() - self._last_cold >= self.settings.daemon.poll_interval_seconds
        if cold:
            self._last_cold = time.monotonic()
        self._tick_task = asyncio.current_task()
        try:
            reports = await self.cycle(
                cold=cold, wait=self.settings.daemon.hot_poll_interval_seconds * TICK_WAIT_SHARE,
                wait_for_identities=False)
        except StoreFatal:  # damaged or deleted: nothing can work, `run` stops and says why
            if self._stop is not None:
                self._stop.set()
            return
        except StoreError:  # locked, full, read-only: the store logged it; poll again later
            return
        except asyncio.CancelledError:
            if self._stop is None or not self._stop.is_set():
                raise
            # The shutdown deadline passed mid-cycle; what was stored stays stored. Returning
            # keeps APScheduler from logging the cancellation as a 60-line traceback.
            return
        finally:
            self._tick_task = None
        if self.on_cycle is not None:
            self.on_cycle(reports)

    async def glance(self) -> None:
        """The active tier's look on every host that has one (sync/active.py)."""
        await asyncio.gather(*(p.glance() for p in list(self.pollers.values())))

    async def status_line(self) -> str:
        """One line for systemd's STATUS=: hosts healthy, jobs waiting."""
        counts = await self.store.run(jobs.counts)
        open_jobs = sum(counts.get(s.value, 0) for s in JobState if s.open)
        healthy = sum(1 for p in self.pollers.values() if p.healthy)
        return (f"hosts healthy {healthy}/{len(self.hosts)}; jobs pending {open_jobs}, "
                f"failed {counts.get(JobState.FAILED.value, 0)}")

    async def _watchdog(self, notifier: Notifier, stop: asyncio.Event) -> None:
        """Ping systemd's watchdog only while the scheduler heartbeat is fresh, so a stuck
        poll loop gets the unit restarted; refresh STATUS= either way."""
        period = notifier.watchdog_seconds
        while not stop.is_set():
            try:
                status = await self.status_line()
            except StoreError as exc:
                status = f"database unavailable: {exc}"
            if period is not None and time.monotonic() - self.last_tick < period:
                notifier.watchdog(status)
            else:
                notifier.status(status)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=(period or 20.0) / 2)

    async def _heartbeat(self, stop: asyncio.Event) -> None:
        """Replicas: renew this one's leases three times per lease, so they expire only
        when it is dead or stuck (then another replica takes its work over)."""
        while not stop.is_set():
            with contextlib.suppress(StoreError):  # said by the store; retried next beat
                await self.leases.heartbeat(now())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.leases.seconds / 3)

    async def once(self) -> dict[str, CycleReport]:
        reports = await self.cycle(cold=True)
        await asyncio.gather(self.worker.drain(), self.reviewer.drain())
        return reports

    async def close(self) -> None:
        with contextlib.suppress(StoreError):  # replicas: the others take over at once
            await self.leases.release_all()
        for host in self.hosts.values():
            await host.close()
        await self.worker.answerer.close()
        self.store.close()

    async def run(self, stop: asyncio.Event | None = None, *, handle_signals: bool = True
                  ) -> None:
        """The daemon: poll on a schedule, answer as jobs come; stop cleanly on SIGTERM.
        Raises `StoreFatal` after stopping if the database became unusable, and
        `ListenError` before starting if the metrics address is taken."""
        stop = self._stop = stop or asyncio.Event()
        if handle_signals:
            _install_signal_handlers(stop, self._stopping)
        notifier = Notifier()
        if self.settings.daemon.metrics_listen:
            self.metrics.serve(self.settings.daemon.metrics_listen)
        # Replicas: counted among the live before the first tick takes a share of the polls.
        with contextlib.suppress(StoreError):  # said by the store; the ticks try again
            await self.leases.heartbeat(now())
        # Identities first: READY means "knows who it is", within seconds.
        started = await asyncio.gather(*(self._start_host(name) for name in self.hosts))
        background: list[asyncio.Task[object]] = [task for task in started if task is not None]
        scheduler = AsyncIOScheduler()
        scheduler.add_job(self.tick, "interval", id="poll",
                          seconds=self.settings.daemon.hot_poll_interval_seconds,
                          next_run_time=datetime.now(), coalesce=True, max_instances=1,
                          # several daemons (or hosts' rate limits) shared: no lockstep
                          jitter=self.settings.daemon.hot_poll_interval_seconds / 10,
                          misfire_grace_time=int(self.settings.daemon.poll_interval_seconds))
        daemon = self.settings.daemon
        if tier_on(daemon) and any(isinstance(h, LooksCheaply) for h in self.hosts.values()):
            scheduler.add_job(self.glance, "interval", id="active",
                              seconds=daemon.active_poll_interval_seconds,
                              next_run_time=datetime.now(), coalesce=True, max_instances=1,
                              jitter=daemon.active_poll_interval_seconds / 10,
                              misfire_grace_time=int(daemon.poll_interval_seconds))
        scheduler.start()
        self.last_tick = time.monotonic()
        notifier.ready(await self.status_line())
        background.append(asyncio.create_task(self._watchdog(notifier, stop)))
        background.append(asyncio.create_task(self._heartbeat(stop)))
        log.info("daemon_started", hosts=list(self.hosts), repos=len(self.settings.repos),
                 hot_interval=self.settings.daemon.hot_poll_interval_seconds,
                 cold_interval=self.settings.daemon.poll_interval_seconds,
                 systemd=notifier.enabled)
        background.append(asyncio.create_task(self.reviewer.serve(stop)))
        try:
            await self.worker.serve(stop)
        finally:
            notifier.stopping()
            stop.set()
            await self._shutdown(scheduler, background)
        if self.store.fatal is not None:
            raise self.store.fatal

    def _stopping(self, signum: int) -> None:
        self.stopped_by = signum

    async def _shutdown(self, scheduler: AsyncIOScheduler,
                        background: list[asyncio.Task[object]]) -> None:
        """One deadline for all of it, `shutdown_grace_seconds` (below the unit's
        TimeoutStopSec): the poll cycle in progress may commit what it fetched and
        in-flight replies may finish; what is left then is cancelled, and resumes from its
        last committed state at the next start."""
        began = time.monotonic()
        grace = self.settings.daemon.shutdown_grace_seconds
        scheduler.pause()  # no new ticks
        await asyncio.sleep(0)  # a tick submitted just before registers itself first
        background += self._lookups.values()
        for task in background:
            task.cancel()
        jobs_finished, cycle_finished, _ = await asyncio.gather(
            self.worker.finish_in_flight(grace), self._finish_polling(grace),
            self.reviewer.finish_in_flight(grace))
        # The cycle is over (or cancelled): APScheduler has nothing left to cancel.
        scheduler.shutdown(wait=False)
        await asyncio.gather(*background, return_exceptions=True)
        log.info("daemon_stopped", in_flight_finished=jobs_finished,
                 cycle_finished=cycle_finished, seconds=round(time.monotonic() - began, 1))

    async def _finish_polling(self, grace: float) -> bool:
        """Let the poll cycle in progress, and the MR syncs earlier cycles left running in
        the background, end within `grace`; cancel the rest. True if nothing had to be."""
        began = time.monotonic()
        for poller in self.pollers.values():  # a first sweep's queue is not waited for
            poller.halt()
        task, cycle_finished = self._tick_task, True
        if task is not None and any(p.planning for p in self.pollers.values()):
            # Listing (a big instance's first listing takes minutes): nothing of it is
            # stored but what is complete, and the next start lists again.
            task.cancel()
            await asyncio.wait([task])
            cycle_finished = False
        if task is not None:
            done, _ = await asyncio.wait([task], timeout=grace)
            if not done:
                task.cancel()
                await asyncio.wait([task])
                cycle_finished = False
        left = max(0.0, grace - (time.monotonic() - began))
        settled = await asyncio.gather(*(p.settle(left) for p in self.pollers.values()))
        return cycle_finished and all(settled)


def _install_signal_handlers(stop: asyncio.Event, stopping: Callable[[int], None]) -> None:
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        if stop.is_set():
            # Second signal: leave now. SQLite's WAL keeps the store consistent, and every
            # job resumes from its last committed state.
            log.warning("forced_exit", signal=signal.Signals(signum).name)
            os._exit(1)
        log.info("stopping", signal=signal.Signals(signum).name)
        stopping(signum)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(signum, on_signal, signum)
        except (NotImplementedError, RuntimeError):  # not the main thread (tests)
            return
