"""The reply job state machine: pending → acked → answered → posted (docs/DESIGN.md §4).

Each transition is committed before the next I/O step (the ack and the writing of the
answer run side by side, and are recorded in that order once both have ended). The one
step that cannot be made atomic — the POST of the reply — is bracketed: `post_started_at`
is committed first, and a job that finds it set re-reads the thread and adopts a reply
carrying its hidden marker instead of posting a second one. It posts only under the
comment's claim, which an agent's tool reply takes too (jobs/claims.py): of the two, one
answers.

Whatever a step raises, the job ends its run in a recorded state — retried later with
backoff, or skipped or failed with the reason — and one log line says why. If even that
cannot be recorded (the store is down), the job rests in memory before it is tried again:
nothing loops hot.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, TypeVar

import structlog
from structlog.typing import FilteringBoundLogger

from livereview.core.answer import StructuredAnswer
from livereview.core.lessons import repo_scope
from livereview.core.model import (
    Identity,
    JobState,
    Lesson,
    Message,
    MRKey,
    Policy,
    ReplyJob,
    Snapshot,
    Thread,
)
from livereview.core.sanitize import quote
from livereview.core.triggers import asks_to_resolve, loop_guard, replied_to
from livereview.hosts.base import (
    Host,
    HostError,
    NotFound,
    RateLimited,
    statement,
)
from livereview.jobs import failure
from livereview.jobs.claims import AnsweredElsewhere, ClaimedElsewhere, JobClaims
from livereview.jobs.job_slots import Slots
from livereview.jobs.knowledge import Knowledge
from livereview.jobs.llm import Answerer
from livereview.log_setup import FailureLog
from livereview.metrics import Metrics
from livereview.reply import diff_refs, follow_line
from livereview.reply.ack import Acknowledger
from livereview.reply.code_reader import CodeReader
from livereview.reply.compose import Composer, JobSkipped
from livereview.reply.moved import Moved
from livereview.settings import AnswerSettings, BotSettings, DaemonSettings, LessonsSettings
from livereview.store import jobs, reply_claims, snapshots
from livereview.store.db import Store
from livereview.store.engine import StoreError
from livereview.store.leases import LeaseLost, Leases

log = structlog.get_logger("livereview.worker")
T = TypeVar("T")
AUTH_RETRY_SECONDS = 300.0  # a token or permission fixed by a person: look again slowly
MAX_RETRY_SECONDS = 3600.0
STORE_REST_SECONDS = 30.0  # a job whose outcome could not be recorded waits this long


class JobFailed(Exception):
    """The job cannot succeed, now or later; the message says why."""


@dataclass
class Worker:
    store: Store
    hosts: dict[str, Host]
    identities: dict[str, Identity]
    answerer: Answerer
    policy: Policy
    lessons: LessonsSettings
    daemon: DaemonSettings
    bot: BotSettings
    metrics: Metrics
    clock: Callable[[], datetime] = field(default=lambda: datetime.now().astimezone())
    knowledge: Knowledge = field(default_factory=Knowledge)
    answers: Callable[[str, str], AnswerSettings] = field(  # (host, repo) → [answers]
        default=lambda host, repo: AnswerSettings())
    leases: Leases | None = None  # replicas: run only the jobs this one claimed
    # A local command's worker runs only its review's jobs (local_respond.py).
    only: MRKey | None = None
    idle_wait_seconds: float = 1.0  # look for due retries this often when nothing wakes us
    _trouble: FailureLog = field(default_factory=lambda: FailureLog(log))
    composer: Composer = field(init=False)
    slots: Slots = field(init=False)
    claims: JobClaims = field(init=False)  # shared with the tools' replies: one answer
    acks: Acknowledger = field(init=False)

    def __post_init__(self) -> None:
        self.claims = JobClaims(self.store, reply_claims.claim_seconds(
            self.daemon.lease_seconds, self.daemon.step_timeout_seconds))
        self.composer = Composer(self.store, self.answerer, self.knowledge,
                                 self.daemon.step_timeout_seconds, self.bot.max_reply_chars,
                                 self.answers, CodeReader(self.daemon.step_timeout_seconds))
        self.acks = Acknowledger(self.store, self.bot, self.metrics,
                                 self.daemon.step_timeout_seconds, self._own_message, self.clock)
        self.slots = Slots("reply-job", "worker_error", self.daemon.max_concurrent_jobs,
                           self._trouble, failure.describe, self.idle_wait_seconds)

    # -- scheduling -------------------------------------------------------------------
    def kick(self) -> None:
        """New jobs are waiting: start what is due without waiting for the next tick."""
        self.slots.kick()

    async def run_due(self) -> int:
        """Start every due job not already running (bounded); returns how many started."""
        free = self.slots.free()
        if free <= 0:
            return 0
        if self.leases is None or not self.leases.exclusive:  # SQLite: one process
            due = await self.store.run(jobs.due, self.clock(), free, self.slots.busy(),
                                       self.only)
        else:
            due = await self.leases.due_jobs(self.clock(), free, self.slots.busy(), self.only)
        for job in due:
            self.slots.start(job.id, self._guarded(job))
        return len(due)

    async def serve(self, stop: asyncio.Event) -> None:
        """Run jobs as they come, until `stop` is set."""
        await self.slots.serve(stop, self.run_due)

    async def finish_in_flight(self, grace: float) -> bool:
        """Wait up to `grace` seconds for running jobs; True if all finished."""
        return await self.slots.finish_in_flight(grace)

    async def drain(self) -> None:
        """Run jobs until none is due now (for `livereview once`)."""
        await self.slots.drain(self.run_due)

    # -- one run of one job: always ends in a recorded state --------------------------
    async def _guarded(self, job: ReplyJob) -> None:
        bound: FilteringBoundLogger = log.bind(
            job_id=job.id, job_key=job.key, host=job.mr.host, repo=job.mr.repo, mr=job.mr.iid,
            thread_id=job.thread_id, message_id=job.message_id)
        host_type = "unknown"
        try:
            host = self.hosts.get(job.mr.host)
            if host is None:
                raise JobFailed(f"host {job.mr.host!r} is not in the configuration any more")
            host_type = host.type
            if job.mr.host not in self.identities:  # its first poll has not succeeded yet
                raise HostError(f"the bot's identity on {job.mr.host!r} is not known yet")
            async with failure.job_limit(self.daemon.job_timeout_seconds):
                await self._advance(job, host, bound)
        except LeaseLost as exc:  # another replica runs it now: leave it to that one
            bound.info("job_taken_over", reason=str(exc))
            self._rest(job)
        except StoreError:
            self._rest(job)
        except ClaimedElsewhere as exc:  # not an attempt: the other side is posting now
            bound.info("reply_claimed_elsewhere", reason=str(exc), recheck_at=exc.recheck_at)
            await self._record(job, self.store.run(jobs.defer, job.id, self.clock(),
                                                    exc.recheck_at))
        except AnsweredElsewhere as exc:
            bound.info("job_superseded", reason=str(exc), by=exc.claim.source)
            await self._record(job, self._end(job, JobState.SKIPPED, str(exc), host_type,
                                              "superseded"))
        except JobSkipped as exc:
            bound.info("job_skipped", reason=str(exc))
            await self._record(job, self._end(job, JobState.SKIPPED, str(exc), host_type))
        except JobFailed as exc:
            bound.error("job_failed", reason=str(exc), retry=False)
            await self._record(job, self._end(job, JobState.FAILED, str(exc), host_type))
        except Exception as exc:  # noqa: BLE001 - the state machine's edge: record, never loop
            await self._record(job, self._retry_later(job, exc, bound, host_type))
        if self.leases is not None:
            with contextlib.suppress(StoreError):  # said by the store; it expires anyway
                await self.leases.release_job(job.id)

    async def _fence(self, job: ReplyJob, seconds: float = 0.0) -> None:
        """Before each step that talks to a host: the job is still this replica's (raises
        `LeaseLost`, a StoreError: the job rests here while its new holder runs it), and
        stays so for at least `seconds` even if the heartbeats stop meanwhile."""
        if self.leases is not None:
            await self.leases.fence(job, self.clock(), seconds)

    def _rest(self, job: ReplyJob) -> None:
        """The store refused (and said so, once): the job waits before it is tried again."""
        self.slots.rest(job.id, STORE_REST_SECONDS)

    async def _record(self, job: ReplyJob, outcome: Awaitable[object]) -> None:
        """Record a run's outcome; if the store refuses, let the job rest in memory."""
        try:
            await outcome
        except StoreError:
            self._rest(job)
        except Exception as exc:  # noqa: BLE001 - e.g. the row vanished: say it, never loop
            self._rest(job)
            log.error("job_unrecordable", job_id=job.id, error=failure.describe(exc))

    async def _end(self, job: ReplyJob, state: Literal[JobState.SKIPPED, JobState.FAILED],
                   reason: str, host_type: str, outcome: str = "") -> None:
        current = await self.store.run(jobs.get, job.id)
        await self.store.run(jobs.finish, job.id, self.clock(), state,
                             attempts=current.attempts + 1, reason=reason)
        self.metrics.replies.labels(host_type, outcome or state.value).inc()

    async def _retry_later(self, job: ReplyJob, exc: Exception, bound: FilteringBoundLogger,
                           host_type: str) -> None:
        current = await self.store.run(jobs.get, job.id)
        attempts, cause, reason = current.attempts + 1, failure.cause(exc), failure.describe(exc)
        if attempts >= self.daemon.max_attempts:
            bound.error("job_failed", reason=reason, cause=cause, attempts=attempts,
                        retry=False)
            await self.store.run(jobs.finish, job.id, self.clock(), JobState.FAILED,
                                 attempts=attempts, reason=reason)
            self.metrics.replies.labels(host_type, "failed").inc()
            return
        delay = self.daemon.retry_base_seconds * 2**attempts * random.uniform(0.5, 1)
        if cause == "auth":  # a person must fix the token or the permission: ask slowly
            delay = max(delay, AUTH_RETRY_SECONDS)
        if isinstance(exc, RateLimited):
            delay = max(delay, exc.retry_after)
        delay = min(delay, MAX_RETRY_SECONDS)
        bound.warning("job_retry", reason=reason, cause=cause, attempts=attempts,
                      retry_in_seconds=round(delay, 1))
        await self.store.run(jobs.schedule_retry, job.id, self.clock(), attempts=attempts,
                             reason=reason, at=self.clock() + timedelta(seconds=delay))
        self.metrics.replies.labels(host_type, "retry").inc()
        self.metrics.job_retries.labels(host_type, cause).inc()

    async def _step(self, call: Awaitable[T], what: str = "a request to the host") -> T:
        async with failure.step_limit(self.daemon.step_timeout_seconds, what):
            return await call

    async def _advance(self, job: ReplyJob, host: Host, bound: FilteringBoundLogger) -> None:
        stored = await self.store.run(snapshots.load, job.mr)
        if stored is None:
            raise JobSkipped("the MR is not in the store")
        stored = await diff_refs.with_refs(host, stored, self._step)
        if stored.mr.state != "opened" and not self.bot.answer_closed_mrs:
            raise JobSkipped(f"the MR is {stored.mr.state}")
        identity = self.identities[job.mr.host]
        if job.state is JobState.PENDING:
            thread = stored.thread(job.thread_id)
            guard = thread and loop_guard(stored, thread, identity, self.policy, self.clock())
            if guard:
                raise JobSkipped(guard)
            await self._fence(job)
            job, written = await self._ack_while_writing(job, host, stored, identity, bound)
            job = await self._answered(job, written)
        elif job.state is JobState.ACKED:
            await self._fence(job)
            job = await self._answered(job, await self._write(job, host, stored, identity,
                                                              bound))
        if job.state is JobState.ANSWERED:
            # The POST cannot be taken back: no other replica may adopt-or-post until it
            # has surely ended (a replica killed here hands the job over only then).
            await self._fence(job, self.daemon.step_timeout_seconds)
            await self._post(job, host, stored, bound)

    async def _write(self, job: ReplyJob, host: Host, stored: Snapshot, identity: Identity,
                     bound: FilteringBoundLogger) -> tuple[str, str, str]:
        await self.claims.check(job, self.clock())  # no answer that will not be posted
        return await self.composer.compose(job, host, stored, identity, bound)

    async def _answered(self, job: ReplyJob, written: tuple[str, str, str]) -> ReplyJob:
        answer, meta, lessons_used = written
        return await self.store.run(jobs.mark_answered, job.id, self.clock(), answer=answer,
                                    meta=meta, lessons_used=lessons_used)

    async def _ack_while_writing(self, job: ReplyJob, host: Host, stored: Snapshot,
                                 identity: Identity, bound: FilteringBoundLogger
                                 ) -> tuple[ReplyJob, tuple[str, str, str]]:
        """The ack goes out while the answer is written (docs/DESIGN.md §4, "Ack"): the 👀
        is as early as before, and the answer no longer waits for its request. The ack is
        recorded once it has ended, before the answer is — also when writing the answer
        failed, so that the retry does not ack again."""
        acking = asyncio.create_task(self.acks.ack(job, host, bound),
                                     name=f"ack-{job.id}")
        try:
            written = await self._write(job, host, stored, identity, bound)
        except asyncio.CancelledError:  # the job's time is up, or the daemon stops
            acking.cancel()
            await asyncio.gather(acking, return_exceptions=True)
            raise
        except Exception:
            await acking
            await self.store.run(jobs.mark_acked, job.id, self.clock())
            raise
        await acking
        return await self.store.run(jobs.mark_acked, job.id, self.clock()), written

    async def _own_message(self, job: ReplyJob, host: Host,
                           marker_of: Callable[[str], str | None]) -> str | None:
        """The id of the bot's message on the host whose marker names this job's message
        (`replied_to` for answers, `acked_for` for acks), if any."""
        identity = self.identities[job.mr.host]
        try:
            thread = await self._step(host.fetch_thread(job.mr, job.thread_id))
        except NotFound:
            stored = await self._step(host.fetch_mr(job.mr.repo, job.mr.iid))
            threads: tuple[Thread, ...] = stored.threads
        else:
            threads = (thread,)
        if found := next((m for t in threads for m in t.messages
                          if identity.is_me(m.author) and marker_of(m.body) == job.target),
                         None):
            return found.id
        return None

    async def _post(self, job: ReplyJob, host: Host, stored: Snapshot,
                    bound: FilteringBoundLogger) -> None:
        assert job.answer is not None
        question = stored.messages().get(job.message_id)
        asked_by = question.author.username if question else ""
        meta = StructuredAnswer.from_meta("", json.loads(job.answer_meta or "{}"))
        moved = Moved.from_meta(json.loads(job.answer_meta or "{}"))
        claim = await self.claims.take(job, self.clock())

        def post(call: Awaitable[Message]) -> Awaitable[Message]:
            return self.claims.within(claim, self.clock(), call)

        # An answer to an edited question: the first answer's note already follows the line.
        followed = follow_line.followed_in(stored, job, self.identities[job.mr.host]) is not None
        if job.post_started or claim.maybe_posted:  # this job's, or a dead claimant's POST
            if moved is not None and not followed:  # the note that follows the line, once
                if await follow_line.adopt(host, job, self.identities[job.mr.host],
                                           self._step) is None:
                    await follow_line.follow(host, job, stored, moved, post, bound)
                followed = True
            adopted = await self._own_message(job, host, replied_to)
            if adopted is not None:
                bound.info("reply_adopted", posted_message_id=adopted)
                await self._posted(job, host, adopted, bound, asked_by, meta)
                return
        await self.store.run(jobs.start_post, job.id, self.clock())
        if moved is not None and not followed:
            await follow_line.follow(host, job, stored, moved, post, bound)
        try:
            message = await self.claims.within(claim, self.clock(),
                                               host.reply(job.mr, job.thread_id, job.answer))
        except NotFound:
            # The thread or its parent note was deleted: answer on the MR, quoting it, in a
            # note where the host has notes (a new thread would hold up a strict merge).
            quoted = quote(question.body) + "\n\n" if question else ""
            bound.info("parent_gone", fallback="general_comment")
            message = await self.claims.within(claim, self.clock(),
                                               statement(host, job.mr, quoted + job.answer))
        await self._posted(job, host, message.id, bound, asked_by, meta)
        await self._resolve_if_asked(job, host, stored, bound, meta)

    async def _resolve_if_asked(self, job: ReplyJob, host: Host, stored: Snapshot,
                                bound: FilteringBoundLogger, meta: StructuredAnswer) -> None:
        """`@livereview resolve`, or the model judging the point addressed when asked to
        resolve: mark the discussion resolved where the host allows it."""
        thread, question = stored.thread(job.thread_id), stored.messages().get(job.message_id)
        asked = question is not None and asks_to_resolve(question.body, self.policy.aliases)
        if not (asked or meta.resolve) or thread is None or not thread.resolvable \
                or thread.resolved or not host.capabilities.resolve:
            return
        try:
            await self._step(host.resolve(job.mr, job.thread_id))
        except (HostError, TimeoutError) as exc:
            bound.warning("resolve_failed", reason=str(exc) or type(exc).__name__)
            return
        bound.info("thread_resolved", asked=asked)

    async def _posted(self, job: ReplyJob, host: Host, message_id: str,
                      bound: FilteringBoundLogger, asked_by: str,
                      meta: StructuredAnswer) -> None:
        now = self.clock()
        candidate = None
        if meta.concede and meta.lesson:
            candidate = Lesson(
                key=meta.lesson[0], value=meta.lesson[1],
                scope=repo_scope(job.mr.host, job.mr.repo), created_by=asked_by,
                status="proposed" if self.lessons.require_approval else "active")
        lesson = await self.store.run(
            jobs.mark_posted, job.id, message_id, now, lesson=candidate,
            citations=[(c.ref, c.title, c.kind, c.relevance) for c in meta.citations])
        if lesson is not None:
            bound.info("lesson_learned", lesson_id=lesson.id, status=lesson.status,
                       scope=lesson.scope)
        seconds = (now - job.comment_created_at).total_seconds()
        self.metrics.time_to_reply.labels(host.type).observe(max(0.0, seconds))
        self.metrics.replies.labels(host.type, "posted").inc()
        bound.info("replied", posted_message_id=message_id, seconds=round(seconds, 2))
