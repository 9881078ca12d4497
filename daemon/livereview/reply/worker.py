"""The reply job state machine: pending → acked → answered → posted (DESIGN.md §4).

Each transition is committed before the next I/O step. The one step that cannot be made
atomic — the POST of the reply — is bracketed: `post_started_at` is committed first, and a
job that finds it set re-reads the thread and adopts a reply carrying its hidden marker
instead of posting a second one.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import structlog

from livereview.hosts.base import (
    AuthFailed,
    Forbidden,
    Host,
    HostError,
    NotFound,
    RateLimited,
    Transient,
)
from livereview.lessons import applicable, repo_scope
from livereview.metrics import Metrics
from livereview.model import Identity, JobState, Lesson, Policy, ReplyJob, Snapshot, Thread
from livereview.reply import context
from livereview.reply.answer import StructuredAnswer
from livereview.reply.answer import parse as parse_answer
from livereview.reply.answer import render as render_answer
from livereview.reply.knowledge import Knowledge
from livereview.reply.llm import Answerer, LLMError
from livereview.settings import BotSettings, DaemonSettings, LessonsSettings
from livereview.store import jobs, snapshots
from livereview.store import lessons as lesson_rows
from livereview.store.db import Store
from livereview.store.engine import StoreError
from livereview.triggers import asks_to_resolve, loop_guard, replied_to, reply_marker

log = structlog.get_logger("livereview.worker")


class JobSkipped(Exception):
    """The job must not be answered (MR gone or closed); the message says why."""


def _quote(text: str, limit: int = 400) -> str:
    short = text if len(text) <= limit else text[:limit] + "…"
    return "\n".join("> " + line for line in short.splitlines())


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
    idle_wait_seconds: float = 1.0  # look for due retries this often when nothing wakes us
    _running: dict[int, asyncio.Task[None]] = field(default_factory=dict)
    _wake: asyncio.Event = field(default_factory=asyncio.Event)

    # -- scheduling -------------------------------------------------------------------
    def kick(self) -> None:
        """New jobs are waiting: start what is due without waiting for the next tick."""
        self._wake.set()

    async def run_due(self) -> int:
        """Start every due job not already running (bounded); returns how many started."""
        free = self.daemon.max_concurrent_jobs - len(self._running)
        if free <= 0:
            return 0
        due = await self.store.run(jobs.due, self.clock(), free, list(self._running))
        for job in due:
            task = asyncio.create_task(self._guarded(job), name=f"reply-job-{job.id}")
            self._running[job.id] = task
            task.add_done_callback(partial(self._forget, job.id))
        return len(due)

    def _forget(self, job_id: int, _task: asyncio.Task[None]) -> None:
        self._running.pop(job_id, None)
        self._wake.set()  # a slot is free: start the next due job now, not at the next tick

    async def serve(self, stop: asyncio.Event) -> None:
        """Run jobs as they come, until `stop` is set; then let in-flight jobs finish."""
        while not stop.is_set():
            self._wake.clear()
            await self.run_due()
            waits = [asyncio.create_task(self._wake.wait()), asyncio.create_task(stop.wait())]
            await asyncio.wait(waits, timeout=self.idle_wait_seconds,
                               return_when=asyncio.FIRST_COMPLETED)
            for w in waits:
                w.cancel()

    async def finish_in_flight(self, grace: float) -> bool:
        """Wait up to `grace` seconds for running jobs; True if all finished."""
        if not self._running:
            return True
        _, pending = await asyncio.wait(list(self._running.values()), timeout=grace)
        for task in pending:
            task.cancel()
        return not pending

    async def drain(self) -> None:
        """Run jobs until none is due now (for `livereview once`)."""
        while True:
            started = await self.run_due()
            if not started and not self._running:
                return
            if self._running:
                await asyncio.wait(list(self._running.values()),
                                   return_when=asyncio.FIRST_COMPLETED)

    # -- one job ----------------------------------------------------------------------
    async def _guarded(self, job: ReplyJob) -> None:
        bound = log.bind(job_id=job.id, job_key=job.key, host=job.mr.host, repo=job.mr.repo,
                         mr=job.mr.iid, thread_id=job.thread_id, message_id=job.message_id)
        host_type = self.hosts[job.mr.host].type
        try:
            async with asyncio.timeout(self.daemon.job_timeout_seconds):
                await self._advance(job, bound)
        except JobSkipped as exc:
            bound.info("job_skipped", reason=str(exc))
            await self._set(job, state=JobState.SKIPPED, last_error=str(exc))
            self.metrics.replies.labels(host_type, "skipped").inc()
        except (AuthFailed, Forbidden) as exc:
            bound.error("job_failed", reason=str(exc), retry=False)
            await self._set(job, state=JobState.FAILED, last_error=str(exc))
            self.metrics.replies.labels(host_type, "failed").inc()
        except (Transient, LLMError, HostError, TimeoutError) as exc:
            await self._retry_later(job, exc, bound, host_type)
        except StoreError as exc:
            # Locked, read-only or full: nothing was marked done that was not done; the job
            # resumes from its last committed state when the store is writable again.
            bound.error("store_unavailable", error=str(exc))

    async def _retry_later(self, job: ReplyJob, exc: Exception, bound: Any,
                           host_type: str) -> None:
        try:
            await self._schedule_retry(job, exc, bound, host_type)
        except StoreError as store_exc:
            bound.error("store_unavailable", error=str(store_exc), while_handling=str(exc))

    async def _schedule_retry(self, job: ReplyJob, exc: Exception, bound: Any,
                              host_type: str) -> None:
        current = await self.store.run(jobs.get, job.id)
        attempts = current.attempts + 1
        reason = str(exc) or type(exc).__name__
        if attempts >= self.daemon.max_attempts:
            bound.error("job_failed", reason=reason, attempts=attempts, retry=False)
            await self._set(job, state=JobState.FAILED, attempts=attempts, last_error=reason)
            self.metrics.replies.labels(host_type, "failed").inc()
            return
        delay = min(900.0, self.daemon.retry_base_seconds * 2**attempts) * random.uniform(0.5, 1)
        if isinstance(exc, RateLimited):
            delay = max(delay, exc.retry_after)
        bound.warning("job_retry", reason=reason, attempts=attempts,
                      retry_in_seconds=round(delay, 1))
        await self._set(job, attempts=attempts, last_error=reason,
                        next_attempt_at=self.clock() + timedelta(seconds=delay))
        self.metrics.replies.labels(host_type, "retry").inc()

    async def _set(self, job: ReplyJob, **changes: Any) -> ReplyJob:
        return await self.store.run(jobs.update, job.id, self.clock(), **changes)

    async def _step(self, coro: Any) -> Any:
        async with asyncio.timeout(self.daemon.step_timeout_seconds):
            return await coro

    async def _advance(self, job: ReplyJob, bound: Any) -> None:
        host = self.hosts[job.mr.host]
        stored = await self.store.run(snapshots.load, job.mr)
        if stored is None:
            raise JobSkipped("the MR is not in the store")
        if stored.mr.state != "opened" and not self.bot.answer_closed_mrs:
            raise JobSkipped(f"the MR is {stored.mr.state}")
        if job.state is JobState.PENDING:
            thread = stored.thread(job.thread_id)
            guard = thread and loop_guard(stored, thread, self.identities[job.mr.host],
                                          self.policy, self.clock())
            if guard:
                raise JobSkipped(guard)
            await self._ack(job, host, bound)
            job = await self._set(job, state=JobState.ACKED, acked_at=self.clock())
        if job.state is JobState.ACKED:
            answer, meta, lessons_used = await self._compose(job, host, stored, bound)
            job = await self._set(job, state=JobState.ANSWERED, answer=answer,
                                  answer_meta=meta, lessons_used=lessons_used)
        if job.state is JobState.ANSWERED:
            await self._post(job, host, stored, bound)

    async def _ack(self, job: ReplyJob, host: Host, bound: Any) -> None:
        if not host.capabilities.reactions:
            return
        outcome = "ok"
        try:
            await self._step(host.react(job.mr, job.message_id, self.bot.ack_reaction))
        except Forbidden:
            outcome = "forbidden"  # may not react here: skip the ack, still answer
        except NotFound:
            outcome = "not_found"
        except (HostError, TimeoutError) as exc:
            outcome = "error"  # the ack is a courtesy; the answer matters more
            bound.warning("ack_failed", reason=str(exc) or type(exc).__name__)
        self.metrics.acks.labels(host.type, outcome).inc()
        if outcome == "ok":
            seconds = (self.clock() - job.comment_created_at).total_seconds()
            self.metrics.time_to_ack.labels(host.type).observe(max(0.0, seconds))
            bound.info("acked", emoji=self.bot.ack_reaction, seconds=round(seconds, 2))
        else:
            bound.info("ack_skipped", outcome=outcome)

    async def _compose(self, job: ReplyJob, host: Host, stored: Snapshot, bound: Any
                       ) -> tuple[str, str, str]:
        """The reply's body (with the hidden marker), its metadata (JSON) and the ids of
        the lessons its prompt contained."""
        thread = stored.thread(job.thread_id)
        if thread is None:
            raise JobSkipped("the thread is no longer in the MR")
        hunk = None
        if thread.anchor is not None:
            # A thread started before a push points at an older version of the diff: its
            # line numbers only make sense there.
            outdated = thread.anchor.head_sha not in ("", stored.mr.head_sha)
            try:
                diff = await self._step(host.diff(
                    job.mr, thread.anchor.head_sha if outdated else None))
                hunk = context.hunk_at(diff, thread.anchor)
            except NotFound:
                bound.info("diff_unavailable")
        stat = None
        if thread.anchor is None:  # a general comment: what the MR changes, in short
            try:
                stat = context.diffstat(await self._step(host.diff(job.mr)))
            except NotFound:
                bound.info("diff_unavailable")
        references = await self.knowledge.read(job.mr, host, stored.mr.target_branch, bound)
        identity = self.identities[job.mr.host]
        active = await self.store.run(lesson_rows.everything, "active")
        used = applicable(active, job.mr.host, job.mr.repo)
        prompt = context.build(stored.mr, thread, job.message_id, identity, hunk=hunk,
                               stat=stat, commits=stored.commits, lessons=used,
                               references=references)
        answer = await self._step(self.answerer.answer(prompt))
        question = stored.messages().get(job.message_id)
        structured = parse_answer(answer.text, question.body if question else "")
        bound.info("answer_written", model=answer.model, chars=len(answer.text),
                   prompt_tokens=answer.prompt_tokens, truncated=list(prompt.truncated),
                   prompt_version=context.prompt_version(), mode=structured.mode,
                   structured=structured.structured, concede=structured.concede,
                   lessons_used=[lesson.id for lesson in used])
        text = render_answer(structured)
        if len(text) > self.bot.max_reply_chars:
            text = text[: self.bot.max_reply_chars].rstrip() + "\n\n*(answer shortened)*"
        return (f"{text}\n\n{reply_marker(job.message_id)}", json.dumps(structured.meta()),
                " ".join(str(lesson.id) for lesson in used))

    async def _adopt(self, job: ReplyJob, host: Host) -> str | None:
        """The id of a reply to this job's message already on the host, if any."""
        identity = self.identities[job.mr.host]
        try:
            thread = await self._step(host.fetch_thread(job.mr, job.thread_id))
        except NotFound:
            stored = await self._step(host.fetch_mr(job.mr.repo, job.mr.iid))
            threads: tuple[Thread, ...] = stored.threads
        else:
            threads = (thread,)
        if thread_match := next((m for t in threads for m in t.messages
                                 if identity.is_me(m.author)
                                 and replied_to(m.body) == job.message_id), None):
            return thread_match.id
        return None

    async def _post(self, job: ReplyJob, host: Host, stored: Snapshot, bound: Any) -> None:
        assert job.answer is not None
        question = stored.messages().get(job.message_id)
        asked_by = question.author.username if question else ""
        meta = StructuredAnswer.from_meta("", json.loads(job.answer_meta or "{}"))
        if job.post_started:
            adopted = await self._adopt(job, host)
            if adopted is not None:
                bound.info("reply_adopted", posted_message_id=adopted)
                await self._posted(job, host, adopted, bound, asked_by, meta)
                return
        await self._set(job, post_started_at=self.clock())
        try:
            message = await self._step(host.reply(job.mr, job.thread_id, job.answer))
        except NotFound:
            # The thread or its parent note was deleted: answer on the MR, quoting it.
            quoted = _quote(question.body) + "\n\n" if question else ""
            bound.info("parent_gone", fallback="general_comment")
            message = await self._step(host.comment(job.mr, quoted + job.answer))
        await self._posted(job, host, message.id, bound, asked_by, meta)
        await self._resolve_if_asked(job, host, stored, bound, meta)

    async def _resolve_if_asked(self, job: ReplyJob, host: Host, stored: Snapshot,
                                bound: Any, meta: StructuredAnswer) -> None:
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

    async def _posted(self, job: ReplyJob, host: Host, message_id: str, bound: Any,
                      asked_by: str, meta: StructuredAnswer) -> None:
        now = self.clock()
        candidate = None
        if meta.concede and meta.lesson:
            candidate = Lesson(
                key=meta.lesson[0], value=meta.lesson[1],
                scope=repo_scope(job.mr.host, job.mr.repo), created_by=asked_by,
                status="proposed" if self.lessons.require_approval else "active")
        lesson = await self.store.run(
            jobs.mark_posted, job.id, message_id, now, lesson=candidate,
            citations=[(c.ref, c.title) for c in meta.citations])
        if lesson is not None:
            bound.info("lesson_learned", lesson_id=lesson.id, status=lesson.status,
                       scope=lesson.scope)
        seconds = (now - job.comment_created_at).total_seconds()
        self.metrics.time_to_reply.labels(host.type).observe(max(0.0, seconds))
        self.metrics.replies.labels(host.type, "posted").inc()
        bound.info("replied", posted_message_id=message_id, seconds=round(seconds, 2))

