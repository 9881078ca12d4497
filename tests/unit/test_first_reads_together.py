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
from livereview.sync.first_reads import FirstReads
from livereview.sync.ingest import FirstRead, Read
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
