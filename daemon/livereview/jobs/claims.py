"""A reply job's side of the claim it shares with the tools' replies (store/reply_claims.py):
the daemon posts its answer only while it holds the comment's claim, so an agent's
`livereview mr reply` racing it never puts a second reply in the thread.

A job looks before it asks the model (an answer nobody will post costs tokens), and takes
the claim right before its POST. Another claimant's reply on the host ends the job as
superseded; another claimant posting right now makes the job look again shortly (or when
that claim lapses: its holder died, and the job takes it over, adopting a marked reply if
the dead holder's POST landed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from livereview.core.model import ReplyJob
from livereview.store import reply_claims
from livereview.store.db import Store
from livereview.store.reply_claims import Claim, Outcome

T = TypeVar("T")
RECHECK_SECONDS = 5.0  # a tool's POST takes a second or so: look again soon, not at expiry


class AnsweredElsewhere(Exception):
    """Another claimant's reply answers the comment: the job ends, posting nothing."""

    def __init__(self, claim: Claim) -> None:
        by = "a tool call" if claim.source == reply_claims.TOOL else "another reply job"
        super().__init__(f"answered elsewhere: {by} posted reply {claim.reply_id or '?'}")
        self.claim = claim


class ClaimedElsewhere(Exception):
    """Another claimant is posting its reply to the comment now: look again at `recheck_at`."""

    def __init__(self, claim: Claim, now: datetime) -> None:
        super().__init__(f"{claim.source} ({claim.holder}) is answering the comment")
        self.claim = claim
        self.recheck_at = min(claim.expires_at, now + timedelta(seconds=RECHECK_SECONDS))


def holder(job: ReplyJob) -> str:
    """A job's claim is the job's, whichever process or replica runs it."""
    return f"job:{job.id}"


def _refuse(claim: Claim, now: datetime) -> None:
    if claim.outcome is Outcome.ANSWERED:
        raise AnsweredElsewhere(claim)
    if claim.outcome is Outcome.BUSY:
        raise ClaimedElsewhere(claim, now)


@dataclass
class JobClaims:
    store: Store
    seconds: float  # reply_claims.claim_seconds of the daemon's settings

    async def check(self, job: ReplyJob, now: datetime) -> None:
        """Raise if another claimant answered the comment or is answering it now."""
        seen = await self.store.run(reply_claims.peek, job.mr, job.target, holder(job),
                                    now)
        if seen is not None:
            _refuse(seen, now)

    async def take(self, job: ReplyJob, now: datetime) -> Claim:
        """The claim to post the job's answer (raises as `check` when another has it)."""
        claim = await self.store.run(reply_claims.claim, job.mr, job.target,
                                     reply_claims.DAEMON, holder(job), now, self.seconds)
        _refuse(claim, now)
        return claim

    @staticmethod
    async def within(claim: Claim, now: datetime, call: Awaitable[T]) -> T:
        """A POST under the claim ends before the claim can lapse: no one takes it over
        while the POST may still land."""
        async with asyncio.timeout(claim.seconds_left(now)):
            return await call
