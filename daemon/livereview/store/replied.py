"""Which comments were answered, and when: the daemon's posted reply jobs and the replies
tool calls posted (`tool_replies`). Keyed by (host, repo, comment id): the same comment id
on two repositories never collides.

A tool reply is bracketed like a reply job's POST: its row is committed with `started_at`
before the POST and gets `reply_id` after it, so a retried call after a lost response knows
a reply may already be on the host and looks for its marker before posting again.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from livereview.core.model import JobState, MRKey
from livereview.store import reply_claims
from livereview.store.replied_marks import DAEMON as DAEMON
from livereview.store.replied_marks import HOST as HOST
from livereview.store.replied_marks import TOOL as TOOL
from livereview.store.replied_marks import Replied as Replied
from livereview.store.replied_marks import answered as answered
from livereview.store.replied_marks import fold, job_key_range
from livereview.store.tables import ReplyJobRow, ToolReply


@dataclass(frozen=True, slots=True)
class ToolAttempt:
    """A tool reply begun (`reply_id` empty: the POST may or may not have landed) or done."""

    thread_id: str
    body_digest: str
    started_at: datetime
    reply_id: str
    replied_at: datetime | None


def replied_in(session: Session, key: MRKey) -> dict[str, Replied]:
    """The MR's answered comments by comment id (two indexed reads, no thread scan)."""
    low, high = job_key_range(key)
    jobs = session.exec(
        select(ReplyJobRow.host_message_id, ReplyJobRow.posted_message_id, ReplyJobRow.posted_at,
               ReplyJobRow.state)
        .where(col(ReplyJobRow.key) >= low, col(ReplyJobRow.key) < high,
               ReplyJobRow.host == key.host, ReplyJobRow.repo == key.repo,
               ReplyJobRow.iid == key.iid))
    tools = session.exec(
        select(ToolReply.comment_id, ToolReply.reply_id, ToolReply.replied_at)
        .where(ToolReply.host == key.host, ToolReply.repo == key.repo,
               ToolReply.iid == key.iid, col(ToolReply.replied_at).is_not(None)))
    return fold(key, jobs, tools)


def history(session: Session, *, repo: str | None = None, since: datetime | None = None,
            limit: int = 1000) -> list[Replied]:
    """Answered comments, oldest first (the newest `limit` of them)."""
    jobs = select(ReplyJobRow).where(ReplyJobRow.state == JobState.POSTED.value,
                                     col(ReplyJobRow.posted_at).is_not(None))
    tools = select(ToolReply).where(col(ToolReply.replied_at).is_not(None))
    if repo is not None:
        jobs, tools = jobs.where(ReplyJobRow.repo == repo), tools.where(ToolReply.repo == repo)
    if since is not None:
        jobs = jobs.where(col(ReplyJobRow.posted_at) >= since)
        tools = tools.where(col(ToolReply.replied_at) >= since)
    rows = [Replied(j.host, j.repo, j.iid, j.host_message_id, j.posted_message_id or "",
                    j.posted_at, DAEMON)
            for j in session.exec(jobs.order_by(col(ReplyJobRow.posted_at).desc()).limit(limit))
            if j.posted_at is not None]
    rows += [Replied(t.host, t.repo, t.iid, t.comment_id, t.reply_id or "", t.replied_at, TOOL)
             for t in session.exec(tools.order_by(col(ToolReply.replied_at).desc()).limit(limit))
             if t.replied_at is not None]
    rows.sort(key=lambda r: r.replied_at)
    return rows[-limit:]


def tool_holder(body_digest: str) -> str:
    """A tool reply's claimant: the same body again is the same call retried."""
    return f"tool:{body_digest}"


def _row(session: Session, key: MRKey, comment_id: str) -> ToolReply | None:
    return session.exec(select(ToolReply).where(
        ToolReply.host == key.host, ToolReply.repo == key.repo,
        ToolReply.comment_id == comment_id)).first()


def tool_attempt(session: Session, key: MRKey, comment_id: str) -> ToolAttempt | None:
    row = _row(session, key, comment_id)
    if row is None:
        return None
    return ToolAttempt(row.thread_id, row.body_digest, row.started_at, row.reply_id or "",
                       row.replied_at)


def begin_tool_reply(session: Session, key: MRKey, comment_id: str, thread_id: str,
                     body_digest: str, now: datetime) -> None:
    """Committed before the POST: from here on a reply may be on the host."""
    row = _row(session, key, comment_id) or ToolReply(
        host=key.host, repo=key.repo, iid=key.iid, comment_id=comment_id, thread_id=thread_id,
        body_digest=body_digest, started_at=now)
    if row.reply_id:
        raise ValueError(f"comment {comment_id} already has the tool reply {row.reply_id}")
    row.thread_id, row.body_digest, row.started_at = thread_id, body_digest, now
    session.add(row)


def finish_tool_reply(session: Session, key: MRKey, comment_id: str, reply_id: str,
                      now: datetime) -> None:
    row = _row(session, key, comment_id)
    if row is None:
        raise LookupError(f"no tool reply begun for comment {comment_id} of {key}")
    row.reply_id, row.replied_at = reply_id, now
    session.add(row)
    reply_claims.answer(session, key, comment_id, reply_claims.TOOL,
                        tool_holder(row.body_digest), reply_id, now)


def adopt_tool_reply(session: Session, key: MRKey, comment_id: str, thread_id: str,
                     body_digest: str, reply_id: str, now: datetime) -> None:
    """A reply found on the host by its marker, recorded as this tool call's."""
    if _row(session, key, comment_id) is None:  # a claim taken over, not our attempt
        begin_tool_reply(session, key, comment_id, thread_id, body_digest, now)
    finish_tool_reply(session, key, comment_id, reply_id, now)
