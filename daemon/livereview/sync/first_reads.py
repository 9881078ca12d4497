"""The reads that may be first reads, stored a few to a transaction (bench figure 16).

Every read of an MR not too long to decide on the event loop asks the store to load what is
stored for it or, when nothing is (a first read), to decide and store it (sync/ingest.py
`load_or_store`). At first sight of hundreds of MRs a transaction of its own for each cost
about a quarter of a millisecond of the store's CPU besides the work itself. The reads that
ask while the store's thread is busy with the last ones are done together, in one
transaction, when it is free: each MR's snapshot, reply jobs and review runs still commit
together — a crash loses whole reads, never part of one, and the poller reads again what
was not stored (the listing watermark waits for every read it began: sync/watermark.py).
One read's trouble stays its own: a transaction of several that fails for anything but the
store (which fails them all alike) is done again one read at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from livereview.core.model import Snapshot
from livereview.store.db import Store
from livereview.store.faults import StoreError
from livereview.sync.ingest import Found, Read, load_or_store, load_or_store_each

Waiting = tuple[Snapshot, Read, "asyncio.Future[Found]"]


class NotStored(StoreError):
    """A read's storing stopped before it answered (the task storing it was cancelled):
    a store's trouble to the read — it is read again, the listing watermark stays put."""


@dataclass
class FirstReads:
    """One host's reads waiting for the store, and the task that stores them."""

    store: Callable[[], Store]  # the poller's, as it is now
    _waiting: list[Waiting] = field(default_factory=list)
    _storing: asyncio.Task[None] | None = None

    async def load_or_store(self, fresh: Snapshot, read: Read) -> Found:
        """`sync/ingest.py` `load_or_store` of `fresh`, in a transaction it may share."""
        found: asyncio.Future[Found] = asyncio.get_running_loop().create_future()
        self._waiting.append((fresh, read, found))
        if self._storing is None:
            self._storing = asyncio.create_task(self._store_waiting(), name="first-reads")
        return await found

    async def _store_waiting(self) -> None:
        batch: list[Waiting] = []
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                await self._store(batch)
        finally:
            # Cancelled (or worse) mid-way: no read may wait for good. Those of the batch
            # may or may not be stored, the queued ones are not: each read fails as the
            # store's trouble does, and the poller reads it again (sync/poller.py).
            self._storing = None
            left, self._waiting = [*batch, *self._waiting], []
            for _, _, found in left:
                _settle(found, NotStored("the reads waiting for the store were not "
                                         "stored: their storing was stopped"))

    async def _store(self, batch: list[Waiting]) -> None:
        if len(batch) == 1:
            await self._alone(batch[0])
            return
        try:
            results = await self.store().run(
                load_or_store_each, [(fresh, read) for fresh, read, _ in batch])
        except StoreError as exc:  # the store's trouble: every read's alike
            for _, _, found in batch:
                _settle(found, exc)
            return
        except Exception:  # noqa: BLE001 - one read's trouble: each again, alone
            for waiting in batch:
                await self._alone(waiting)
            return
        for (_, _, found), result in zip(batch, results, strict=True):
            _settle(found, result)

    async def _alone(self, waiting: Waiting) -> None:
        fresh, read, found = waiting
        try:
            result = await self.store().run(load_or_store, fresh, read)
        except Exception as exc:  # noqa: BLE001 - handed to the read that asked
            _settle(found, exc)
        else:
            _settle(found, result)


def _settle(found: asyncio.Future[Found], outcome: Found | Exception) -> None:
    """The read's answer — unless it stopped waiting (cancelled: the daemon stops)."""
    if found.done():
        return
    if isinstance(outcome, Exception):
        found.set_exception(outcome)
    else:
        found.set_result(outcome)
