"""Writing one reply: gather the context, ask the model, make its answer safe to post.

Everything the bot posts goes through `postable` (core/postable.py): the model's text and
anything quoted from a comment are hostile.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from structlog.typing import FilteringBoundLogger

from livereview.core.answer import parse as parse_answer
from livereview.core.answer import render as render_answer
from livereview.core.answer import with_kinds
from livereview.core.lessons import applicable
from livereview.core.model import (
    Anchor,
    Commit,
    FileStatus,
    Identity,
    JobReason,
    Message,
    ReplyJob,
    Snapshot,
    Thread,
)
from livereview.core.postable import postable
from livereview.core.prompt import Reference, RefKind
from livereview.core.remap import Fate, remap
from livereview.hosts.base import Forbidden, Host, NotFound, ReadsCommitsApart
from livereview.jobs import failure
from livereview.jobs.knowledge import Knowledge
from livereview.jobs.llm import Answerer
from livereview.reply import context, other_threads
from livereview.reply.budget import chars_for
from livereview.reply.code_context import Excerpt, Surroundings
from livereview.reply.code_reader import CodeReader, Reads
from livereview.reply.code_refs import named_in
from livereview.reply.interdiff import Interdiff, interdiff
from livereview.reply.moved import Moved, locate
from livereview.reply.policy import AnswerPolicy
from livereview.settings import AnswerSettings
from livereview.store import lessons as lesson_rows
from livereview.store import reviews
from livereview.store.db import Store

T = TypeVar("T")
NOT_AN_ANSWER_OBJECT = "it is not one JSON object with a string `answer`"
EDITED_LEAD = "Answering the edited question:"  # first line of an answer to an edit


class JobSkipped(Exception):
    """The job must not be answered (MR gone or closed); the message says why."""


def _default_answers(host: str, repo: str) -> AnswerSettings:
    return AnswerSettings()


@dataclass
class Composer:
    store: Store
    answerer: Answerer
    knowledge: Knowledge
    step_timeout_seconds: float
    max_reply_chars: int
    answers: Callable[[str, str], AnswerSettings] = _default_answers  # (host, repo) → policy
    code: CodeReader = field(default_factory=CodeReader)

    async def _step(self, call: Awaitable[T], what: str = "a request to the host") -> T:
        async with failure.step_limit(self.step_timeout_seconds, what):
            return await call

    async def _where(self, job: ReplyJob, host: Host, stored: Snapshot, thread: Thread,
                     log: FilteringBoundLogger) -> tuple[str | None, str | None, str | None]:
        """The hunk at a diff thread's anchor, or the diffstat for a general comment; and
        the diff at the MR's head when that is what was read."""
        try:
            if thread.anchor is None:
                diff = await self._step(self.code.diff(host, stored.mr))
                return None, context.diffstat(diff), diff
            # A thread started before a push points at an older version of the diff: its
            # line numbers only make sense there.
            outdated = thread.anchor.head_sha not in ("", stored.mr.head_sha)
            diff = await self._step(self.code.diff(
                host, stored.mr, thread.anchor.head_sha if outdated else None))
            return context.hunk_at(diff, thread.anchor), None, None if outdated else diff
        except NotFound:
            log.info("diff_unavailable")
            return None, None, None

    async def _named_code(self, job: ReplyJob, host: Host, stored: Snapshot,
                          question: Message, diff: str | None, reads: Reads
                          ) -> tuple[list[Excerpt], list[str]]:
        """The code the question names, read at the MR's head."""
        named, head = named_in(question.body), stored.mr.head_sha
        if not (named.places or named.symbols) or not head or not reads.max_files:
            return [], []
        async with asyncio.timeout(self.step_timeout_seconds):
            touched = await self.code.touched(host, job.mr, head, diff, named.symbols)
            return await self.code.named_code(host, job.mr, head, touched, named, reads)

    async def _changes_since(self, job: ReplyJob, host: Host, stored: Snapshot,
                             thread: Thread, reads: Reads) -> tuple[Interdiff | None,
                                                                    Moved | None]:
        """For a thread started before a push: its file then and now, and where its line
        went (reply/moved.py)."""
        anchor = thread.anchor
        if anchor is None or anchor.head_sha in ("", stored.mr.head_sha):
            return None, None
        path = anchor.new_path or anchor.old_path
        both = Reads(2, reads.max_bytes)  # the file at both heads, whatever else was read
        async with asyncio.timeout(self.step_timeout_seconds):
            before = await self.code.file(host, job.mr, anchor.head_sha, path, both)
            if before is None:
                reads.skipped += both.skipped
                return None, None
            now_path, after = await self._at_head(host, job, stored, path, both)
            # A file too big to read at the head is not a removed one: say nothing of it.
            moved = None if both.skipped else await self._moved(job, host, anchor, now_path,
                                                                before, after)
        reads.skipped += both.skipped
        if after is None:
            return Interdiff(f"The file {path} no longer exists at the MR's head (or is not "
                             "readable).", ""), moved
        return interdiff(before, after, path, anchor.new_line), moved

    async def _at_head(self, host: Host, job: ReplyJob, stored: Snapshot, path: str,
                       reads: Reads) -> tuple[str, str | None]:
        """The file at the MR's head: under its path, else under the path the diffstat says
        it was renamed to; None when it is in neither."""
        after = await self.code.file(host, job.mr, stored.mr.head_sha, path, reads)
        if after is not None or reads.skipped:
            return path, after
        renamed = await self._renamed(host, job, path)
        if renamed is None:
            return path, None
        again = Reads(1, reads.max_bytes)
        after = await self.code.file(host, job.mr, stored.mr.head_sha, renamed, again)
        reads.skipped += again.skipped
        return renamed, after

    async def _renamed(self, host: Host, job: ReplyJob, path: str) -> str | None:
        """The file's path at the MR's head when the diffstat says it was renamed."""
        stat = await host.diffstat(job.mr)
        return next((c.new_path for c in stat
                     if c.old_path == path and c.new_path != path
                     and c.status is FileStatus.RENAMED), None)

    async def _moved(self, job: ReplyJob, host: Host, anchor: Anchor, path: str,
                     before: str, after: str | None) -> Moved | None:
        """Where the line went; the diff at the head (read only for a line that moved)
        says whether a note may go there."""
        if anchor.new_line is None:
            return None
        diff = ""
        if after is not None and remap(before, after, anchor.new_line).fate is Fate.MOVED:
            whole = await host.diff(job.mr)
            if f"\n+++ b/{path}\n" in f"\n{whole}":  # else the diff does not show the file
                diff = context.file_section(whole, Anchor(path, path, None, None, "", "", ""))
        return locate(anchor, path, before, after, diff)

    async def _surroundings(self, job: ReplyJob, host: Host, stored: Snapshot, thread: Thread,
                            question: Message, identity: Identity, diff: str | None,
                            answers: AnswerSettings, log: FilteringBoundLogger
                            ) -> tuple[Surroundings, Moved | None]:
        """The rest of the MR's conversation (from the snapshot: no request), the code the
        question names and the change at an outdated anchor (read at the MR's heads). The
        code is optional context: a file the host will not give leaves it out."""
        reads = Reads(answers.max_files_read, answers.max_file_kb * 1000)
        excerpts: list[Excerpt] = []
        missing: list[str] = []
        changed: Interdiff | None = None
        moved: Moved | None = None
        try:
            excerpts, missing = await self._named_code(job, host, stored, question, diff, reads)
        except (NotFound, Forbidden) as exc:
            log.info("code_unavailable", error=str(exc))
        try:
            changed, moved = await self._changes_since(job, host, stored, thread, reads)
        except (NotFound, Forbidden) as exc:
            log.info("interdiff_unavailable", error=str(exc))
        if reads.skipped:
            log.info("code_not_read", skipped=reads.skipped[:10])
        return Surroundings(elsewhere=other_threads.gather(stored, thread.id, identity, host.type),
                            code=tuple(excerpts), code_not_found=tuple(missing),
                            interdiff=changed), moved

    async def _finding(self, job: ReplyJob) -> list[Reference]:
        """In a thread a review opened (docs/DESIGN.md §11): the finding and the review's
        verdict."""
        found = await self.store.run(reviews.finding_in_thread, job.mr, job.thread_id)
        if found is None:
            return []
        finding, verdict = found
        return [Reference(
            "the review finding this thread discusses",
            f"Your review of this MR raised this {finding.severity} finding at "
            f"{finding.path}:{finding.line}; the review's verdict was "
            f"{verdict.replace('_', ' ') or 'not decided'}.\n\n{finding.body}",
            kind=RefKind.FINDING, relevance=1.0)]

    async def _commits(self, job: ReplyJob, host: Host, stored: Snapshot
                       ) -> tuple[Commit, ...]:
        """The MR's commits for the prompt: as stored, or read now when the MR was stored
        without them (a poller stores them with any job it makes: this is the safety net
        for a job made otherwise)."""
        if stored.commits is not None:
            return stored.commits
        if isinstance(host, ReadsCommitsApart):  # the commits alone, not the whole MR
            return await self._step(host.fetch_commits(job.mr))
        read = await self._step(host.fetch_mr(job.mr.repo, job.mr.iid))
        return read.commits or ()

    async def compose(self, job: ReplyJob, host: Host, stored: Snapshot, identity: Identity,
                      log: FilteringBoundLogger) -> tuple[str, str, str]:
        """The reply's body (safe, with its marker), its metadata (JSON) and the ids of the
        lessons its prompt contained."""
        thread = stored.thread(job.thread_id)
        if thread is None:
            raise JobSkipped("the thread is no longer in the MR")
        question = next((m for m in thread.messages if m.id == job.message_id), None)
        if question is None:
            raise JobSkipped("the message to answer was deleted")
        answers = self.answers(job.mr.host, job.mr.repo)
        hunk, stat, diff = await self._where(job, host, stored, thread, log)
        around, moved = await self._surroundings(job, host, stored, thread, question,
                                                 identity, diff, answers, log)
        references = await self.knowledge.read(job.mr, host, stored.mr.target_branch, log)
        references += await self._finding(job)
        active = await self.store.run(lesson_rows.everything, "active")
        used = applicable(active, job.mr.host, job.mr.repo)
        max_chars = min(answers.max_chars, self.max_reply_chars)
        policy = AnswerPolicy(answers.tone, answers.concede, answers.languages, max_chars)
        prompt = context.build(stored.mr, thread, job.message_id, identity, hunk=hunk,
                               stat=stat, commits=await self._commits(job, host, stored),
                               lessons=used,
                               references=references, surroundings=around, policy=policy,
                               budget_chars=chars_for(answers.context_budget_tokens))
        answer = await self._step(self.answerer.answer(prompt), "the model's answer")
        structured = parse_answer(answer.text, question.body)
        if answer.structured and not structured.structured:
            # The server was to enforce the answer object and did not: asked once more,
            # told why; a second miss is answered as prose, as from a server without
            # structured outputs (docs/DESIGN.md §10).
            log.info("answer_retried", reason=NOT_AN_ANSWER_OBJECT)
            answer = await self._step(self.answerer.answer(prompt.again(NOT_AN_ANSWER_OBJECT)))
            structured = parse_answer(answer.text, question.body)
        structured = with_kinds(structured, context.shown_references(thread, references))
        log.info("answer_written", model=answer.model, chars=len(answer.text),
                 prompt_tokens=answer.prompt_tokens, truncated=list(prompt.truncated),
                 context_sections=list(prompt.sections), context_chars=len(prompt.user),
                 code_excerpts=len(around.code),
                 prompt_version=context.prompt_version(), mode=structured.mode,
                 structured=structured.structured, concede=structured.concede,
                 lessons_used=[lesson.id for lesson in used])
        text = render_answer(structured)
        meta = structured.meta()
        if moved is not None:  # the thread says where its line went (reply/moved.py)
            text = f"{moved.thread_note()}\n\n{text}"
            meta["moved"] = moved.meta()
            log.info("line_moved", gone=moved.line is None, line=moved.line,
                     in_diff=moved.in_diff)
        if job.reason is JobReason.EDITED_QUESTION:  # the thread shows the earlier answer
            text = f"{EDITED_LEAD}\n\n{text}"
        body = postable(text, job.target, max_chars)
        return (body, json.dumps(meta),
                " ".join(str(lesson.id) for lesson in used))
