"""Writing one reply: gather the context, ask the model, make its answer safe to post.

Everything the bot posts goes through `postable`: the model's text and anything quoted from a
comment are hostile, so mentions are defused, hidden HTML is shown, invisible characters are
dropped, and the one reply marker is the bot's own last line.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from structlog.typing import FilteringBoundLogger

from livereview.hosts.base import Host, NotFound
from livereview.lessons import applicable
from livereview.markdown import open_fence
from livereview.model import Identity, ReplyJob, Snapshot, Thread
from livereview.reply import context
from livereview.reply.answer import parse as parse_answer
from livereview.reply.answer import render as render_answer
from livereview.reply.knowledge import Knowledge
from livereview.reply.llm import Answerer
from livereview.sanitize import outgoing
from livereview.store import lessons as lesson_rows
from livereview.store import reviews
from livereview.store.db import Store
from livereview.triggers import reply_marker

T = TypeVar("T")
SHORTENED = "*(answer shortened)*"


class JobSkipped(Exception):
    """The job must not be answered (MR gone or closed); the message says why."""


def postable(text: str, message_id: str, max_chars: int,
             allow_mentions: Sequence[str] = ()) -> str:
    """`text` as the bot may post it, within `max_chars`, ending with the marker for
    `message_id`. A code block left open (by the model, or by the cut) is closed, so the
    marker stays a hidden last line."""
    safe = outgoing(text, allow_mentions)
    shortened = len(safe) > max_chars
    if shortened:  # a cut can leave a construct of its own (`</` at the end opens a comment)
        safe = outgoing(safe[:max_chars].rstrip(), allow_mentions)
    fence = open_fence(safe)
    if fence:
        safe = outgoing(f"{safe}\n{fence}", allow_mentions)
    if shortened:
        safe += f"\n\n{SHORTENED}"
    return f"{safe}\n\n{reply_marker(message_id)}"


@dataclass
class Composer:
    store: Store
    answerer: Answerer
    knowledge: Knowledge
    step_timeout_seconds: float
    max_reply_chars: int

    async def _step(self, call: Awaitable[T]) -> T:
        async with asyncio.timeout(self.step_timeout_seconds):
            return await call

    async def _where(self, job: ReplyJob, host: Host, stored: Snapshot, thread: Thread,
                     log: FilteringBoundLogger) -> tuple[str | None, str | None]:
        """The hunk at a diff thread's anchor, or the diffstat for a general comment."""
        try:
            if thread.anchor is None:
                return None, context.diffstat(await self._step(host.diff(job.mr)))
            # A thread started before a push points at an older version of the diff: its
            # line numbers only make sense there.
            outdated = thread.anchor.head_sha not in ("", stored.mr.head_sha)
            diff = await self._step(host.diff(job.mr, thread.anchor.head_sha if outdated
                                              else None))
            return context.hunk_at(diff, thread.anchor), None
        except NotFound:
            log.info("diff_unavailable")
            return None, None

    async def _finding(self, job: ReplyJob) -> list[context.Reference]:
        """In a thread a review opened (issue 14): the finding and the review's verdict."""
        found = await self.store.run(reviews.finding_in_thread, job.mr, job.thread_id)
        if found is None:
            return []
        finding, verdict = found
        return [context.Reference(
            "the review finding this thread discusses",
            f"Your review of this MR raised this {finding.severity} finding at "
            f"{finding.path}:{finding.line}; the review's verdict was "
            f"{verdict.replace('_', ' ') or 'not decided'}.\n\n{finding.body}")]

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
        hunk, stat = await self._where(job, host, stored, thread, log)
        references = await self.knowledge.read(job.mr, host, stored.mr.target_branch, log)
        references += await self._finding(job)
        active = await self.store.run(lesson_rows.everything, "active")
        used = applicable(active, job.mr.host, job.mr.repo)
        prompt = context.build(stored.mr, thread, job.message_id, identity, hunk=hunk,
                               stat=stat, commits=stored.commits, lessons=used,
                               references=references)
        answer = await self._step(self.answerer.answer(prompt))
        structured = parse_answer(answer.text, question.body)
        log.info("answer_written", model=answer.model, chars=len(answer.text),
                 prompt_tokens=answer.prompt_tokens, truncated=list(prompt.truncated),
                 prompt_version=context.prompt_version(), mode=structured.mode,
                 structured=structured.structured, concede=structured.concede,
                 lessons_used=[lesson.id for lesson in used])
        body = postable(render_answer(structured), job.message_id, self.max_reply_chars)
        return (body, json.dumps(structured.meta()),
                " ".join(str(lesson.id) for lesson in used))
