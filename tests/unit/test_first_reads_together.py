"""Reads that ask the store while it is busy share one transaction (sync/first_reads.py,
bench figure 16), and still come out as if each had its own."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Concatenate, ParamSpec, TypeVar

from sqlmodel import Session

from livereview.core.model import MRKey, Policy, Snapshot
from livereview.store import jobs, snapshots
from livereview.store.db import Store
from livereview.store.faults import StoreError
from livereview.sync.first_reads import FirstReads
from livereview.sync.ingest import FirstRead, Found, Read
from tests.factories import ALICE, IDENTITY, KEY, T0, msg, snapshot, thread

P = ParamSpec("P")
R = TypeVar("R")
READ = Read(baseline=T0 - timedelta(hours=1), concessions=frozenset(), identity=IDENTITY,
            policy=Policy(), review_on=(), now=T0 + timedelta(minutes=5))
MENTIONED = snapshot(thread("t1", msg("1", ALICE, "@livereview is this lock needed?")))


class CountingStore(Store):
    """The store, counting its transactions."""

    transactions = 0

    def transaction(self, fn: Callable[Concatenate[Session, P], R], *args: P.args,
                    **kwargs: P.kwargs) -> R:
        self.transactions += 1
        return super().transaction(fn, *args, **kwargs)


class GatedStore(Store):
    """The store, holding every transaction until the test opens `gate`."""

    def __init__(self, store: Store) -> None:
        super().__init__(store.engine)
        self.entered, self.gate = asyncio.Event(), asyncio.Event()

    async def run(self, fn: Callable[Concatenate[Session, P], R], *args: P.args,
                  **kwargs: P.kwargs) -> R:
        self.entered.set()
        await self.gate.wait()
        return await super().run(fn, *args, **kwargs)


def _of(iid: int, base: Snapshot = MENTIONED) -> Snapshot:
    return replace(base, mr=replace(base.mr, key=MRKey(KEY.host, KEY.repo, iid)))


async def test_reads_that_ask_together_are_stored_in_one_transaction_as_each_alone(
        database_url: str) -> None:
    db = CountingStore(Store.open(database_url).engine)
    reads = FirstReads(lambda: db)
    mrs = [_of(iid) for iid in (1, 2, 3, 4)]
    try:
        found = await asyncio.gather(*(reads.load_or_store(mr, READ) for mr in mrs))
        assert db.transactions == 1  # asked before the store began: one transaction
        for mr, first in zip(mrs, found, strict=True):
            assert isinstance(first, FirstRead) and len(first.ingested.jobs) == 1
            assert db.transaction(snapshots.load, mr.mr.key) == mr
        assert db.transaction(jobs.counts) == {"pending": 4}
        # Read again: what is stored comes back, nothing more is written.
        again = await asyncio.gather(*(reads.load_or_store(mr, READ) for mr in mrs))
        assert again == mrs
        assert db.transaction(jobs.counts) == {"pending": 4}
    finally:
        db.close()


async def test_one_read_that_cannot_be_stored_fails_alone(database_url: str) -> None:
    db = CountingStore(Store.open(database_url).engine)
    reads = FirstReads(lambda: db)
    # A time without its zone cannot be weighed against the baseline: undecidable.
    naive = replace(MENTIONED.threads[0].messages[0], created_at=T0.replace(tzinfo=None))
    broken = _of(2, replace(MENTIONED, threads=(replace(MENTIONED.threads[0],
                                                        messages=(naive,)),)))
    mrs = [_of(1), broken, _of(3)]
    try:
        found = await asyncio.gather(*(reads.load_or_store(mr, READ) for mr in mrs),
                                     return_exceptions=True)
        assert isinstance(found[0], FirstRead) and isinstance(found[2], FirstRead)
        assert isinstance(found[1], TypeError)  # a bug's exception, its own
        assert db.transactions == 1 + 3  # together, then each alone
        assert [db.transaction(snapshots.load, mr.mr.key) is not None for mr in mrs] == [
            True, False, True]
        assert db.transaction(jobs.counts) == {"pending": 2}
    finally:
        db.close()


async def _asked(reads: FirstReads, db: GatedStore, mrs: list[Snapshot]
                 ) -> list[asyncio.Task[Found]]:
    """The first of `mrs` being stored (held at the gate), the others queued behind it."""
    first = asyncio.create_task(reads.load_or_store(mrs[0], READ))
    await db.entered.wait()
    rest = [asyncio.create_task(reads.load_or_store(mr, READ)) for mr in mrs[1:]]
    await asyncio.sleep(0)  # one turn of the loop: each has asked (no time passes)
    return [first, *rest]


async def test_cancelling_the_storing_task_fails_every_waiting_read_as_not_stored(
        database_url: str) -> None:
    """Cancelled (the daemon's loop shutting down), the task storing the first reads left
    the read it was storing and those queued behind it waiting for good: a poller's sync
    that never ends, and a watermark that never moves. Each now fails as the store's
    trouble (sync/poller.py reads it again), and the next reads are stored."""
    db = GatedStore(Store.open(database_url))
    reads = FirstReads(lambda: db)
    mrs = [_of(iid) for iid in (1, 2, 3)]
    try:
        asked = await _asked(reads, db, mrs)
        [storing] = [t for t in asyncio.all_tasks() if t.get_name() == "first-reads"]
        storing.cancel()
        db.gate.set()
        found = await asyncio.gather(*asked, return_exceptions=True)
        assert all(isinstance(f, StoreError) for f in found), found
        assert [db.transaction(snapshots.load, mr.mr.key) for mr in mrs] == [None] * 3
        again = await asyncio.gather(*(reads.load_or_store(mr, READ) for mr in mrs))
        assert all(isinstance(f, FirstRead) for f in again)
        assert db.transaction(jobs.counts) == {"pending": 3}
    finally:
        db.close()


async def test_a_read_that_stops_waiting_is_still_stored_and_the_others_answered(
        database_url: str) -> None:
    db = GatedStore(Store.open(database_url))
    reads = FirstReads(lambda: db)
    mrs = [_of(iid) for iid in (1, 2, 3)]
    try:
        first, gone, last = await _asked(reads, db, mrs)
        gone.cancel()
        db.gate.set()
        assert isinstance(await first, FirstRead) and isinstance(await last, FirstRead)
        assert [db.transaction(snapshots.load, mr.mr.key) for mr in mrs] == mrs
    finally:
        db.close()
