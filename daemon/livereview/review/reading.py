"""Reading an MR's diff for a review: file by file, in batches within a size budget, each
batch's findings stored with the cursor before the next batch is read.

Memory is bounded by one batch (`batch_chars` of diff text, plus one file the host allows up
to `max_file_bytes`): a 3 000-file or 50 MB diff is never held whole. A crash resumes after
the last batch stored (`files_done`), so no file's findings are stored twice.

A batch is stored only on an answer that is findings. One that is not (prose, "LGTM",
JSON of another shape) is asked again at once, with the parser's reason; if the second
answer is not findings either, the batch is not reviewed, and the run retries it later
(`UnusableAnswer` is an `LLMError`: backoff, then failure after `review.max_attempts`) —
a verdict is never decided on findings nobody could read. A file the answer lost an item
about is stored with the UNSURE digest: no approval, nothing in it resolved as fixed, and
the next follow-up reads it again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypeVar

from structlog.typing import FilteringBoundLogger

from livereview.core import placement
from livereview.core.findings import parse_findings
from livereview.core.model import FileChange, FileDiff, Lesson, MergeRequest
from livereview.core.model_runs import ReviewRun
from livereview.core.prompt import Reference
from livereview.core.sanitize import one_line
from livereview.hosts.base import Host
from livereview.jobs.llm import Answerer, LLMError
from livereview.review import prompt
from livereview.review.followup import UNSURE
from livereview.review.followup import of as fingerprint_of
from livereview.settings import ReviewSettings
from livereview.store import reviews
from livereview.store.db import Store

T = TypeVar("T")


class UnusableAnswer(LLMError):
    """The model's answer about a batch is not findings: the batch is read again later.
    `why` is the parser's reason, in the bot's words (no text of the answer)."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


@dataclass
class _Batch:
    files: list[tuple[FileChange, str]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # review_files rows
    chars: int = 0
    reviewed: int = 0
    skipped: int = 0


def skip_reason(item: FileDiff) -> str:
    """Why a file is not sent to the model ("" when it is)."""
    if item.skipped:
        return item.skipped
    if item.change.binary:
        return "binary"
    if placement.generated(item.change.new_path, item.diff):
        return "generated"
    if not item.diff.strip():
        return "no textual change"
    return ""


@dataclass
class Reader:
    store: Store
    answerer: Answerer
    settings: ReviewSettings
    step_timeout_seconds: float
    clock: Callable[[], datetime]
    progress: Callable[[int, int], None] | None = None  # (files read, files in the diff)

    async def read(self, run: ReviewRun, host: Host, mr: MergeRequest,
                   lessons: Sequence[Lesson], total: int, log: FilteringBoundLogger,
                   references: Sequence[Reference] = ()) -> ReviewRun:
        """Read the diff from `run.files_done` on; returns the run with its cursor at the
        end. `total` is the diffstat's file count (for progress only)."""
        before: dict[str, str] = {}
        if run.previous_run_id is not None and run.previous_head_sha:
            before = await self.store.run(reviews.digests, run.previous_run_id)
        batch, index = _Batch(), 0
        async for item in host.diff_files(run.mr, self.settings.max_file_bytes):
            index += 1
            if index <= run.files_done:
                continue  # read and stored before a crash
            path = item.change.new_path
            reason = skip_reason(item)
            if reason:
                batch.rows.append({"path": path, "digest": "", "skipped": reason})
                batch.skipped += 1
            else:
                digest = placement.change_digest(item.diff)
                batch.rows.append({"path": path, "digest": digest, "skipped": ""})
                if before.get(path) != digest:
                    batch.files.append((item.change, item.diff))
                    batch.chars += len(item.diff)
                    batch.reviewed += 1
            if batch.chars >= self.settings.batch_chars or len(batch.rows) >= 500:
                run = await self._flush(run, batch, index, mr, lessons, references, log)
                batch = _Batch()
                if self.progress:
                    self.progress(index, total)
        run = await self._flush(run, batch, index, mr, lessons, references, log)
        if self.progress:
            self.progress(index, total)
        return run

    async def _flush(self, run: ReviewRun, batch: _Batch, index: int, mr: MergeRequest,
                     lessons: Sequence[Lesson], references: Sequence[Reference],
                     log: FilteringBoundLogger) -> ReviewRun:
        findings: list[dict[str, Any]] = []
        knowledge: list[dict[str, Any]] = []
        note = ""
        if batch.files:
            built = prompt.build(mr, batch.files, lessons, run.previous_head_sha, references)
            knowledge = [{"source": r.source, "kind": r.kind.value, "relevance": r.relevance}
                         for r in prompt.used_references(batch.files, references)]
            shown = prompt.names(change for change, _ in batch.files)  # exact, never merged
            answer = await bounded(self.answerer.answer(built), self.step_timeout_seconds)
            parsed = parse_findings(answer.text, shown)
            if parsed.unreadable:
                # Asked once more, told why (the parser's words): a model that slipped into
                # prose mostly answers in the format when shown the error.
                log.info("review_answer_retried", reason=parsed.unreadable,
                         structured=answer.structured)
                answer = await bounded(self.answerer.answer(built.again(parsed.unreadable)),
                                       self.step_timeout_seconds)
                parsed = parse_findings(answer.text, shown)
            if parsed.unreadable:
                # The answer's start, on one line: what an operator needs to tell a
                # chatty model from a refusal (the log's redactor still applies).
                log.warning("review_answer_unusable", reason=parsed.unreadable,
                            files=len(batch.files), answer_chars=len(answer.text),
                            answer_start=one_line(answer.text[:1000], 120))
                raise UnusableAnswer(f"the model's answer about {len(batch.files)} file(s) "
                                     f"is not findings ({parsed.unreadable})",
                                     parsed.unreadable)
            for reason in parsed.dropped:
                log.info("review_finding_dropped", reason=reason)
            unsure = {shown[path].new_path for path in parsed.unsure}
            if unsure:
                log.warning("review_files_unsure", files=sorted(unsure)[:20],
                            count=len(unsure))
                for row in batch.rows:
                    if row["path"] in unsure and not row["skipped"]:
                        row["digest"] = UNSURE
            maps = {c.new_path: placement.LineMap.of(d) for c, d in batch.files}
            for finding in parsed.findings:
                if finding.confidence < self.settings.min_confidence:
                    # The model's own doubt, not a loss: the file stays fully reviewed.
                    log.info("review_finding_dropped", reason=(
                        f"confidence {finding.confidence:g} of {finding.path}:{finding.line} "
                        f"is below review.min_confidence {self.settings.min_confidence:g}"))
                    continue
                change = shown[finding.path]
                real = replace(finding, path=change.new_path)
                comment = placement.place(real, change, maps[change.new_path])
                findings.append({
                    "severity": real.severity.value, "category": real.category.value,
                    "confidence": real.confidence, "path": comment.path if comment
                    else real.path, "line": comment.line if comment else real.line,
                    "side": (comment.side if comment else real.side).value,
                    "old_path": comment.old_path if comment else "",
                    "old_line": comment.old_line if comment else None,
                    "body": real.body, "fingerprint": fingerprint_of(real),
                    "placement": "inline" if comment else "outside"})
            note = parsed.summary
            log.info("review_batch_read", files=len(batch.files), chars=batch.chars,
                     findings=len(findings), dropped=len(parsed.dropped), unsure=len(unsure))
        if not batch.rows and index == run.files_done:
            return run
        return await self.store.run(
            reviews.add_batch, run.id, self.clock(), findings=findings, files=batch.rows,
            files_done=index, reviewed=batch.reviewed, skipped=batch.skipped, note=note,
            knowledge=knowledge)


async def bounded(call: Awaitable[T], seconds: float) -> T:
    async with asyncio.timeout(seconds):
        return await call
