"""Incremental saving: whatever changed between two snapshots, what is loaded afterwards is
the new snapshot exactly — while an unchanged thread is not rewritten."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlmodel import Session, col, func, select

from livereview.core.model import Actor, Reaction, Snapshot, Thread
from livereview.store import snapshots
from livereview.store.db import Store
from livereview.store.tables import MRMessage
from tests.databases import url_for
from tests.factories import ALICE, BOB, BOT, IDENTITY, KEY, msg, snapshot, thread

PEOPLE = (ALICE, BOB, BOT, Actor("7", "ci", bot=True))


def _threads(draw: st.DrawFn, count: int, prefix: str) -> list[Thread]:
    threads = []
    for t in range(count):
        size = draw(st.integers(0, 6))
        messages = [msg(f"{prefix}{t}-{i}", draw(st.sampled_from(PEOPLE)),
                        draw(st.sampled_from(["a", "b", "@livereview c"])), thread=f"t{t}",
                        at=i) for i in range(size)]
        threads.append(thread(f"t{t}", *messages, resolved=draw(st.booleans())))
    return threads


@st.composite
def evolution(draw: st.DrawFn) -> tuple[Snapshot, Snapshot]:
    """A snapshot and a later one: notes added, edited, removed or reordered; reactions;
    threads added, removed, reordered or resolved."""
    before = _threads(draw, draw(st.integers(0, 4)), "m")
    after = []
    for t in before:
        messages = list(t.messages)
        if len(messages) > 0 and draw(st.booleans()):
            i = draw(st.integers(0, len(messages) - 1))
            messages[i] = replace(messages[i], body=messages[i].body + " (edited)")
        if len(messages) > 0 and draw(st.booleans()):
            i = draw(st.integers(0, len(messages) - 1))
            messages[i] = replace(messages[i], reactions=(  # the store keeps who by id and name
                Reaction("thumbsdown", Actor(BOB.id, BOB.username), "r1"),))
        if len(messages) > 0 and draw(st.booleans()):
            del messages[draw(st.integers(0, len(messages) - 1))]
        if draw(st.booleans()):
            messages.reverse()
        for extra in range(draw(st.integers(0, 3))):
            messages.append(msg(f"n{t.id}-{extra}", ALICE, "new", thread=t.id, at=100 + extra))
        if draw(st.booleans()):
            after.append(replace(t, messages=tuple(messages), resolved=not t.resolved))
        elif draw(st.integers(0, 5)) != 0:  # a sixth of the threads go away
            after.append(replace(t, messages=tuple(messages)))
    after += _threads(draw, draw(st.integers(0, 2)), "x")
    after = list({t.id: t for t in after}.values())
    movable = [i for i, t in enumerate(after) if t.messages]
    if len(after) > 1 and movable and draw(st.booleans()):  # a reply whose parent went away
        source = draw(st.sampled_from(movable))  # joins another thread, keeping its id
        target = draw(st.sampled_from([i for i in range(len(after)) if i != source]))
        moved = replace(after[source].messages[-1], thread_id=after[target].id)
        after[source] = replace(after[source], messages=after[source].messages[:-1])
        after[target] = replace(after[target], messages=(*after[target].messages, moved))
    if draw(st.booleans()):
        after.reverse()
    commits = draw(st.sampled_from([("c2", "c1"), ("c3", "c2", "c1")]))
    return snapshot(*before), snapshot(*after, commits=commits, head=commits[0])


_examples = itertools.count()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(evolution())
def test_whatever_changed_loading_gives_the_new_snapshot(tmp_path: Path,
                                                         pair: tuple[Snapshot, Snapshot]) -> None:
    before, after = pair
    db = tmp_path / f"x{next(_examples)}.db"  # each example a database of its own
    store = Store.open(url_for(db))
    try:
        store.transaction(snapshots.save, before, [], IDENTITY, before.mr.created_at)
        assert store.transaction(snapshots.load, KEY) == before
        store.transaction(snapshots.save, after, [], IDENTITY, after.mr.created_at, before)
        assert store.transaction(snapshots.load, KEY) == after
    finally:
        store.close()
        db.unlink(missing_ok=True)


def _row_ids(session: Session) -> set[int]:
    ids = session.exec(select(col(MRMessage.id))).all()
    return {i for i in ids if i is not None}  # every stored row has one


def test_a_grown_thread_keeps_its_rows_and_adds_only_the_new_ones(database_url: str) -> None:
    store = Store.open(database_url)
    long = thread("t1", *(msg(str(i), ALICE, f"note {i}", at=i) for i in range(500)))
    other = thread("t2", msg("x", BOB, "unrelated", thread="t2"))
    before = snapshot(long, other)
    store.transaction(snapshots.save, before, [], IDENTITY, before.mr.created_at)
    kept = store.transaction(_row_ids)
    grown = replace(long, messages=(*long.messages, msg("500", BOB, "one more", at=500)))
    after = snapshot(grown, other)
    store.transaction(snapshots.save, after, [], IDENTITY, after.mr.created_at, before)
    assert kept < store.transaction(_row_ids)  # the old rows stay, one row is new
    assert len(store.transaction(_row_ids) - kept) == 1
    assert store.transaction(snapshots.load, KEY) == after
    count = store.transaction(lambda s: s.exec(select(func.count(col(MRMessage.id)))).one())
    assert count == 502
    store.close()


def test_saving_without_the_stored_snapshot_replaces_everything(database_url: str) -> None:
    store = Store.open(database_url)
    first = snapshot(thread("t1", msg("1"), msg("2", at=1)))
    second = snapshot(thread("t1", msg("2", at=1), msg("3", at=2)))
    store.transaction(snapshots.save, first, [], IDENTITY, first.mr.created_at)
    store.transaction(snapshots.save, second, [], IDENTITY, second.mr.created_at)
    assert store.transaction(snapshots.load, KEY) == second
    store.close()

