"""An MR read for the first time is decided and stored in the transaction that found it
unstored (sync/ingest.py): the same rows and jobs the poller's two transactions made."""

from __future__ import annotations

import itertools
import tempfile
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import Session, col, select

from livereview.core.model import Actor, Policy, Reaction, Snapshot
from livereview.store import jobs, snapshots
from livereview.store.db import Store
from livereview.store.tables import EventRow, ReplyJobRow, ReviewRunRow
from livereview.sync.decide import decide
from livereview.sync.ingest import FirstRead, Read, load_or_store, store
from tests.databases import url_for
from tests.factories import ALICE, BOB, BOT, IDENTITY, KEY, T0, msg, snapshot, thread

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


PEOPLE = (ALICE, BOB, BOT, Actor("7", "ci", bot=True))
_examples = itertools.count()


@st.composite
def first_sights(draw: st.DrawFn) -> Snapshot:
    """An MR as first read: threads of people, bots and the bot itself, some mentioning it,
    some edited, some with a 👎."""
    threads = []
    for t in range(draw(st.integers(0, 4))):
        messages = []
        for i in range(draw(st.integers(0, 5))):
            message = msg(f"m{t}-{i}", draw(st.sampled_from(PEOPLE)),
                          draw(st.sampled_from(["a", "@livereview why?", "@livereview review"])),
                          thread=f"t{t}", at=i)
            if draw(st.booleans()):
                message = replace(message, updated_at=message.updated_at + timedelta(minutes=9))
            if draw(st.booleans()):
                message = replace(message, reactions=(
                    Reaction("thumbsdown", Actor(BOB.id, BOB.username), f"r{t}-{i}"),))
            messages.append(message)
        threads.append(thread(f"t{t}", *messages))
    return snapshot(*threads)


def _stored(session: Session
            ) -> tuple[list[tuple[str, str, str, str]], list[str], list[str]]:
    """Events, reply jobs and review runs as stored, in order, without ids or times."""
    events = [(e.kind, e.host_thread_id or "", e.host_message_id or "", e.detail or "")
              for e in session.exec(select(EventRow).order_by(col(EventRow.id)))]
    replies = sorted(j.key for j in session.exec(select(ReplyJobRow)))
    runs = sorted(r.key for r in session.exec(select(ReviewRunRow)))
    return events, replies, runs


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first_sights(), st.frozensets(st.sampled_from(["m0-0", "m1-1", "m2-0"])))
def test_any_first_read_stores_what_the_two_transactions_stored(
        fresh: Snapshot, concessions: frozenset[str]) -> None:
    """The poller's old way — load nothing, decide, store in a second transaction — and
    the one transaction leave the same snapshot, events, jobs and runs."""
    read = replace(READ, concessions=concessions, review_on=("mention",))
    with tempfile.TemporaryDirectory() as tmp:
        one = Store.open(url_for(Path(tmp) / f"one{next(_examples)}.db"))
        two = Store.open(url_for(Path(tmp) / f"two{next(_examples)}.db"))
        try:
            first = one.transaction(load_or_store, fresh, read)
            assert isinstance(first, FirstRead)
            assert two.transaction(snapshots.load, KEY) is None
            decided = decide(None, fresh, read.baseline, concessions, IDENTITY, POLICY,
                             read.review_on)
            assert first.decided == decided
            two.transaction(store, fresh, decided.events, decided.requests, decided.reviews,
                            IDENTITY, read.now, None, POLICY.max_edit_answers)
            assert one.transaction(snapshots.load, KEY) == fresh
            assert one.transaction(_stored) == two.transaction(_stored)
        finally:
            one.close()
            two.close()
