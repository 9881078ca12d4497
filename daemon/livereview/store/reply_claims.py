"""Who answers a comment: one claim per (host, repo, comment), shared by the daemon's reply
jobs and the tools' replies (`livereview mr reply`, the MCP tool), so that of the two racing
to answer one comment exactly one posts.

A claimant takes the claim in one transaction right before its POST, the way a replica
takes a lease (store/leases.py): a conditional UPDATE of the row (PostgreSQL re-checks the
WHERE clause on the row it waited for) or the INSERT of a new one (the unique key turns the
loser's INSERT into an IntegrityError, caught in a savepoint); on SQLite every transaction
is `BEGIN IMMEDIATE`, so the two simply queue. Once the reply is on the host the claim is
answered for good. A claim whose holder died before that expires after the lease's time and
may be taken over: the taker is told (`maybe_posted`) and looks on the host for a marked
reply to adopt before it posts.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import CursorResult, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from livereview.core.model import MRKey
from livereview.store.tables import ReplyClaim

DAEMON, TOOL = "daemon", "tool"


def claim_seconds(lease_seconds: float, step_timeout_seconds: float) -> float:
    """How long an unanswered claim holds: the POST it covers may take a whole step, and
    never less than a lease (as `Leases.fence` holds a job across its POST)."""
    return max(lease_seconds, step_timeout_seconds)


class Outcome(enum.StrEnum):
    MINE = "mine"  # post (after looking for a marked reply, if `maybe_posted`)
    ANSWERED = "answered"  # the other side's reply is on the host: post nothing
    BUSY = "busy"  # the other side is posting now: post nothing, look again later


@dataclass(frozen=True, slots=True)
class Claim:
    outcome: Outcome
    source: str  # who holds (or answered): DAEMON | TOOL
    holder: str
    reply_id: str  # the reply when ANSWERED ("" when unknown)
    expires_at: datetime  # MINE: post before this; BUSY: the holder's claim lapses then
    maybe_posted: bool = False  # MINE, taken from an unanswered claim: a reply may exist

    def seconds_left(self, now: datetime) -> float:
        return max(0.0, (self.expires_at - now).total_seconds())


def _row(session: Session, key: MRKey, comment_id: str) -> ReplyClaim | None:
    return session.exec(select(ReplyClaim).where(
        ReplyClaim.host == key.host, ReplyClaim.repo == key.repo,
        ReplyClaim.comment_id == comment_id).execution_options(populate_existing=True)
    ).first()


def _seen(row: ReplyClaim) -> Claim:
    """The claim as another claimant finds it."""
    if row.answered_at is not None:
        return Claim(Outcome.ANSWERED, row.source, row.holder, row.reply_id or "",
                     row.expires_at)
    return Claim(Outcome.BUSY, row.source, row.holder, "", row.expires_at)


def peek(session: Session, key: MRKey, comment_id: str, holder: str, now: datetime
         ) -> Claim | None:
    """How another claimant holds the comment now (None: free, expired or `holder`'s own):
    a cheap look before work that a taken claim would waste (the model's answer)."""
    row = _row(session, key, comment_id)
    if row is None:
        return None
    if row.answered_at is None and (row.holder == holder or row.expires_at <= now):
        return None
    return _seen(row)


def claim(session: Session, key: MRKey, comment_id: str, source: str, holder: str,
          now: datetime, seconds: float) -> Claim:
    """Take the claim to answer `comment_id` until now + seconds, or say who has it."""
    until = now + timedelta(seconds=seconds)
    row = _row(session, key, comment_id)
    if row is None:
        try:
            with session.begin_nested():  # a savepoint: losing the race keeps the transaction
                session.add(ReplyClaim(host=key.host, repo=key.repo, iid=key.iid,
                                       comment_id=comment_id, source=source, holder=holder,
                                       expires_at=until))
        except IntegrityError:
            row = _row(session, key, comment_id)  # the winner's, committed meanwhile
            if row is None:
                raise
        else:
            return Claim(Outcome.MINE, source, holder, "", until)
    taken: CursorResult[tuple[()]] = session.execute(  # type: ignore[assignment]
        update(ReplyClaim).where(
            col(ReplyClaim.id) == row.id, col(ReplyClaim.answered_at).is_(None),
            (col(ReplyClaim.holder) == holder) | (col(ReplyClaim.expires_at) <= now))
        .values(source=source, holder=holder, expires_at=until))
    if taken.rowcount == 1:
        return Claim(Outcome.MINE, source, holder, "", until, maybe_posted=True)
    current = _row(session, key, comment_id)
    assert current is not None  # claims are never deleted
    return _seen(current)


def answer(session: Session, key: MRKey, comment_id: str, source: str, holder: str,
           reply_id: str, now: datetime) -> None:
    """The reply is on the host: the comment is answered for good. Whoever's claim it was:
    a reply found by its marker (adopted) answers the comment all the same."""
    row = _row(session, key, comment_id)
    if row is None:  # answered without a claim: a job an older version had begun posting
        try:
            with session.begin_nested():
                session.add(ReplyClaim(host=key.host, repo=key.repo, iid=key.iid,
                                       comment_id=comment_id, source=source, holder=holder,
                                       expires_at=now, reply_id=reply_id, answered_at=now))
            return
        except IntegrityError:
            row = _row(session, key, comment_id)
            if row is None:
                raise
    if row.answered_at is not None:
        return  # the first answer stands
    row.source, row.holder, row.reply_id, row.answered_at = source, holder, reply_id, now
    session.add(row)
