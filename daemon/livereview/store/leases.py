"""Leases: how replicas sharing one PostgreSQL database split the work (docs/DESIGN.md §12).

A lease row says who does a piece of work until when. A replica takes a free or expired one
with one conditional UPDATE (PostgreSQL re-checks the WHERE clause on the row it waited for,
so of two replicas racing for it exactly one sees a row updated), or INSERTs a new one (the
primary key turns the loser's INSERT into an IntegrityError). Every replica renews what it
holds every `lease_seconds / 3`; one that dies stops renewing, and after `lease_seconds`
another takes its polls and jobs over. No replica knows another's address: each counts the
live `replica:` rows to know its fair share of the poll shards.

SQLite is one process by construction (one writer, a file on one machine): there the
process holds every lease without writing a row.

Clocks: expiry is compared with each replica's own clock, so replicas must keep time within
a small part of `lease_seconds` (NTP does).
"""

from __future__ import annotations

import math
import os
import secrets
import socket
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import CursorResult, delete, func, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from livereview.core.model import MRKey, ReplyJob
from livereview.core.model_runs import ReviewRun, StoredFinding
from livereview.store import jobs, reviews
from livereview.store.db import Store
from livereview.store.engine import StoreError
from livereview.store.reads import INSTANCE as INSTANCE
from livereview.store.reads import one_shard
from livereview.store.tables import Lease

MAX_SHARDS = 16


class LeaseLost(StoreError):
    """Another replica holds this work now (this one stalled past its lease)."""


# -- one transaction each ---------------------------------------------------------------------
def claim(session: Session, name: str, holder: str, now: datetime, seconds: float) -> bool:
    """Take or extend the lease `name` until now + seconds; False if another holds it."""
    until = now + timedelta(seconds=seconds)
    taken: CursorResult[tuple[()]] = session.execute(  # type: ignore[assignment]
        update(Lease).where(col(Lease.name) == name,
                            (col(Lease.holder) == holder) | (col(Lease.expires_at) <= now))
        .values(holder=holder, expires_at=until))
    if taken.rowcount == 1:
        return True
    if session.get(Lease, name) is not None:
        return False
    try:
        with session.begin_nested():  # a savepoint: losing the race keeps the transaction
            session.add(Lease(name=name, holder=holder, expires_at=until))
    except IntegrityError:
        return False
    return True


def claim_all(session: Session, names: Iterable[str], holder: str, now: datetime,
              seconds: float) -> set[str]:
    """The leases of `names` this holder has now (in name order: no lock-order deadlock)."""
    return {n for n in sorted(set(names)) if claim(session, n, holder, now, seconds)}


def renew(session: Session, holder: str, now: datetime, seconds: float) -> set[str]:
    """Push every lease this holder still has to at least now + seconds (a longer one, taken
    for a reply's POST, is kept); returns their names. A lease another replica took after
    this one's expired is not this holder's any more."""
    until = now + timedelta(seconds=seconds)
    session.execute(update(Lease).where(col(Lease.holder) == holder,
                                        col(Lease.expires_at) < until)
                    .values(expires_at=until))
    return set(session.exec(select(Lease.name).where(Lease.holder == holder)))


def release(session: Session, holder: str, names: Iterable[str] | None = None) -> None:
    """Give leases back (all of this holder's when `names` is None): no one waits for them
    to expire."""
    query = delete(Lease).where(col(Lease.holder) == holder)
    if names is not None:
        query = query.where(col(Lease.name).in_(list(names)))
    session.execute(query)


def live_replicas(session: Session, now: datetime) -> int:
    count = session.exec(select(func.count()).select_from(Lease).where(
        col(Lease.name).startswith("replica:"), col(Lease.expires_at) > now)).one()
    return max(1, int(count))


def held_elsewhere(session: Session, holder: str, now: datetime, prefix: str) -> set[str]:
    """Names under `prefix` another replica holds now."""
    return set(session.exec(select(Lease.name).where(
        col(Lease.name).startswith(prefix), col(Lease.holder) != holder,
        col(Lease.expires_at) > now)))


def claim_due_jobs(session: Session, holder: str, now: datetime, limit: int,
                   exclude: Sequence[int], seconds: float, only: MRKey | None = None
                   ) -> list[ReplyJob]:
    """Due jobs no other replica works on (of the MR `only`, when given), claimed. Each is
    read again after its claim: a job another replica finished and let go of between the
    two is not run again."""
    elsewhere = [int(n.removeprefix("job:")) for n in held_elsewhere(session, holder, now,
                                                                    "job:")]
    due = jobs.due(session, now, limit, [*exclude, *elsewhere], only)
    names = claim_all(session, [f"job:{job.id}" for job in due], holder, now, seconds)
    fresh = [jobs.get(session, job.id) for job in due if f"job:{job.id}" in names]
    return [job for job in fresh if job.state.open]


def claim_due_reviews(session: Session, holder: str, now: datetime, limit: int,
                      exclude: Sequence[int], seconds: float, only: MRKey | None = None
                      ) -> list[ReviewRun]:
    """Due review runs no other replica works on (of the MR `only`, when given), claimed
    and read again (as for jobs)."""
    elsewhere = [int(n.removeprefix("review:"))
                 for n in held_elsewhere(session, holder, now, "review:")]
    due = reviews.due(session, now, limit, [*exclude, *elsewhere], only)
    names = claim_all(session, [f"review:{run.id}" for run in due], holder, now, seconds)
    fresh = [reviews.get(session, run.id) for run in due if f"review:{run.id}" in names]
    return [run for run in fresh if run.state.open]


# -- the poll shards ---------------------------------------------------------------------------
def shard_of(repo: str, shards: int) -> int:
    """A repo's shard: stable across processes and restarts (not Python's salted hash)."""
    return zlib.crc32(repo.encode()) % shards


def shards(repos: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """A host's repos split into shards, by watermark scope. One shard: scope "*"."""
    count = max(1, min(len(repos), MAX_SHARDS))
    if count == 1:
        return {INSTANCE: tuple(repos)}
    groups: dict[str, list[str]] = {}
    for repo in repos:
        groups.setdefault(f"{INSTANCE}{shard_of(repo, count)}/{count}", []).append(repo)
    return {scope: tuple(sorted(group)) for scope, group in sorted(groups.items())}


def poll_scopes(store: Store, repos: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The shards a host's polls are split into, by watermark scope: what the replicas claim
    and what `health` judges. SQLite is one process: one scope "*" whatever the repos."""
    if store.engine.dialect.name == "sqlite":
        return one_shard(repos)
    return shards(repos)


def _claim_shards(session: Session, host: str, scopes: Sequence[str], holder: str,
                  now: datetime, seconds: float) -> list[str]:
    """This replica's fair share of the host's shards: the ones it holds, then free ones, up
    to ceil(shards / live replicas); the ones over that share are given back."""
    share = math.ceil(len(scopes) / live_replicas(session, now))
    names = {f"poll:{host}:{scope}": scope for scope in scopes}
    taken = held_elsewhere(session, holder, now, f"poll:{host}:")
    mine = set(session.exec(select(Lease.name).where(
        col(Lease.name).in_(list(names)), Lease.holder == holder, Lease.expires_at > now)))
    keep = sorted(mine)[:share]
    release(session, holder, sorted(mine)[share:])
    for name in sorted(names):
        if len(keep) >= share:
            break
        if name not in mine and name not in taken and claim(session, name, holder, now,
                                                            seconds):
            keep.append(name)
    claim_all(session, keep, holder, now, seconds)
    return sorted(names[name] for name in keep)


# -- what the daemon holds ----------------------------------------------------------------------
def holder_name(replica: str) -> str:
    """Unique per process: a restarted replica is a new holder, so two processes configured
    with the same name never share a lease."""
    return f"{replica or socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@dataclass
class Leases:
    """The leases of one process. `exclusive` is False on SQLite: every claim succeeds
    without a write."""

    store: Store
    seconds: float = 30.0
    holder: str = field(default_factory=lambda: holder_name(""))

    @property
    def exclusive(self) -> bool:
        return self.store.engine.dialect.name != "sqlite"

    async def heartbeat(self, now: datetime) -> None:
        """I am alive: renew this replica's row and every lease it holds."""
        if self.exclusive:
            await self.store.run(_beat, self.holder, now, self.seconds)

    async def poll_shards(self, host: str, repos: Sequence[str], now: datetime
                          ) -> dict[str, tuple[str, ...]]:
        """The shards of `host` this replica polls now (scope → repos)."""
        split = poll_scopes(self.store, repos)
        if not self.exclusive:
            return split
        await self.heartbeat(now)  # counted among the live before taking a share
        scopes = await self.store.run(_claim_shards, host, list(split), self.holder, now,
                                      self.seconds)
        return {scope: split[scope] for scope in scopes}

    async def due_jobs(self, now: datetime, limit: int, exclude: Sequence[int],
                       only: MRKey | None = None) -> list[ReplyJob]:
        """Due reply jobs (of the MR `only`, when given) for this replica to run, each
        claimed (on SQLite: all due)."""
        if not self.exclusive:
            return await self.store.run(jobs.due, now, limit, exclude, only)
        return await self.store.run(claim_due_jobs, self.holder, now, limit, list(exclude),
                                    self.seconds, only)

    async def fence(self, job: ReplyJob, now: datetime, seconds: float = 0.0) -> None:
        """Before a step that talks to the host: this replica still holds the job, for at
        least max(`seconds`, the lease) more whatever the heartbeat does, and the job is
        where this replica left it. Raises `LeaseLost` if another replica took it over
        (or took it, ran it on and let go while this one stalled)."""
        if self.exclusive and not await self.store.run(
                _fence, job, self.holder, now, max(seconds, self.seconds)):
            raise LeaseLost(f"reply job {job.id} is another replica's now")

    async def due_reviews(self, now: datetime, limit: int, exclude: Sequence[int],
                          only: MRKey | None = None) -> list[ReviewRun]:
        """Due review runs (of the MR `only`, when given) for this replica, each claimed (on
        SQLite: all due)."""
        if not self.exclusive:
            return await self.store.run(reviews.due, now, limit, exclude, only)
        return await self.store.run(claim_due_reviews, self.holder, now, limit,
                                    list(exclude), self.seconds, only)

    async def fence_review(self, run: ReviewRun, now: datetime, seconds: float = 0.0,
                           finding: StoredFinding | None = None) -> None:
        """Before a review's write to the host: as `fence` for a reply job — this replica
        still holds the run (for at least `seconds` more), and the run and the finding
        about to be posted are as this replica last saw them."""
        if self.exclusive and not await self.store.run(
                _fence_review, run, finding, self.holder, now, max(seconds, self.seconds)):
            raise LeaseLost(f"review run {run.id} is another replica's now")

    async def release_review(self, run_id: int) -> None:
        if self.exclusive:
            await self.store.run(release, self.holder, [f"review:{run_id}"])

    async def release_job(self, job_id: int) -> None:
        if self.exclusive:
            await self.store.run(release, self.holder, [f"job:{job_id}"])

    async def release_all(self) -> None:
        """On a clean stop: the others take over at once, not after the expiry."""
        if self.exclusive:
            await self.store.run(release, self.holder)


def _beat(session: Session, holder: str, now: datetime, seconds: float) -> None:
    claim(session, f"replica:{holder}", holder, now, seconds)
    renew(session, holder, now, seconds)


def _fence(session: Session, job: ReplyJob, holder: str, now: datetime, seconds: float
           ) -> bool:
    if not claim(session, f"job:{job.id}", holder, now, seconds):
        return False
    current = jobs.get(session, job.id)
    return (current.state, current.post_started, current.ack_started) == (
        job.state, job.post_started, job.ack_started)


def _fence_review(session: Session, run: ReviewRun, finding: StoredFinding | None,
                  holder: str, now: datetime, seconds: float) -> bool:
    if not claim(session, f"review:{run.id}", holder, now, seconds):
        return False
    current = reviews.get(session, run.id)
    steps = ("state", "post_started", "posted", "summary_message_id", "notify_started",
             "notice_message_id", "notifiers_done")
    if any(getattr(current, step) != getattr(run, step) for step in steps):
        return False
    if finding is None:
        return True
    now_stored = next((f for f in reviews.findings(session, run.id) if f.id == finding.id),
                      None)
    return now_stored is not None and (now_stored.post_started, now_stored.message_id) == (
        finding.post_started, finding.message_id)
