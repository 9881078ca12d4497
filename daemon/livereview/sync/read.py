"""Reading one MR and storing what it found (docs/DESIGN.md §5, §6): the poller's sweep,
hot cycle and active tier each hand an MR here.

The read is diffed against what is stored, decided (sync/decide.py) and stored with its reply
jobs and review runs in one transaction (sync/ingest.py). A long MR is decided off the event
loop, and the last few long ones are kept to skip reloading one re-read unchanged. Commits are
read only when something needs them (sync/commits.py).
"""

from __future__ import annotations

import asyncio
import operator
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import structlog

from livereview.core.model import (
    Event,
    Identity,
    Lesson,
    MergeRequest,
    MRKey,
    Policy,
    Snapshot,
)
from livereview.hosts.base import Host
from livereview.metrics import Metrics
from livereview.store import lessons as lesson_rows
from livereview.store import reviews, snapshots
from livereview.store.db import Store
from livereview.sync import commits
from livereview.sync.decide import decide, unchanged
from livereview.sync.diff import CommitsNotRead
from livereview.sync.first_reads import FirstReads
from livereview.sync.ingest import (
    FirstRead,
    Ingested,
    NeedsCommits,
    Read,
    load_or_store_with_commits,
)
from livereview.sync.ingest import store as store_read

log = structlog.get_logger("livereview.poller")
# An MR with more messages, or more text, is diffed and triggered in a thread.
OFF_LOOP_MESSAGES = 2_000
OFF_LOOP_CHARS = 256_000
INGESTED_KEPT = 4  # long MRs whose last stored snapshot is kept to skip an unchanged reload


def _count(snapshot: Snapshot) -> int:
    return sum(len(t.messages) for t in snapshot.threads)


@dataclass
class MRReader:
    """One host's reads of single MRs, and what storing them made known."""

    host: Host
    # The poller's, as it is now: a refresh that learns the other tokens' identities
    # (app/daemon.py `identity_changed`) reaches the next read.
    identity: Callable[[], Identity]
    store: Callable[[], Store]  # the poller's, as it is now
    policy: Policy
    metrics: Metrics
    clock: Callable[[], datetime]
    review_on: dict[str, tuple[str, ...]]  # repo → events (the poller's, shared)
    on_new_jobs: Callable[[], None]
    on_new_reviews: Callable[[], None]
    # Long MRs as last stored, the most recent few: each can weigh tens of MB, and one that
    # went cold or was merged must not stay in memory for good.
    ingested: OrderedDict[MRKey, Snapshot] = field(default_factory=OrderedDict)
    first_reads: FirstReads = field(init=False)  # sync/first_reads.py

    def __post_init__(self) -> None:
        self.first_reads = FirstReads(self.store)

    def _capped(self, key: MRKey, message_ids: Sequence[str]) -> None:
        """Edits left unanswered by the cap (core/edits.py): counted, and said once each."""
        for message_id in message_ids:
            self.metrics.edit_answers_capped.labels(self.host.name).inc()
            log.warning("edit_answers_capped", host=self.host.name, repo=key.repo, mr=key.iid,
                        message_id=message_id, max_edit_answers=self.policy.max_edit_answers)

    async def read(self, key: MRKey, baseline: datetime,
                   concessions: frozenset[str] = frozenset(),
                   listed: MergeRequest | None = None) -> tuple[int, int]:
        """Fetch one MR (`listed`: as its listing row shows it, for an MR never read),
        persist what changed; returns (events, new jobs)."""
        fresh = await commits.read(self.host, key.repo, key.iid, concessions, listed)
        big = (sum(len(t.messages) for t in fresh.threads) > OFF_LOOP_MESSAGES
               or sum(len(m.body) for t in fresh.threads for m in t.messages) > OFF_LOOP_CHARS)
        last = self.ingested.get(key)
        if last is not None:  # stored: diffed against a read of the MR itself, as before
            fresh = await commits.with_refs(self.host, fresh)
        if last is not None and commits.needed(last, fresh):
            fresh = await commits.completed(self.host, fresh)
        if big and not concessions and await self._unchanged(key, last, fresh):
            return 0, 0
        self.ingested.pop(key, None)
        review_on = self.review_on.get(key.repo, ())
        read = Read(baseline, concessions, self.identity(), self.policy, review_on,
                    self.clock())
        events, created, fresh = await self._load_decide_store(key, fresh, read, big)
        if big:
            self.ingested[key] = fresh
            while len(self.ingested) > INGESTED_KEPT:
                self.ingested.popitem(last=False)
        for job_id, job_key in created:
            log.info("reply_job_created", job_id=job_id, job_key=job_key, host=self.host.name,
                     repo=key.repo, mr=key.iid)
        if created:
            self.on_new_jobs()
        return len(events), len(created)

    async def _unchanged(self, key: MRKey, last: Snapshot | None, fresh: Snapshot) -> bool:
        """A long MR re-fetched unchanged (a hot one, every few seconds): compared with what
        was stored last time instead of loaded and diffed again; if so, only touched."""
        if last is None:
            return False
        # One stored from its listing row (no diff refs) is compared with its refs as read.
        known = last if last.mr.refs_read else replace(last, mr=replace(
            last.mr, base_sha=fresh.mr.base_sha, start_sha=fresh.mr.start_sha))
        if not await asyncio.to_thread(operator.eq, known, fresh):
            return False
        await self.store().run(snapshots.touch, key, self.clock(),
                               None if known is last else fresh.mr)
        self.ingested[key] = fresh
        return True

    async def _load_decide_store(self, key: MRKey, fresh: Snapshot, read: Read, big: bool
                                 ) -> tuple[list[Event], list[tuple[int, str]], Snapshot]:
        """What is stored of the MR, then `fresh` decided against it and stored — in one
        transaction for one never stored (sync/first_reads.py); (events, new jobs, the
        snapshot as stored)."""
        # A long MR is decided off the store's thread, which the other MRs' writes share.
        found = await self.store().run(snapshots.load, key) if big else \
            await self.first_reads.load_or_store(fresh, read)
        if isinstance(found, NeedsCommits):  # a first read that makes a job: read whole
            fresh = await commits.completed(self.host, fresh)
            found = await self.store().run(load_or_store_with_commits, fresh, read)
        if isinstance(found, NeedsCommits):  # cannot be: `fresh` has its commits now
            raise CommitsNotRead(f"{key}: read with its commits, still without them")
        if isinstance(found, FirstRead):  # none was stored: decided and stored already
            self._capped(key, found.decided.capped)
            self._archived(key, found.archived)
            return found.decided.events, self._stored(key, found.ingested), fresh
        if isinstance(found, Snapshot):  # stored: its MR read again, as before
            fresh = await commits.with_refs(self.host, fresh)
        if commits.needed(found, fresh):
            fresh = await commits.completed(self.host, fresh)
        return await self._decide_and_store(key, fresh, found, read, big)

    async def _decide_and_store(self, key: MRKey, fresh: Snapshot, stored: Snapshot | None,
                                read: Read, big: bool
                                ) -> tuple[list[Event], list[tuple[int, str]], Snapshot]:
        """Diff `fresh` against what is stored, store what changed; (events, new jobs, the
        snapshot as stored: with its commits when a job needed them)."""
        # Only a new comment can reply on a review: no query when the count is unchanged.
        awaiting = await self.store().run(reviews.awaiting, key) if stored is not None and _count(
            stored) != _count(fresh) else None
        args = (stored, fresh, read.baseline, read.concessions, read.identity, self.policy,
                read.review_on, awaiting)
        # A long one is decided in a thread: the event loop stays free for the other MRs.
        decided = await asyncio.to_thread(decide, *args) if big else decide(*args)
        if not commits.whole(fresh) and (decided.requests or decided.reviews):
            # A job's answer shows the commits (pushes are decided with them already) and
            # places notes with the diff refs.
            fresh = await commits.completed(self.host, fresh)
        self._capped(key, decided.capped)
        now = self.clock()
        if decided.turned_down:
            self._archived(key, await self.store().run(lesson_rows.archive_from,
                                                     decided.turned_down, now))
        if unchanged(stored, fresh, decided.events):
            await self.store().run(snapshots.touch, key, now)
            return decided.events, [], fresh
        ingested = await self.store().run(
            store_read, fresh, decided.events, decided.requests, decided.reviews,
            read.identity, now, stored, self.policy.max_edit_answers)
        return decided.events, self._stored(key, ingested), fresh

    def _archived(self, key: MRKey, lessons: Sequence[Lesson]) -> None:
        for lesson in lessons:
            log.info("lesson_archived", lesson_id=lesson.id, reason="a human gave the "
                     "concession a thumbs down", repo=key.repo, mr=key.iid)

    def _stored(self, key: MRKey, ingested: Ingested) -> list[tuple[int, str]]:
        """Say what storing a read made (review runs, capped edits); its new reply jobs."""
        self._capped(key, tuple(r.message_id for r in ingested.capped))
        for run_id, run_key in ingested.runs:
            log.info("review_run_created", review_run=run_id, run_key=run_key,
                     host=self.host.name, repo=key.repo, mr=key.iid)
        if ingested.runs:
            self.on_new_reviews()
        return ingested.jobs
