"""Storing what one MR's read found (docs/DESIGN.md §5, §6): run on the store's thread.

`store`: the snapshot, its reply jobs and its review runs in one transaction, so a crash
loses no trigger (the events are derived once, from the stored snapshot).

`load_or_store`: an MR read for the first time (nothing stored for it) is decided and
stored in the same transaction that found nothing stored: at first sight of hundreds of
MRs, a transaction and a hop to the store's thread less per MR read (bench figure 16). One
that is stored is handed back to the poller, which decides and stores as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from livereview.core.model import Event, Identity, Lesson, Policy, ReplyRequest, Snapshot
from livereview.core.model_runs import ReviewRequest
from livereview.store import jobs, reviews, sightings, snapshots
from livereview.store import lessons as lesson_rows
from livereview.sync.decide import Decision, decide


@dataclass(frozen=True)
class Ingested:
    jobs: list[tuple[int, str]]
    runs: list[tuple[int, str]]
    capped: list[ReplyRequest]  # answers to edits over max_edit_answers, not made


@dataclass(frozen=True)
class FirstRead:
    """An MR stored for the first time: what was decided, the lessons its 👎 archived, and
    what was stored."""

    decided: Decision
    archived: list[Lesson]
    ingested: Ingested


def store(session: Session, fresh: Snapshot, events: list[Event],
          requests: list[ReplyRequest], wanted: list[ReviewRequest], identity: Identity,
          now: datetime, stored: Snapshot | None, max_edit_answers: int, *,
          unstored: bool = False) -> Ingested:
    """The snapshot, its reply jobs and its review runs in one transaction (`unstored`:
    this transaction found nothing stored for the MR)."""
    requests, capped = jobs.within_edit_cap(session, requests, max_edit_answers)
    created = snapshots.ingest(session, fresh, events, requests, identity, now, stored,
                               unstored=unstored)
    if stored is None:  # read at last: the snapshot speaks for it from now on
        sightings.forget(session, fresh.mr.key)
    return Ingested(created, reviews.enqueue(session, wanted, now), capped)


@dataclass(frozen=True)
class Read:
    """What deciding one MR's read needs besides the snapshots."""

    baseline: datetime
    concessions: frozenset[str]
    identity: Identity
    policy: Policy
    review_on: tuple[str, ...]
    now: datetime


@dataclass(frozen=True)
class NeedsCommits:
    """A first read read without its commits (or, from a listing row, without its diff
    refs) asks something of the bot (a reply, a review): nothing stored; it is read again
    whole — the job's answer shows the commits and places notes with the diff refs
    (docs/DESIGN.md §6 "First sight")."""


def load_or_store(session: Session, fresh: Snapshot, read: Read
                  ) -> Snapshot | FirstRead | NeedsCommits:
    """The stored snapshot of `fresh`'s MR; or, when none is stored, `fresh` decided (as
    the poller decides a first read: nothing stored, no review awaiting a reply) and stored
    with its jobs and runs, and its turned-down concessions' lessons archived — unless it
    makes a job and its commits or diff refs were not read (NeedsCommits)."""
    stored = snapshots.load(session, fresh.mr.key)
    if stored is not None:
        return stored
    decided = decide(None, fresh, read.baseline, read.concessions, read.identity,
                     read.policy, read.review_on)
    if not (fresh.commits is not None and fresh.mr.refs_read) and (
            decided.requests or decided.reviews):
        return NeedsCommits()
    archived = lesson_rows.archive_from(session, decided.turned_down, read.now) \
        if decided.turned_down else []
    ingested = store(session, fresh, decided.events, decided.requests, decided.reviews,
                     read.identity, read.now, None, read.policy.max_edit_answers,
                     unstored=True)
    return FirstRead(decided, archived, ingested)


def load_or_store_with_commits(session: Session, fresh: Snapshot, read: Read
                               ) -> Snapshot | FirstRead | NeedsCommits:
    """`load_or_store` again, for a first read that now has the commits it needed: its own
    transaction kind in the store's failure log (store/db.py says a failure is over when a
    transaction of the kind that failed works again — the first call, which only found the
    commits missing, writes nothing and works on a full disk)."""
    return load_or_store(session, fresh, read)


Found = Snapshot | FirstRead | NeedsCommits


def load_or_store_each(session: Session, reads: list[tuple[Snapshot, Read]]) -> list[Found]:
    """`load_or_store` for each of `reads`, in one transaction (sync/first_reads.py)."""
    return [load_or_store(session, fresh, read) for fresh, read in reads]
