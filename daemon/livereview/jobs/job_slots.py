"""Running due work as tasks, a bounded number at once: the scheduling the reply worker and
the review runner share — one wake-up, one rest for an item whose outcome could not be
recorded, one loop that says an unexpected failure once and keeps serving."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from livereview.log_setup import FailureLog
from livereview.store.engine import StoreError


@dataclass
class Slots:
    label: str  # names the tasks: `label-<id>`
    error_event: str  # the log event when finding due work fails unexpectedly
    capacity: int
    trouble: FailureLog
    describe: Callable[[BaseException], str]  # one line for an unexpected failure
    idle_wait_seconds: float = 1.0  # look for due retries this often when nothing wakes us
    running: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    resting: dict[int, float] = field(default_factory=dict)  # id → monotonic deadline
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def kick(self) -> None:
        """New work is waiting: start what is due without waiting for the next tick."""
        self.wake.set()

    def rest(self, item_id: int, seconds: float) -> None:
        """Not to be started again for `seconds` (its outcome could not be recorded)."""
        self.resting[item_id] = time.monotonic() + seconds

    def free(self) -> int:
        return self.capacity - len(self.running)

    def busy(self) -> list[int]:
        """Ids not to start now: running, or resting."""
        now = time.monotonic()
        self.resting = {i: until for i, until in self.resting.items() if until > now}
        return [*self.running, *self.resting]

    def start(self, item_id: int, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work, name=f"{self.label}-{item_id}")
        self.running[item_id] = task
        task.add_done_callback(partial(self._forget, item_id))

    def _forget(self, item_id: int, _task: asyncio.Task[None]) -> None:
        self.running.pop(item_id, None)
        self.wake.set()  # a slot is free: start the next due item now, not at the next tick

    async def serve(self, stop: asyncio.Event, run_due: Callable[[], Awaitable[int]]) -> None:
        """Start due work as it comes, until `stop` is set."""
        while not stop.is_set():
            self.wake.clear()
            try:
                await run_due()
            except StoreError:  # said once by the store; the wait below backs off
                pass
            except Exception as exc:  # noqa: BLE001 - a bug: say it once, keep serving
                self.trouble.failed("run_due", self.error_event, self.describe(exc))
            else:
                self.trouble.ok("run_due", self.error_event)
            waits = [asyncio.create_task(self.wake.wait()), asyncio.create_task(stop.wait())]
            await asyncio.wait(waits, timeout=self.idle_wait_seconds,
                               return_when=asyncio.FIRST_COMPLETED)
            for w in waits:
                w.cancel()

    async def drain(self, run_due: Callable[[], Awaitable[int]]) -> None:
        """Run work until none is due now (for `livereview once`)."""
        while True:
            started = await run_due()
            if not started and not self.running:
                return
            if self.running:
                await asyncio.wait(list(self.running.values()),
                                   return_when=asyncio.FIRST_COMPLETED)

    async def finish_in_flight(self, grace: float) -> bool:
        """Wait up to `grace` seconds for running work; True if all of it finished."""
        if not self.running:
            return True
        _, pending = await asyncio.wait(list(self.running.values()), timeout=grace)
        for task in pending:
            task.cancel()
        return not pending
