"""The acknowledgement of a question (docs/DESIGN.md §4, "Ack"): a reaction where one can
be placed, else a short reply posted at most once. A courtesy: when it fails, the answer
still goes out.

A host that refuses the reaction itself (not one it offers) is remembered here, in memory,
and said once: its later questions are acked by a reply without asking again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

import structlog
from structlog.typing import FilteringBoundLogger

from livereview.core.model import ReplyJob
from livereview.core.sanitize import outgoing
from livereview.core.triggers import ack_marker, acked_for
from livereview.hosts.base import Forbidden, Host, HostError, NotFound, ReactionRefused, Unsupported
from livereview.hosts.lanes import urgent
from livereview.hosts.reactions import ack_reaction
from livereview.jobs import failure
from livereview.metrics import Metrics
from livereview.settings import BotSettings
from livereview.store import jobs
from livereview.store.db import Store

log = structlog.get_logger("livereview.worker")
T = TypeVar("T")
# (job, host, which marker) → the id of the bot's message carrying it, if any (worker.py).
OwnMessage = Callable[[ReplyJob, Host, Callable[[str], str | None]], Awaitable[str | None]]


@dataclass
class Acknowledger:
    store: Store
    bot: BotSettings
    metrics: Metrics
    step_timeout_seconds: float
    own_message: OwnMessage
    clock: Callable[[], datetime]
    # Hosts that refused the ack reaction: acked by a reply until the daemon restarts.
    refused: set[str] = field(default_factory=set)

    async def _step(self, call: Awaitable[T], what: str = "a request to the host") -> T:
        async with failure.step_limit(self.step_timeout_seconds, what):
            return await call

    async def ack(self, job: ReplyJob, host: Host, bound: FilteringBoundLogger) -> None:
        """👀 on the comment, or — where no reaction can be placed — a short reply. Either is
        a courtesy: when it fails, the answer still goes out."""
        how = "reaction"
        try:
            if await self._react(job, host, bound) is False:
                how = "comment"
                await self._ack_comment(job, host, bound)
            outcome = "ok"
        except Forbidden:
            outcome = "forbidden"  # may not react or comment here: skip the ack
        except NotFound:
            outcome = "not_found"
        except (HostError, TimeoutError) as exc:
            outcome = "error"
            bound.warning("ack_failed", reason=str(exc) or type(exc).__name__)
        self.metrics.acks.labels(host.type, outcome).inc()
        if outcome == "ok":
            seconds = (self.clock() - job.comment_created_at).total_seconds()
            self.metrics.time_to_ack.labels(host.type).observe(max(0.0, seconds))
            bound.info("acked", how=how, seconds=round(seconds, 2))
        else:
            bound.info("ack_skipped", outcome=outcome)

    async def _react(self, job: ReplyJob, host: Host, bound: FilteringBoundLogger) -> bool:
        """Place the ack reaction; False where it cannot be and the ack must be a comment:
        the host has no reactions, does not offer this one (remembered per host, said
        once), or may not react to this comment (403, or none for its kind)."""
        emoji = ack_reaction(host.type, self.bot.ack_reaction)
        if not host.capabilities.reactions or host.name in self.refused:
            return False
        try:
            with urgent():  # the asker is waiting: before any listing (hosts/lanes.py)
                await self._step(host.react(job.mr, job.message_id, emoji))
        except ReactionRefused as exc:
            self._refuse(host, emoji, str(exc))
            return False
        except (Forbidden, Unsupported) as exc:
            bound.info("ack_reaction_not_placed", reason=str(exc), fallback="comment")
            return False
        return True

    def _refuse(self, host: Host, emoji: str, reason: str) -> None:
        """Remember that this host refuses the ack reaction: acks there are comments from
        now on, and the operator reads why once, not once per question."""
        self.refused.add(host.name)
        log.warning("ack_reaction_refused", host=host.name, reaction=emoji, reason=reason,
                    fallback="ack_comment")

    async def _ack_comment(self, job: ReplyJob, host: Host, bound: FilteringBoundLogger
                           ) -> None:
        """The acknowledgement as a reply in the thread, posted at most once: bracketed by
        `ack_started_at` like the answer's POST, and adopted after a lost response. It
        stays when the answer comes (its own reply, which notifies the asker)."""
        if job.ack_started:
            adopted = await self.own_message(job, host, acked_for)
            if adopted is not None:
                bound.info("ack_adopted", posted_message_id=adopted)
                return
        await self.store.run(jobs.start_ack, job.id, self.clock())
        body = f"{outgoing(self.bot.ack_comment)}\n\n{ack_marker(job.target)}"
        await self._step(host.reply(job.mr, job.thread_id, body))
