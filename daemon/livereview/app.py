"""Wires settings → store, hosts, pollers, worker; runs one cycle or the daemon."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import structlog
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from livereview.hosts.base import Host, HostError
from livereview.hosts.connect import connect
from livereview.metrics import Metrics
from livereview.model import Identity, JobState, Policy
from livereview.reply.knowledge import Knowledge
from livereview.reply.llm import Answerer, OpenAIAnswerer
from livereview.reply.worker import Worker
from livereview.settings import Settings
from livereview.store import jobs, state
from livereview.store.db import Store
from livereview.store.engine import StoreError
from livereview.sync.poller import CycleReport, HostPoller
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
                  max_replies_per_mr_per_hour=bot.max_replies_per_mr_per_hour,
                  automated_reply_seconds=bot.automated_reply_seconds)


@dataclass
class App:
    settings: Settings
    store: Store
    metrics: Metrics
    hosts: dict[str, Host]
    worker: Worker
    pollers: dict[str, HostPoller] = field(default_factory=dict)
    _last_cold: float = 0.0
    _ticking: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_tick: float = 0.0
    on_cycle: Callable[[dict[str, CycleReport]], None] | None = None  # the demo's live view
    on_progress: Callable[[str, int, int], None] | None = None  # `once` on a terminal

    @classmethod
    def create(cls, settings: Settings, *, answerer: Answerer | None = None,
               metrics: Metrics | None = None) -> App:
        metrics = metrics or Metrics()
        metrics.prepare({h.type for h in settings.hosts}, {h.name for h in settings.hosts})
        store = Store.for_settings(settings.daemon)
        hosts = {h.name: connect(h, metrics) for h in settings.hosts}
        worker = Worker(store=store, hosts=hosts, identities={}, policy=policy(settings),
                        lessons=settings.lessons,
                        knowledge=Knowledge(settings.knowledge(),
                                            settings.daemon.step_timeout_seconds),
                        answerer=answerer or OpenAIAnswerer(settings.ai, metrics),
                        daemon=settings.daemon, bot=settings.bot, metrics=metrics, clock=now)
        return cls(settings, store, metrics, hosts, worker)

    async def _identity(self, name: str) -> Identity | None:
        host, override = self.hosts[name], self.settings.host(name).username
        try:
            identity = await host.whoami()
        except HostError as exc:
            stored = await self.store.run(state.identity, name)
            log.error("identity_unavailable", host=name, error=str(exc),
                      using_stored=stored is not None)
            return stored
        if override:
            identity = Identity(name, identity.user_id, override)
        await self.store.run(state.save_identity, identity, now())
        return identity

    async def _poller(self, name: str) -> HostPoller | None:
        if name in self.pollers:
            return self.pollers[name]
        identity = await self._identity(name)
        if identity is None:
            return None
        self.worker.identities[name] = identity
        self.pollers[name] = HostPoller(
            host=self.hosts[name], identity=identity, repos=self.settings.repos_of(name),
            store=self.store, settings=self.settings.daemon, policy=policy(self.settings),
            metrics=self.metrics, on_new_jobs=self.worker.kick, on_progress=self.on_progress,
            clock=now)
        return self.pollers[name]

    async def cycle(self, *, cold: bool = False, wait: float | None = None
                    ) -> dict[str, CycleReport]:
        """One poll cycle over every host, concurrently; a failing host does not stop others.
        MR syncs still running after `wait` seconds go on in the background."""
        pollers = [p for n in self.hosts if (p := await self._poller(n)) is not None]
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
        async with self._ticking:
            try:
                reports = await self.cycle(
                    cold=cold, wait=self.settings.daemon.hot_poll_interval_seconds)
            except StoreError as exc:  # disk full, locked: poll again once it is writable
                log.error("store_unavailable", error=str(exc))
                return
        if self.on_cycle is not None:
            self.on_cycle(reports)

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
            status = await self.status_line()
            if period is not None and time.monotonic() - self.last_tick < period:
                notifier.watchdog(status)
            else:
                notifier.status(status)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=(period or 20.0) / 2)

    async def once(self) -> dict[str, CycleReport]:
        reports = await self.cycle(cold=True)
        await self.worker.drain()
        return reports

    async def close(self) -> None:
        for host in self.hosts.values():
            await host.close()
        await self.worker.answerer.close()
        self.store.close()

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """The daemon: poll on a schedule, answer as jobs come; stop cleanly on SIGTERM."""
        stop = stop or asyncio.Event()
        _install_signal_handlers(stop)
        notifier = Notifier()
        if self.settings.daemon.metrics_listen:
            self.metrics.serve(self.settings.daemon.metrics_listen)
        for name in self.hosts:  # identities first: READY means "knows who it is"
            await self._poller(name)
        scheduler = AsyncIOScheduler()
        scheduler.add_job(self.tick, "interval", id="poll",
                          seconds=self.settings.daemon.hot_poll_interval_seconds,
                          next_run_time=datetime.now(), coalesce=True, max_instances=1,
                          # several daemons (or hosts' rate limits) shared: no lockstep
                          jitter=self.settings.daemon.hot_poll_interval_seconds / 10,
                          misfire_grace_time=int(self.settings.daemon.poll_interval_seconds))
        scheduler.start()
        self.last_tick = time.monotonic()
        notifier.ready(await self.status_line())
        watchdog = asyncio.create_task(self._watchdog(notifier, stop))
        log.info("daemon_started", hosts=list(self.hosts), repos=len(self.settings.repos),
                 hot_interval=self.settings.daemon.hot_poll_interval_seconds,
                 cold_interval=self.settings.daemon.poll_interval_seconds,
                 systemd=notifier.enabled)
        try:
            await self.worker.serve(stop)
        finally:
            notifier.stopping()
            stop.set()
            await watchdog
            # No new ticks, but let a poll cycle in progress commit what it fetched: the
            # executor's shutdown would cancel it mid-request (APScheduler 3 cancels running
            # coroutine jobs whatever `wait` says), so it comes last.
            scheduler.pause()
            grace = self.settings.daemon.shutdown_grace_seconds
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(grace), self._ticking:
                    pass
            scheduler.shutdown(wait=False)
            for poller in self.pollers.values():  # MR syncs still running in the background
                await poller.settle(grace)
            finished = await self.worker.finish_in_flight(grace)
            log.info("daemon_stopped", in_flight_finished=finished)


def _install_signal_handlers(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        if stop.is_set():
            # Second signal: leave now. SQLite's WAL keeps the store consistent, and every
            # job resumes from its last committed state.
            log.warning("forced_exit", signal=signal.Signals(signum).name)
            os._exit(1)
        log.info("stopping", signal=signal.Signals(signum).name)
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(signum, on_signal, signum)
        except (NotImplementedError, RuntimeError):  # not the main thread (tests)
            return
