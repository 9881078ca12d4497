"""The review run state machine: pending → reviewing → posting → notifying → done.

Each transition is committed before the next I/O step, as for reply jobs (docs/DESIGN.md
§4): reading stores each batch's findings with its cursor; posting brackets every POST
and adopts what a lost response left on the host (review/posting.py); the author and the
notifiers are told before the run is marked done, so a failing notifier leaves it
retryable, and the retry posts nothing twice. Whatever a step raises, the run ends its
attempt in a recorded state: retried with backoff, or skipped / failed with the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import structlog
from structlog.typing import FilteringBoundLogger

from livereview.core.findings import Severity
from livereview.core.lessons import applicable
from livereview.core.model import Identity, MRKey, Snapshot, Verdict
from livereview.core.model_runs import ReviewRun, ReviewState, ReviewTrigger, StoredFinding
from livereview.core.sanitize import outgoing
from livereview.core.triggers import ack_marker, acked_for, is_draft
from livereview.core.verdict import VerdictPolicy, decide
from livereview.hosts.base import (
    Forbidden,
    Host,
    HostError,
    RateLimited,
    ReactionRefused,
    Unsupported,
    statement,
)
from livereview.hosts.reactions import ack_reaction
from livereview.jobs import failure
from livereview.jobs.job_slots import Slots
from livereview.jobs.knowledge import Knowledge
from livereview.jobs.llm import Answerer
from livereview.log_setup import FailureLog
from livereview.metrics import Metrics
from livereview.review import followup, render
from livereview.review.notify import Notifier, NotifyFailed
from livereview.review.posting import Poster, as_finding, notes
from livereview.review.reading import Reader, UnusableAnswer
from livereview.settings import BotSettings, DaemonSettings, ReviewSettings
from livereview.store import lessons as lesson_rows
from livereview.store import review_steps as steps
from livereview.store import reviews
from livereview.store.db import Store
from livereview.store.engine import StoreError
from livereview.store.leases import LeaseLost, Leases

log = structlog.get_logger("livereview.review")
MAX_RETRY_SECONDS = 3600.0
STORE_REST_SECONDS = 30.0


class RunSkipped(Exception):
    """The MR must not be reviewed (closed, a draft nobody asked about); says why."""


class RunFailed(Exception):
    """The run cannot succeed, now or later; says why."""


# The reply worker's causes — an answer that is not findings before any other model
# error — a notifier that did not confirm delivery, and a run that cannot succeed.
CAUSES: failure.Causes = ((UnusableAnswer, "unreadable"), *failure.CAUSES,
                          (NotifyFailed, "notifier"), (RunFailed, "config"))


def _cause(exc: BaseException) -> str:
    return failure.cause(exc, CAUSES)


def _describe(exc: BaseException) -> str:
    """One line, as for a failed reply: for an unexpected error, the file:line it came from."""
    return failure.describe(exc, CAUSES)


@dataclass
class ReviewRunner:
    store: Store
    hosts: dict[str, Host]
    identities: dict[str, Identity]
    answerer: Answerer
    settings: ReviewSettings
    bot: BotSettings
    daemon: DaemonSettings
    metrics: Metrics
    notifiers: Sequence[Notifier] = ()
    knowledge: Knowledge = field(default_factory=Knowledge)  # the repos' configured references
    clock: Callable[[], datetime] = field(default=lambda: datetime.now().astimezone())
    leases: Leases | None = None  # replicas: run only the reviews this one claimed
    # A local command's runner runs only its review's runs (local_respond.py).
    only: MRKey | None = None
    idle_wait_seconds: float = 1.0
    slots: Slots = field(init=False)

    def __post_init__(self) -> None:
        step = self.daemon.step_timeout_seconds
        self.slots = Slots("review", "review_runner_error", self.daemon.max_concurrent_jobs,
                           FailureLog(log), _describe, self.idle_wait_seconds)
        self.reader = Reader(self.store, self.answerer, self.settings, step, self.clock)
        self.poster = Poster(self.store, self.settings, self.notifiers, step, self.clock,
                             self.leases)
        self.policy = VerdictPolicy(
            changes_requested_on=frozenset(Severity(s) for s in
                                           self.settings.changes_requested_on),
            approve=self.settings.approve)

    # -- scheduling (the reply worker's, through Slots) ------------------------------
    def kick(self) -> None:
        self.slots.kick()

    async def run_due(self) -> int:
        free = self.slots.free()
        if free <= 0:
            return 0
        busy = self.slots.busy()
        due = (await self.store.run(reviews.due, self.clock(), free, busy, self.only)
               if self.leases is None else
               await self.leases.due_reviews(self.clock(), free, busy, self.only))
        for run in due:
            self.slots.start(run.id, self.attempt(run))
        return len(due)

    async def serve(self, stop: asyncio.Event) -> None:
        await self.slots.serve(stop, self.run_due)

    async def drain(self) -> None:
        await self.slots.drain(self.run_due)

    async def finish_in_flight(self, grace: float) -> bool:
        return await self.slots.finish_in_flight(grace)

    # -- one attempt of one run: always ends in a recorded state ----------------------------
    async def attempt(self, run: ReviewRun) -> None:
        bound: FilteringBoundLogger = log.bind(review_run=run.id, review=run.token,
                                               host=run.mr.host, repo=run.mr.repo, mr=run.mr.iid)
        host_type = "unknown"
        self.poster.forget(run.id)
        host = self.hosts.get(run.mr.host)
        try:
            if host is None:
                raise RunFailed(f"host {run.mr.host!r} is not in the configuration any more")
            host_type = host.type
            if run.mr.host not in self.identities:
                raise HostError(f"the bot's identity on {run.mr.host!r} is not known yet")
            await self._advance(run, host, bound)
        except LeaseLost as exc:  # another replica runs it now: leave it to that one
            bound.info("review_taken_over", reason=str(exc))
            self.slots.rest(run.id, STORE_REST_SECONDS)
        except StoreError:
            self.slots.rest(run.id, STORE_REST_SECONDS)
        except RunSkipped as exc:
            bound.info("review_skipped", reason=str(exc))
            await self._end(run, ReviewState.SKIPPED, str(exc), host_type, "skipped")
        except (RunFailed, Unsupported) as exc:
            bound.error("review_failed", reason=str(exc), retry=False)
            await self._give_up(run, host, exc, host_type, bound)
        except Exception as exc:  # noqa: BLE001 - the state machine's edge: record, never loop
            await self._retry_later(run, host, exc, bound, host_type)
        finally:
            self.poster.forget(run.id)
            if self.leases is not None:
                with contextlib.suppress(StoreError):  # it expires anyway
                    await self.leases.release_review(run.id)

    async def _end(self, run: ReviewRun, state: steps.Ended, reason: str, host_type: str,
                   outcome: str) -> bool:
        try:
            current = await self.store.run(reviews.get, run.id)
            await self.store.run(steps.finish, run.id, self.clock(), state,
                                 attempts=current.attempts + 1, reason=reason)
        except (StoreError, LookupError):
            self.slots.rest(run.id, STORE_REST_SECONDS)
            return False
        self.metrics.reviews.labels(host_type, outcome).inc()
        return True

    async def _give_up(self, run: ReviewRun, host: Host | None, exc: Exception,
                       host_type: str, bound: FilteringBoundLogger) -> None:
        """The run ends failed, visibly: a short note on the MR says that it gave up and
        why, posted before the state is (an attempt that crashed in between adopts it),
        and the failure is counted by cause. A new request is a new run."""
        if host is not None:
            await self._say_failed(run, host, exc, bound)
        if await self._end(run, ReviewState.FAILED, _describe(exc), host_type, "failed"):
            self.metrics.review_failures.labels(host_type, _cause(exc)).inc()

    async def _say_failed(self, run: ReviewRun, host: Host, exc: Exception,
                          bound: FilteringBoundLogger) -> None:
        try:
            current = await self.store.run(reviews.get, run.id)
            if current.state is ReviewState.NOTIFYING:  # the review itself is on the MR
                return
            detail = exc.why if isinstance(exc, UnusableAnswer) else ""
            body = render.failed_note(run.token, _cause(exc), detail, current.attempts + 1)
            async with asyncio.timeout(self.daemon.step_timeout_seconds):
                if await self.poster.posted(run, host, "failed") is None:
                    await statement(host, run.mr, body)
        except (HostError, TimeoutError, StoreError, LookupError) as exc2:
            # The state still says why (`livereview pending`), and the metric counts it.
            bound.warning("review_failed_note_skipped", reason=str(exc2) or type(exc2).__name__)

    async def _retry_later(self, run: ReviewRun, host: Host | None, exc: Exception,
                           bound: FilteringBoundLogger, host_type: str) -> None:
        try:
            current = await self.store.run(reviews.get, run.id)
        except (StoreError, LookupError):
            self.slots.rest(run.id, STORE_REST_SECONDS)
            return
        attempts, cause, reason = current.attempts + 1, _cause(exc), _describe(exc)
        if attempts >= self.settings.max_attempts:
            bound.error("review_failed", reason=reason, cause=cause, attempts=attempts,
                        retry=False)
            await self._give_up(run, host, exc, host_type, bound)
            return
        delay = self.daemon.retry_base_seconds * 2**attempts * random.uniform(0.5, 1)
        if isinstance(exc, RateLimited):
            delay = max(delay, exc.retry_after)
        delay = min(delay, MAX_RETRY_SECONDS)
        bound.warning("review_retry", reason=reason, cause=cause, attempts=attempts,
                      state=current.state.value, retry_in_seconds=round(delay, 1))
        try:
            await self.store.run(steps.schedule_retry, run.id, self.clock(),
                                 attempts=attempts, reason=reason,
                                 at=self.clock() + timedelta(seconds=delay))
        except (StoreError, LookupError):
            self.slots.rest(run.id, STORE_REST_SECONDS)
            return
        self.metrics.reviews.labels(host_type, "retry").inc()

    async def _advance(self, run: ReviewRun, host: Host, bound: FilteringBoundLogger) -> None:
        async with asyncio.timeout(self.daemon.step_timeout_seconds):
            snapshot = await host.fetch_mr(run.mr.repo, run.mr.iid)
        self.poster.remember(run.id, snapshot)  # what is on the host now, for adoption
        mr = snapshot.mr
        started = time.monotonic()
        if run.state is ReviewState.PENDING:
            run = await self._start(run, host, snapshot, bound)
        if run.state is ReviewState.REVIEWING:
            run = await self._read(run, host, snapshot, bound)
        if run.state is ReviewState.POSTING:
            run = await self.poster.post(run, host, mr, await self._summary(run), bound)
            self.metrics.review_seconds.labels(host.type).observe(time.monotonic() - started)
        if run.state is ReviewState.NOTIFYING:
            run = await self.poster.notify(run, host, mr, bound)
        if run.state is ReviewState.DONE:
            await self.store.run(steps.count_done, run.id, self.clock())
            self.metrics.reviews.labels(host.type, run.verdict).inc()
            bound.info("review_done", verdict=run.verdict, verdict_applied=run.verdict_applied,
                       review_id=run.review_id)

    async def _start(self, run: ReviewRun, host: Host, snapshot: Snapshot,
                     bound: FilteringBoundLogger) -> ReviewRun:
        mr = snapshot.mr
        if mr.state != "opened":
            raise RunSkipped(f"the MR is {mr.state}")
        if is_draft(mr.title) and not run.explicit:
            raise RunSkipped("the MR is a draft (ask with `@livereview review` to review it)")
        if run.trigger_message_id and not run.acked:
            await self._ack(run, host, snapshot, bound)
            run = await self.store.run(steps.mark_acked, run.id, self.clock())
        previous = await self.store.run(reviews.previous, run.mr, run.id)
        # A reply on a review asks for its follow-up even at the same head: the threads the
        # author resolved since are weighed again, and only files that changed are read.
        follow = previous is not None and (previous.head_sha != mr.head_sha
                                           or run.trigger is ReviewTrigger.REPLY)
        bound.info("review_started", head=mr.head_sha[:12], trigger=run.trigger.value,
                   follow_up_of=previous.head_sha[:12] if follow and previous else "")
        return await self.store.run(
            steps.start_review, run.id, self.clock(), head_sha=mr.head_sha,
            base_sha=mr.diff_refs().base_sha, start_sha=mr.diff_refs().start_sha,
            previous_run_id=previous.id if previous else None,
            previous_head_sha=previous.head_sha if follow and previous else "")

    async def _ack(self, run: ReviewRun, host: Host, snapshot: Snapshot,
                   bound: FilteringBoundLogger) -> None:
        """👀 on the asking comment, as for any mention (a short reply where the host has no
        reactions, posted at most once). A courtesy: its failure does not stop the review."""
        emoji = ack_reaction(host.type, self.bot.ack_reaction)
        try:
            async with asyncio.timeout(self.daemon.step_timeout_seconds):
                if host.capabilities.reactions:
                    try:
                        await host.react(run.mr, run.trigger_message_id, emoji)
                        return
                    except (ReactionRefused, Forbidden, Unsupported) as exc:
                        bound.info("ack_reaction_not_placed", reason=str(exc),
                                   fallback="comment")
                identity = self.identities[run.mr.host]
                if run.ack_started and any(
                        identity.is_me(m.author) and acked_for(m.body) == run.trigger_message_id
                        for t in snapshot.threads for m in t.messages):
                    return
                await self.store.run(steps.start_ack, run.id, self.clock())
                body = f"{outgoing(self.bot.ack_comment)}\n\n{ack_marker(run.trigger_message_id)}"
                await host.reply(run.mr, run.trigger_thread_id, body)
        except (HostError, TimeoutError) as exc:
            bound.info("ack_skipped", reason=str(exc) or type(exc).__name__)

    async def _read(self, run: ReviewRun, host: Host, snapshot: Snapshot,
                    bound: FilteringBoundLogger) -> ReviewRun:
        total = 0
        if self.reader.progress is not None:
            async with asyncio.timeout(self.daemon.step_timeout_seconds):
                total = len(await host.diffstat(run.mr))
        active = await self.store.run(lesson_rows.everything, "active")
        references = await self.knowledge.read(run.mr, host, snapshot.mr.target_branch, bound)
        run = await self.reader.read(run, host, snapshot.mr,
                                     applicable(active, run.mr.host, run.mr.repo), total, bound,
                                     references)
        return await self._decide(run, snapshot, bound)

    async def _decide(self, run: ReviewRun, snapshot: Snapshot, bound: FilteringBoundLogger
                      ) -> ReviewRun:
        found = await self.store.run(reviews.findings, run.id)
        earlier_rows = await self.store.run(reviews.earlier, run.mr, run.id)
        conceded = await self.store.run(reviews.conceded, run.mr)
        identity = self.identities[run.mr.host]
        threads = {t.id: t for t in snapshot.threads}
        earlier = [followup.Earlier(e.id, e.fingerprint, e.path, e.thread_id,
                                    followup.settled(threads.get(e.thread_id), identity,
                                                     conceded)) for e in earlier_rows]
        now_digests = await self.store.run(reviews.digests, run.id)
        before = await self.store.run(reviews.digests, run.previous_run_id) \
            if run.previous_run_id is not None else {}
        changed = followup.read_in_full(now_digests, before)
        unsure = followup.unsure(now_digests)
        kinds = followup.classify([f.fingerprint for f in found], earlier)
        placements = {f.id: kind for f, kind in zip(found, kinds, strict=True)
                      if kind != "new"}
        placements.update(followup.overflow(
            [(f.id, Severity(f.severity)) for f, k in zip(found, kinds, strict=True)
             if k == "new" and f.placement == "inline"], self.settings.max_inline_findings))
        fixed = followup.fixed(earlier, {f.fingerprint for f in found}, changed)
        # The verdict weighs what stands: new findings, and earlier ones still open in their
        # threads (a critical nobody fixed keeps the MR blocked, read again or not).
        fixed_ids = {e.id for e in fixed}
        standing = [f.severity for f, k in zip(found, kinds, strict=True) if k == "new"]
        standing += [row.severity for row, e in zip(earlier_rows, earlier, strict=True)
                     if not e.settled and row.id not in fixed_ids]
        # A diff with no file of text to read (empty, or only binaries and skipped files)
        # is judged neither way: "approved, 0 files reviewed" would be a claim nobody made.
        verdict = (decide((Severity(s) for s in standing), self.policy, complete=not unsure)
                   if now_digests else Verdict.COMMENTED)
        bound.info("review_decided", verdict=verdict.value, findings=len(found),
                   not_raised_again=kinds.count("settled"), already_open=kinds.count("open"),
                   fixed=len(fixed), unsure=len(unsure))
        return await self.store.run(reviews.decided, run.id, self.clock(),
                                    placements=placements, fixed=[e.id for e in fixed],
                                    verdict=verdict.value,
                                    not_raised_again=kinds.count("settled"))

    async def _summary(self, run: ReviewRun) -> str:
        found: list[StoredFinding] = await self.store.run(reviews.findings, run.id)
        skipped = await self.store.run(reviews.skipped_files, run.id, render.LISTED)
        fixed = await self.store.run(reviews.fixing, run.id)
        unsure = followup.unsure(await self.store.run(reviews.digests, run.id))
        return render.summary_body(run.token, render.Summary(
            verdict=Verdict(run.verdict), head_sha=run.head_sha,
            files_reviewed=run.files_reviewed,
            inline=[as_finding(f) for f in found if f.placement == "inline"],
            outside=[as_finding(f) for f in found if f.placement == "outside"],
            skipped=skipped, skipped_total=run.skipped_total,
            not_raised_again=run.not_raised_again, fixed=len(fixed),
            previous_head=run.previous_head_sha, notes=notes(run), unsure=unsure))


def result(run: ReviewRun, found: Sequence[StoredFinding]) -> dict[str, object]:
    """The machine-readable outcome (`livereview review --json`)."""
    return {"run": run.id, "review": run.token, "state": run.state.value,
            "verdict": run.verdict or None, "verdict_applied": run.verdict_applied or None,
            "review_id": run.review_id or None,
            "summary_message_id": run.summary_message_id or None,
            "notice_message_id": run.notice_message_id or None,
            "head_sha": run.head_sha, "files_reviewed": run.files_reviewed,
            "files_skipped": run.skipped_total,
            "knowledge": knowledge(run),
            "findings": [{"severity": f.severity, "category": f.category,
                          "confidence": f.confidence, "path": f.path, "line": f.line,
                          "side": f.side, "placement": f.placement,
                          "message_id": f.message_id or None} for f in found],
            "last_error": run.last_error or None}



def knowledge(run: ReviewRun) -> list[dict[str, object]]:
    """The references the run's prompts showed, with their kind and relevance."""
    try:
        value = json.loads(run.knowledge or "[]")
    except ValueError:
        return []
    return [dict(v) for v in value if isinstance(v, dict)] if isinstance(value, list) else []
