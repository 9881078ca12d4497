"""An MR read for the first time is decided and stored in the transaction that found it
unstored (sync/ingest.py): the same rows and jobs the poller's two transactions made."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlmodel import Session

from livereview.core.model import Policy, Snapshot
from livereview.store import jobs, snapshots
from livereview.store.db import Store
from livereview.sync.decide import decide
from livereview.sync.ingest import FirstRead, Read, load_or_store, store
from tests.factories import ALICE, IDENTITY, KEY, T0, msg, snapshot, thread

POLICY = Policy()
READ = Read(baseline=T0 - timedelta(hours=1), concessions=frozenset(), identity=IDENTITY,
            policy=POLICY, review_on=(), now=T0 + timedelta(minutes=5))
MENTIONED = snapshot(thread("t1", msg("1", ALICE, "@livereview is this lock needed?")))


class Refused(Exception):
    """What a transaction that failed after its writes raises here."""


def test_a_first_read_stores_the_snapshot_and_the_job_the_poller_would_have(
        database_url: str) -> None:
    db = Store.open(database_url)
    first = db.transaction(load_or_store, MENTIONED, READ)
    assert isinstance(first, FirstRead)
    assert [key for _, key in first.ingested.jobs] == [
        r.key for r in first.decided.requests] != []
    decided = decide(None, MENTIONED, READ.baseline, READ.concessions, IDENTITY, POLICY, ())
    assert first.decided == decided
    assert db.transaction(snapshots.load, KEY) == MENTIONED
    assert db.transaction(jobs.counts) == {"pending": 1}
    # Read again: what is stored comes back, and nothing more is written.
    assert db.transaction(load_or_store, MENTIONED, READ) == MENTIONED
    assert db.transaction(jobs.counts) == {"pending": 1}
    db.close()


def test_a_first_read_whose_transaction_fails_leaves_nothing_stored(database_url: str) -> None:
    db = Store.open(database_url)

    def stored_then_refused(session: Session, fresh: Snapshot, read: Read) -> None:
        assert isinstance(load_or_store(session, fresh, read), FirstRead)
        raise Refused

    with pytest.raises(Refused):
        db.transaction(stored_then_refused, MENTIONED, READ)
    assert db.transaction(snapshots.load, KEY) is None
    assert db.transaction(jobs.counts) == {}
    # The next read stores it, once.
    assert isinstance(db.transaction(load_or_store, MENTIONED, READ), FirstRead)
    assert db.transaction(jobs.counts) == {"pending": 1}
    assert db.transaction(store, MENTIONED, [], [], [], IDENTITY, READ.now, MENTIONED,
                          POLICY.max_edit_answers).jobs == []
    db.close()
