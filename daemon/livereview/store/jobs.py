"""Reply jobs: the persisted state machine of docs/DESIGN.md §4.

Every transition is committed by the caller before the next I/O step, so a crash at any
point resumes from the last committed state. The job key is unique: a second trigger for
the same message is a no-op.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from typing import Literal

from sqlalchemy import func
from sqlmodel import Session, col, select

from livereview.core.model import JobReason, JobState, Lesson, MRKey, ReplyJob, ReplyRequest
from livereview.store import lessons as lesson_rows
from livereview.store import reply_claims
from livereview.store.tables import ReplyJobRow


def to_model(row: ReplyJobRow) -> ReplyJob:
    assert row.id is not None
    return ReplyJob(
        id=row.id, key=row.key, mr=MRKey(row.host, row.repo, row.iid),
        thread_id=row.host_thread_id, message_id=row.host_message_id,
        reason=JobReason(row.reason), state=JobState(row.state), attempts=row.attempts,
        comment_created_at=row.comment_created_at, answer=row.answer,
        answer_meta=row.answer_meta,
        post_started=row.post_started_at is not None, last_error=row.last_error,
        ack_started=row.ack_started_at is not None,
    )


def enqueue(session: Session, requests: Iterable[ReplyRequest], now: datetime
            ) -> list[tuple[int, str]]:
    """Insert a job per request whose key is new; returns (id, key) of the jobs inserted."""
    wanted = {r.key: r for r in requests}
    if not wanted:
        return []
    existing = set(session.exec(select(ReplyJobRow.key).where(col(ReplyJobRow.key).in_(wanted))))
    rows = [ReplyJobRow(
        key=key, host=request.mr.host, repo=request.mr.repo, iid=request.mr.iid,
        host_thread_id=request.thread_id, host_message_id=request.message_id,
        reason=request.reason, state=JobState.PENDING, next_attempt_at=now,
        comment_created_at=request.comment_created_at, created_at=now, updated_at=now,
    ) for key, request in wanted.items() if key not in existing]
    session.add_all(rows)
    session.flush()  # assigns the ids, so every log line of a job can carry its job_id
    return [(row.id, row.key) for row in rows if row.id is not None]


def within_edit_cap(session: Session, requests: list[ReplyRequest], cap: int
                    ) -> tuple[list[ReplyRequest], list[ReplyRequest]]:
    """(the requests to keep, the answers to edits over `cap`): an edited question gets at
    most `cap` new answers, counting the edit jobs already in the store (posted or open,
    whichever replica made them) as well as those asked now (core/edits.py)."""
    edits = [r for r in requests if r.reason is JobReason.EDITED_QUESTION]
    if not edits:
        return requests, []
    ids = sorted({r.message_id for r in edits})
    counted: dict[tuple[MRKey, str], set[str]] = {}
    for mr in {r.mr for r in edits}:  # one MR per ingest
        for message_id, key in session.exec(
                select(ReplyJobRow.host_message_id, ReplyJobRow.key)
                .where(ReplyJobRow.host == mr.host, ReplyJobRow.repo == mr.repo,
                       ReplyJobRow.iid == mr.iid,
                       ReplyJobRow.reason == JobReason.EDITED_QUESTION.value,
                       col(ReplyJobRow.host_message_id).in_(ids),
                       col(ReplyJobRow.state).not_in([JobState.SKIPPED.value,
                                                      JobState.FAILED.value]))):
            counted.setdefault((mr, message_id), set()).add(key)
    kept: list[ReplyRequest] = []
    over: list[ReplyRequest] = []
    for request in requests:
        keys = counted.setdefault((request.mr, request.message_id), set())
        if request.reason is not JobReason.EDITED_QUESTION or request.key in keys:
            kept.append(request)
        elif len(keys) >= cap:
            over.append(request)
        else:
            keys.add(request.key)
            kept.append(request)
    return kept, over


def due(session: Session, now: datetime, limit: int, exclude: Iterable[int] = (),
        only: MRKey | None = None) -> list[ReplyJob]:
    """Open jobs whose next attempt is due (of the MR `only`, when given). A row this
    version cannot read (a reason or state a newer version wrote, a hand edit) is failed
    with the reason, not a crash of every run."""
    open_states = [s.value for s in JobState if s.open]
    of_mr = () if only is None else (ReplyJobRow.host == only.host,
                                     ReplyJobRow.repo == only.repo, ReplyJobRow.iid == only.iid)
    rows = session.exec(
        select(ReplyJobRow)
        .where(col(ReplyJobRow.state).in_(open_states), ReplyJobRow.next_attempt_at <= now,
               col(ReplyJobRow.id).not_in(list(exclude)), *of_mr)
        .order_by(col(ReplyJobRow.next_attempt_at), col(ReplyJobRow.id))
        .limit(limit)
    )
    found = []
    for row in rows:
        try:
            found.append(to_model(row))
        except ValueError as exc:
            row.state, row.updated_at = JobState.FAILED, now
            row.last_error = f"unreadable job row: {exc}"[:500]
            session.add(row)
    return found


def next_due_at(session: Session) -> datetime | None:
    open_states = [s.value for s in JobState if s.open]
    return session.exec(
        select(func.min(ReplyJobRow.next_attempt_at)).where(col(ReplyJobRow.state).in_(open_states))
    ).first()


def open_mrs(session: Session, host: str) -> set[MRKey]:
    """MRs with jobs still in flight: they are polled hot until the jobs finish."""
    open_states = [s.value for s in JobState if s.open]
    rows = session.exec(
        select(ReplyJobRow.repo, ReplyJobRow.iid)
        .where(ReplyJobRow.host == host, col(ReplyJobRow.state).in_(open_states))
    )
    return {MRKey(host, repo, iid) for repo, iid in rows}


def get(session: Session, job_id: int) -> ReplyJob:
    row = session.get(ReplyJobRow, job_id)
    if row is None:
        raise LookupError(f"reply job {job_id} vanished")
    return to_model(row)


def _row(session: Session, job_id: int, now: datetime) -> ReplyJobRow:
    """The job's row, about to change at `now`."""
    row = session.get(ReplyJobRow, job_id)
    if row is None:
        raise LookupError(f"reply job {job_id} vanished")
    row.updated_at = now
    session.add(row)
    return row


# The transitions of docs/DESIGN.md §4, one function each: a wrong column or state is a
# type error, not a run-time surprise.

def start_ack(session: Session, /, job_id: int, now: datetime) -> ReplyJob:
    """An ack comment is about to be posted (hosts without reactions): adopt it after a
    crash instead of posting it twice."""
    row = _row(session, job_id, now)
    row.ack_started_at = now
    return to_model(row)


def mark_acked(session: Session, /, job_id: int, now: datetime) -> ReplyJob:
    row = _row(session, job_id, now)
    row.state, row.acked_at = JobState.ACKED, now
    return to_model(row)


def mark_answered(session: Session, /, job_id: int, now: datetime, *, answer: str,
                  meta: str, lessons_used: str) -> ReplyJob:
    row = _row(session, job_id, now)
    row.state, row.answer, row.answer_meta, row.lessons_used = (
        JobState.ANSWERED, answer, meta, lessons_used)
    return to_model(row)


def start_post(session: Session, /, job_id: int, now: datetime) -> ReplyJob:
    """The answer's POST is about to be sent: from now on it may be on the host."""
    row = _row(session, job_id, now)
    row.post_started_at = now
    return to_model(row)


def defer(session: Session, /, job_id: int, now: datetime, until: datetime) -> ReplyJob:
    """Not an attempt: the job waits (e.g. while a tool's claim on its comment lasts)."""
    row = _row(session, job_id, now)
    row.next_attempt_at = until
    return to_model(row)


def schedule_retry(session: Session, /, job_id: int, now: datetime, *, attempts: int,
                   reason: str, at: datetime) -> ReplyJob:
    row = _row(session, job_id, now)
    row.attempts, row.last_error, row.next_attempt_at = attempts, reason, at
    return to_model(row)


def finish(session: Session, /, job_id: int, now: datetime,
           state: Literal[JobState.SKIPPED, JobState.FAILED], *, attempts: int,
           reason: str) -> ReplyJob:
    """The job ends without a reply: skipped (nothing to answer) or failed (with why)."""
    row = _row(session, job_id, now)
    row.state, row.attempts, row.last_error = state, attempts, reason
    return to_model(row)


def counts(session: Session) -> dict[str, int]:
    rows = session.exec(select(ReplyJobRow.state, func.count()).group_by(ReplyJobRow.state))
    return {str(state): int(n) for state, n in rows}


def listing(session: Session, *, states: Iterable[str] | None = None,
            repo: str | None = None, mr: MRKey | None = None) -> list[ReplyJobRow]:
    query = select(ReplyJobRow).order_by(col(ReplyJobRow.id))
    if states is not None:
        query = query.where(col(ReplyJobRow.state).in_(list(states)))
    if repo is not None:
        query = query.where(ReplyJobRow.repo == repo)
    if mr is not None:
        query = query.where(ReplyJobRow.host == mr.host, ReplyJobRow.repo == mr.repo,
                            ReplyJobRow.iid == mr.iid)
    return list(session.exec(query))


def recent_posted(session: Session, limit: int) -> list[ReplyJobRow]:
    """The `limit` latest posted replies, newest first: the console's recent answers, read
    with a LIMIT so the page costs the same with 100 or 1 000 000 jobs stored."""
    query = (select(ReplyJobRow).where(col(ReplyJobRow.posted_at).is_not(None))
             .order_by(col(ReplyJobRow.posted_at).desc(), col(ReplyJobRow.id).desc())
             .limit(limit))
    return list(session.exec(query))


def by_posted_ids(session: Session, message_ids: Iterable[str]) -> list[ReplyJobRow]:
    """The reply jobs whose posted reply is one of `message_ids` (a lesson's source)."""
    wanted = sorted(set(message_ids))
    if not wanted:
        return []
    query = select(ReplyJobRow).where(col(ReplyJobRow.posted_message_id).in_(wanted))
    return list(session.exec(query))


def mark_posted(session: Session, /, job_id: int, message_id: str, now: datetime, *,
                citations: list[tuple[str, str, str, float]], lesson: Lesson | None
                ) -> Lesson | None:
    """The reply is on the host: record it, its citations and — if the bot conceded — the
    lesson it proposed (its source is the posted reply), in one transaction. Returns the
    lesson if it is new (a duplicate is merged into the existing one)."""
    row = session.get(ReplyJobRow, job_id)
    if row is None:
        raise LookupError(f"reply job {job_id} vanished")
    row.state, row.posted_message_id, row.posted_at, row.updated_at = (
        JobState.POSTED, message_id, now, now)
    row.attempts += 1  # the run that posted it counts, as a failed or skipped one does
    session.add(row)
    reply_claims.answer(session, MRKey(row.host, row.repo, row.iid), row.host_message_id,
                        reply_claims.DAEMON, f"job:{row.id}", message_id, now)
    lesson_rows.cite(session, row.host, row.repo, message_id, citations, now)
    if lesson is None:
        return None
    stored, new = lesson_rows.propose(session, replace(lesson, source_message_id=message_id),
                                      now)
    return stored if new else None
