"""Leases (docs/DESIGN.md §12): one holder at a time on PostgreSQL, expiry hands work over, shards
are shared fairly by the live replicas; on SQLite the one process holds everything."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

import pytest
from sqlmodel import Session

from livereview.core.model import JobReason, ReplyRequest
from livereview.core.model_runs import ReviewRequest, ReviewTrigger
from livereview.store import jobs, leases, review_steps, reviews, state
from livereview.store.db import Store
from livereview.store.leases import LeaseLost, Leases
from tests.factories import KEY, T0

REPOS = tuple(f"acme/repo-{i}" for i in range(6))


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store.open(database_url)
    yield opened
    opened.close()


def _pair(store: Store) -> tuple[Leases, Leases]:
    return Leases(store, 30.0, "a"), Leases(store, 30.0, "b")


def test_a_lease_has_one_holder_until_it_expires(postgres_url: str) -> None:
    store = Store.open(postgres_url)
    try:
        assert store.transaction(leases.claim, "job:1", "a", T0, 30)
        assert not store.transaction(leases.claim, "job:1", "b", T0 + timedelta(seconds=29), 30)
        assert store.transaction(leases.claim, "job:1", "a", T0 + timedelta(seconds=29), 30)
        # a stopped renewing at 29 s: b takes over once 29 + 30 s have passed
        later = T0 + timedelta(seconds=59)
        assert store.transaction(leases.claim, "job:1", "b", later, 30)
        assert store.transaction(leases.renew, "a", later, 30) == set()
        assert store.transaction(leases.renew, "b", later, 30) == {"job:1"}
    finally:
        store.close()


async def test_two_replicas_split_the_shards_and_the_survivor_takes_all(store: Store) -> None:
    a, b = _pair(store)
    scopes = set(leases.shards(REPOS))
    first = await a.poll_shards("gl", REPOS, T0)
    if not a.exclusive:  # SQLite: one process, one shard, everything held
        assert first == {leases.INSTANCE: REPOS}
        assert await b.poll_shards("gl", REPOS, T0) == {leases.INSTANCE: REPOS}
        return
    assert set(first) == scopes  # alone: all of them
    second = await b.poll_shards("gl", REPOS, T0)  # b counts two replicas: takes what is free
    first = await a.poll_shards("gl", REPOS, T0)  # a gives back what is over its share
    second = await b.poll_shards("gl", REPOS, T0)
    assert set(first).isdisjoint(second)
    assert set(first) | set(second) == scopes
    assert sorted(r for group in [*first.values(), *second.values()] for r in group) \
        == sorted(REPOS)
    # a dies (stops renewing): after the expiry b holds every shard
    later = T0 + timedelta(seconds=31)
    assert set(await b.poll_shards("gl", REPOS, later)) == scopes


async def test_a_job_runs_on_one_replica_and_a_finished_one_is_not_run_again(
        store: Store) -> None:
    request = ReplyRequest(KEY, "t1", "1", JobReason.MENTION, T0)
    store.transaction(jobs.enqueue, [request], T0)
    a, b = _pair(store)
    mine, theirs = await asyncio.gather(a.due_jobs(T0, 4, []), b.due_jobs(T0, 4, []))
    if not a.exclusive:
        assert len(mine) == len(theirs) == 1
        return
    assert sorted([len(mine), len(theirs)]) == [0, 1]
    winner, loser = (a, b) if mine else (b, a)
    [job] = mine or theirs
    with pytest.raises(LeaseLost):
        await loser.fence(job, T0, 60)
    await winner.fence(job, T0, 60)
    store.transaction(jobs.mark_posted, job.id, "m1", T0, citations=[], lesson=None)
    await winner.release_job(job.id)
    assert await loser.due_jobs(T0, 4, []) == []


async def test_a_dead_replicas_job_passes_to_another_after_the_expiry(store: Store) -> None:
    request = ReplyRequest(KEY, "t1", "1", JobReason.MENTION, T0)
    store.transaction(jobs.enqueue, [request], T0)
    a, b = _pair(store)
    [job] = await a.due_jobs(T0, 4, [])
    if not a.exclusive:
        return
    assert await b.due_jobs(T0 + timedelta(seconds=29), 4, []) == []
    [taken] = await b.due_jobs(T0 + timedelta(seconds=31), 4, [])
    assert taken.id == job.id
    with pytest.raises(LeaseLost):  # a woke up: it may not post any more
        await a.fence(job, T0 + timedelta(seconds=32), 60)


async def test_a_stalled_replica_may_not_post_a_job_another_finished_meanwhile(
        postgres_url: str) -> None:
    """a stalls past its lease; b takes the job, posts it and lets the lease go. The lease
    is free again, but a's copy of the job is stale: its fence must still refuse."""
    store = Store.open(postgres_url)
    try:
        store.transaction(jobs.enqueue, [ReplyRequest(KEY, "t1", "1", JobReason.MENTION,
                                                      T0)], T0)
        a, b = _pair(store)
        [stale] = await a.due_jobs(T0, 4, [])
        later = T0 + timedelta(seconds=31)
        [job] = await b.due_jobs(later, 4, [])
        await b.fence(job, later, 60)
        store.transaction(jobs.mark_posted, job.id, "m1", later, citations=[], lesson=None)
        await b.release_job(job.id)
        with pytest.raises(LeaseLost):
            await a.fence(stale, later, 60)
    finally:
        store.close()


async def test_a_review_runs_on_one_replica_and_a_stale_one_may_not_post_a_finding(
        postgres_url: str) -> None:
    """Review runs are claimed like reply jobs: one replica runs each, and one that stalled
    while another took over may post neither the summary nor a finding the other began."""
    store = Store.open(postgres_url)
    try:
        store.transaction(reviews.enqueue, [ReviewRequest(KEY, ReviewTrigger.CLI, "c0ffee")],
                          T0)
        a, b = _pair(store)
        mine, theirs = await asyncio.gather(a.due_reviews(T0, 4, []),
                                            b.due_reviews(T0, 4, []))
        assert sorted([len(mine), len(theirs)]) == [0, 1]
        [run] = mine or theirs
        winner, loser = (a, b) if mine else (b, a)
        with pytest.raises(LeaseLost):
            await loser.fence_review(run, T0, 60)
        run = store.transaction(reviews.decided, run.id, T0, placements={}, fixed=[],
                                verdict="commented", not_raised_again=0)
        store.transaction(reviews.add_batch, run.id, T0, findings=[{
            "severity": "critical", "path": "a.py", "line": 1, "side": "new", "body": "x",
            "fingerprint": "f", "placement": "inline"}], files=[], files_done=1,
            reviewed=1, skipped=0)
        [finding] = store.transaction(reviews.findings, run.id)
        await winner.fence_review(run, T0, 60, finding)
        # the winner stalls past its lease; the loser takes the run and starts the finding
        later = T0 + timedelta(seconds=61)
        [taken] = await loser.due_reviews(later, 4, [])
        await loser.fence_review(taken, later, 60, finding)
        store.transaction(review_steps.start_finding_post, finding.id, later)
        await loser.release_review(taken.id)
        with pytest.raises(LeaseLost):  # the lease is free again, but its copy is stale
            await winner.fence_review(run, later, 60, finding)
    finally:
        store.close()


def test_replicas_creating_the_same_watermark_at_once_both_get_it(postgres_url: str) -> None:
    """a creates the watermark and has not committed; b's insert waits for it, then finds
    the row taken: b must read a's row, not fail its whole poll cycle."""
    a, b = Store.open(postgres_url), Store.open(postgres_url)
    created, release = threading.Event(), threading.Event()

    def slow(session: Session) -> datetime:
        row = state.watermark(session, "gl", "acme/x", T0)
        created.set()
        release.wait(10)
        return row.first_seen_at

    try:
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(a.transaction, slow)
            created.wait(10)
            second = pool.submit(b.transaction, state.watermark, "gl", "acme/x",
                                 T0 + timedelta(hours=1))
            time.sleep(0.3)  # b is waiting on a's uncommitted row by now (or soon)
            release.set()
            assert first.result(timeout=20) == T0
            assert second.result(timeout=20).first_seen_at == T0
    finally:
        a.close()
        b.close()
