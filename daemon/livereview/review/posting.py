"""Putting a decided review on the host, exactly once, and telling the author.

Every POST is bracketed like a reply job's (docs/DESIGN.md §4): its `*_started_at` is
committed first; a run that finds it set looks on the host for the marker the body ends
with and adopts what it finds instead of posting again. A host that posts a whole review
in one request (GitHub) gets one `post_review`, adopted through `reviews_posted` and the
MR's threads; elsewhere each finding, the summary, the verdict, every fixed thread and the
notice are separate steps, each stored (with the host's id) before the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from structlog.typing import FilteringBoundLogger

from livereview.core.findings import Finding, Severity, category_of
from livereview.core.model import (
    Anchor,
    DiffRefs,
    InlineComment,
    MergeRequest,
    Message,
    Side,
    Snapshot,
    Verdict,
)
from livereview.core.model_runs import ReviewRun, StoredFinding
from livereview.hosts.base import Conflict, Host, NotFound, Unsupported, statement
from livereview.review import render
from livereview.review.notify import Json, Notifier
from livereview.settings import ReviewSettings
from livereview.store import review_steps as steps
from livereview.store import reviews
from livereview.store.db import Store
from livereview.store.leases import Leases

T = TypeVar("T")


def as_finding(stored: StoredFinding) -> Finding:
    return Finding(Severity(stored.severity), stored.path, stored.line, Side(stored.side),
                   stored.body, category_of(stored.category), stored.confidence)


def inline(stored: StoredFinding, token: str) -> InlineComment:
    return InlineComment(stored.path, stored.line, Side(stored.side),
                         render.finding_body(token, stored.number, as_finding(stored)),
                         stored.old_path, stored.old_line)


def anchor(comment: InlineComment, refs: DiffRefs) -> Anchor:
    old = comment.side is Side.OLD
    return Anchor(new_path=comment.path, old_path=comment.old_path or comment.path,
                  new_line=None if old else comment.line,
                  old_line=comment.line if old else comment.old_line,
                  base_sha=refs.base_sha, start_sha=refs.start_sha, head_sha=refs.head_sha)


@dataclass
class Poster:
    store: Store
    settings: ReviewSettings
    notifiers: Sequence[Notifier]
    step_timeout_seconds: float
    clock: Callable[[], datetime]
    leases: Leases | None = None  # replicas: every write is fenced by the run's lease
    _seen: dict[int, Snapshot] = field(default_factory=dict)  # per run, for adoption

    async def _fence(self, run: ReviewRun, finding: StoredFinding | None = None) -> None:
        """Before a write to the host: the run (and the finding) are still this replica's
        and as it left them, held for the write's whole step (`LeaseLost` otherwise)."""
        if self.leases is not None:
            await self.leases.fence_review(run, self.clock(), self.step_timeout_seconds,
                                           finding)

    async def _step(self, call: Awaitable[T]) -> T:
        async with asyncio.timeout(self.step_timeout_seconds):
            return await call

    async def _mine(self, run: ReviewRun, host: Host, part: str) -> Message | None:
        """The bot's message on the MR ending with this run's marker for `part`, if any
        (one fetch of the MR per run attempt, kept for the other adoptions)."""
        snapshot = self._seen.get(run.id)
        if snapshot is None:
            snapshot = self._seen[run.id] = await self._step(
                host.fetch_mr(run.mr.repo, run.mr.iid))
        return next((m for t in snapshot.threads for m in t.messages
                     if render.marked(m.body) == (run.token, part)), None)

    async def posted(self, run: ReviewRun, host: Host, part: str) -> Message | None:
        """This run's message for `part` on the MR, if an earlier attempt posted it."""
        return await self._mine(run, host, part)

    def remember(self, run_id: int, snapshot: Snapshot) -> None:
        """The MR as fetched at the start of an attempt: whatever earlier attempts posted
        is in it."""
        self._seen[run_id] = snapshot

    def forget(self, run_id: int) -> None:
        self._seen.pop(run_id, None)

    # -- posting ---------------------------------------------------------------------
    async def post(self, run: ReviewRun, host: Host, mr: MergeRequest, summary: str,
                   log: FilteringBoundLogger) -> ReviewRun:
        found = await self.store.run(reviews.findings, run.id)
        refs = DiffRefs(run.base_sha, run.start_sha, run.head_sha)
        if host.capabilities.review_batch:
            run = await self._post_batch(run, host, refs, found, summary, log)
        else:
            run = await self._post_each(run, host, refs, found, summary, log)
            run = await self._apply_verdict(run, host, log)
        await self._resolve_fixed(run, host, log)
        self.forget(run.id)
        notify = run.verdict in self.settings.notify_on and (
            self.settings.notify_author or self.notifiers)
        return await self.store.run(steps.finish_posting, run.id, self.clock(),
                                    notify=bool(notify))

    async def _post_batch(self, run: ReviewRun, host: Host, refs: DiffRefs,
                          found: list[StoredFinding], summary: str, log: FilteringBoundLogger
                          ) -> ReviewRun:
        if run.posted:
            return run
        posted = [f for f in found if f.placement == "inline"]
        if run.post_started:  # a lost response: the review may be on the host already
            mine = [m for m in await self._step(host.reviews_posted(run.mr))
                    if render.marked(m.body) == (run.token, "summary")]
            if mine:
                for stored in posted:
                    message = await self._mine(run, host, f"finding={stored.number}")
                    if message is not None:
                        await self.store.run(steps.mark_finding_posted, stored.id,
                                             message.id, message.thread_id)
                log.info("review_adopted", review_id=mine[0].id)
                return await self.store.run(
                    steps.mark_posted, run.id, self.clock(), review_id=mine[0].id,
                    summary_message_id=mine[0].id, verdict_applied=run.verdict)
        await self._fence(run)
        run = await self.store.run(steps.start_post, run.id, self.clock())
        result = await self._step(host.post_review(
            run.mr, refs, [inline(f, run.token) for f in posted], summary, Verdict(run.verdict)))
        for stored, message in zip(posted, result.comments, strict=False):
            await self.store.run(steps.mark_finding_posted, stored.id, message.id,
                                 message.thread_id)
        log.info("review_posted", review_id=result.review_id, findings=len(posted),
                 verdict_applied=result.verdict_applied.value)
        return await self.store.run(
            steps.mark_posted, run.id, self.clock(), review_id=result.review_id,
            summary_message_id=result.summary.id if result.summary else result.review_id,
            verdict_applied=result.verdict_applied.value)

    async def _post_each(self, run: ReviewRun, host: Host, refs: DiffRefs,
                         found: list[StoredFinding], summary: str, log: FilteringBoundLogger
                         ) -> ReviewRun:
        for stored in found:
            if stored.placement != "inline" or stored.message_id:
                continue
            part = f"finding={stored.number}"
            message = await self._mine(run, host, part) if stored.post_started else None
            if message is None:
                await self._fence(run, stored)
                await self.store.run(steps.start_finding_post, stored.id, self.clock())
                comment = inline(stored, run.token)
                message = await self._step(host.comment(run.mr, comment.body,
                                                        anchor(comment, refs)))
            await self.store.run(steps.mark_finding_posted, stored.id, message.id,
                                 message.thread_id)
        if run.summary_message_id:
            return run
        message = await self._mine(run, host, "summary") if run.post_started else None
        if message is None:
            await self._fence(run)
            run = await self.store.run(steps.start_post, run.id, self.clock())
            message = await self._step(statement(host, run.mr, summary))
        log.info("review_posted", review_id=message.id,
                 findings=sum(1 for f in found if f.placement == "inline"))
        return await self.store.run(steps.mark_posted, run.id, self.clock(),
                                    review_id=message.id, summary_message_id=message.id)

    async def _apply_verdict(self, run: ReviewRun, host: Host, log: FilteringBoundLogger
                             ) -> ReviewRun:
        """GitLab: approve, or unapprove (never an approval when changes are requested);
        Bitbucket: approve or request changes. Each is idempotent on the host, so no
        marker is needed: a retry applies it again."""
        if run.verdict_done:
            return run
        verdict, applied = Verdict(run.verdict), Verdict(run.verdict)
        if not host.capabilities.verdicts:
            applied = Verdict.COMMENTED
        else:
            try:
                if verdict is Verdict.APPROVED:
                    await self._step(host.approve(run.mr))
                elif verdict is Verdict.CHANGES_REQUESTED:
                    try:
                        await self._step(host.request_changes(run.mr))
                    except Unsupported:
                        await self._step(host.unapprove(run.mr))
            except (Conflict, NotFound) as exc:  # already approved / nothing to withdraw
                log.info("verdict_already_applied", verdict=verdict.value, reason=str(exc))
            except Unsupported as exc:
                log.info("verdict_unsupported", verdict=verdict.value, reason=str(exc))
                applied = Verdict.COMMENTED
        return await self.store.run(steps.mark_verdict, run.id, self.clock(), applied.value)

    async def _resolve_fixed(self, run: ReviewRun, host: Host, log: FilteringBoundLogger
                             ) -> None:
        """Threads of earlier findings the new commits fixed: a one-line note, then
        resolved."""
        for stored in await self.store.run(reviews.fixing, run.id):
            if stored.fixed:
                continue
            part = f"fixed={stored.id}"
            note = await self._mine(run, host, part) if stored.fix_started else None
            if note is None:
                await self._fence(run)
                await self.store.run(steps.start_fix_note, stored.id, self.clock())
                with contextlib.suppress(NotFound):  # the thread is gone: nothing to resolve
                    await self._step(host.reply(run.mr, stored.thread_id,
                                                render.fixed_note(run.token, stored.id,
                                                                  run.head_sha)))
            if host.capabilities.resolve:
                with contextlib.suppress(NotFound):
                    await self._step(host.resolve(run.mr, stored.thread_id))
            await self.store.run(steps.mark_fixed, stored.id, self.clock())
            log.info("finding_fixed", finding_id=stored.id, thread_id=stored.thread_id)

    # -- telling the author ------------------------------------------------------------
    async def notify(self, run: ReviewRun, host: Host, mr: MergeRequest,
                     log: FilteringBoundLogger) -> ReviewRun:
        found = [f for f in await self.store.run(reviews.findings, run.id)
                 if f.placement in ("inline", "outside", "open")]
        if self.settings.notify_author and not run.notice_message_id:
            message = await self._mine(run, host, "notify") if run.notify_started else None
            if message is None:
                await self._fence(run)
                run = await self.store.run(steps.start_notice, run.id, self.clock())
                body = render.notice_body(run.token, mr.author.username, Verdict(run.verdict),
                                          [as_finding(f) for f in found], run.review_id)
                message = await self._step(statement(host, run.mr, body))
            run = await self.store.run(steps.mark_notice, run.id, self.clock(), message.id)
            log.info("author_notified", message_id=message.id)
        done = set(run.notifiers_done.split())
        for notifier in self.notifiers:
            if notifier.name in done:
                continue
            await self._fence(run)
            await notifier.deliver(event(run, mr, found))
            done.add(notifier.name)
            run = await self.store.run(steps.mark_notifiers, run.id, self.clock(),
                                       " ".join(sorted(done)))
            log.info("notifier_delivered", notifier=notifier.name)
        self.forget(run.id)
        return await self.store.run(steps.mark_done, run.id, self.clock())


def event(run: ReviewRun, mr: MergeRequest, found: Sequence[StoredFinding]) -> dict[str, Json]:
    """What notifiers receive (strings cleaned by the notifier before it leaves)."""
    counts: dict[str, Json] = {s.value: sum(1 for f in found if f.severity == s.value)
                               for s in Severity}
    findings: list[Json] = [{"severity": f.severity, "category": f.category,
                             "confidence": f.confidence, "path": f.path, "line": f.line,
                             "body": f.body[:2000]} for f in found[:100]]
    return {
        "event": f"review.{run.verdict}",
        "review": {"id": run.token, "run": run.id, "verdict": run.verdict,
                   "verdict_applied": run.verdict_applied, "review_id": run.review_id,
                   "summary_id": run.summary_message_id, "head_sha": run.head_sha,
                   "counts": counts},
        "mr": {"host": run.mr.host, "repo": run.mr.repo, "iid": run.mr.iid,
               "title": mr.title, "url": mr.web_url, "author": mr.author.username},
        "findings": findings,
    }


def notes(run: ReviewRun) -> list[str]:
    try:
        value = json.loads(run.notes or "[]")
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []
