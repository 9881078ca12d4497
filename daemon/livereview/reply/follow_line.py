"""Posting the message that follows a thread's moved or removed line (reply/moved.py says
what it is; docs/DESIGN.md §4, "Moved lines").

It is posted inside the answer's POST bracket (reply/worker.py): after `post_started_at`
is committed and before the answer. A job that finds the bracket open looks for the note's
own marker on the MR first and posts it only when it is not there, so a crash between the
two posts, or a lost response, neither loses nor doubles it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from structlog.typing import FilteringBoundLogger

from livereview.core.model import Identity, Message, ReplyJob, Snapshot
from livereview.hosts.base import Conflict, Host, HostError, Unsupported, statement
from livereview.reply.moved import Moved, moved_for
from livereview.reply.other_threads import link

Post = Callable[[Awaitable[Message]], Awaitable[Message]]  # a POST under the job's claim
Step = Callable[[Awaitable[Snapshot]], Awaitable[Snapshot]]  # a read within the step timeout


def _refused(exc: HostError) -> bool:
    """The host would not take the inline comment there (GitLab 400 "line_code can't be
    blank", GitHub 422 "line must be part of the diff") or has none: nothing was created."""
    return isinstance(exc, (Conflict, Unsupported)) or type(exc) is HostError


def followed_in(snapshot: Snapshot, job: ReplyJob, identity: Identity) -> str | None:
    """The id of the bot's note for this job's question in `snapshot`, if any: one note per
    question, whichever of its answers (the first, or one to an edit) posted it."""
    return next((m.id for t in snapshot.threads for m in t.messages
                 if identity.is_me(m.author) and moved_for(m.body) == job.message_id), None)


async def adopt(host: Host, job: ReplyJob, identity: Identity, step: Step) -> str | None:
    """The id of the bot's note for this job's question already on the MR, if any."""
    return followed_in(await step(host.fetch_mr(job.mr.repo, job.mr.iid)), job, identity)


async def follow(host: Host, job: ReplyJob, stored: Snapshot, moved: Moved, post: Post,
                 log: FilteringBoundLogger) -> str:
    """Post the note at the line's new place, or the general comment; returns its id."""
    thread = stored.thread(job.thread_id)
    root = thread.root.id if thread is not None and thread.root is not None else job.message_id
    body = moved.note(link(host.type, stored.mr.web_url, root), job.message_id)
    anchor = moved.anchor(stored.mr)
    if anchor is not None:
        try:
            message = await post(host.comment(job.mr, body, anchor))
        except HostError as exc:
            if not _refused(exc):
                raise
            log.info("moved_note_refused", reason=str(exc))
            body = replace(moved, in_diff=False).note(link(host.type, stored.mr.web_url, root),
                                                      job.message_id)
        else:
            log.info("moved_note_posted", where="line", line=moved.line,
                     posted_message_id=message.id)
            return message.id
    message = await post(statement(host, job.mr, body))
    log.info("moved_note_posted", where="mr", gone=moved.line is None,
             posted_message_id=message.id)
    return message.id
