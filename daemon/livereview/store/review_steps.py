"""The transitions of a review run and of its findings, one function each (docs/DESIGN.md
§9): a wrong column or state is a type error, not a run-time surprise.

Every one is committed by its caller before the next I/O step; the `*_started` stamps
bracket a POST, so an attempt after a crash adopts the marked message instead of posting
it again.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from sqlmodel import Session

from livereview.core.model_runs import ReviewRun, ReviewState
from livereview.store.reviews import finding_row, run_row, to_model

Ended = Literal[ReviewState.SKIPPED, ReviewState.FAILED]


# -- the run's attempts -------------------------------------------------------------------

def finish(session: Session, /, run_id: int, now: datetime, state: Ended, *,
           attempts: int, reason: str) -> ReviewRun:
    """The run ends without a review: skipped (nothing to review) or failed (with why)."""
    row = run_row(session, run_id, now)
    row.state, row.attempts, row.last_error = state.value, attempts, reason[:500]
    return to_model(row)


def schedule_retry(session: Session, /, run_id: int, now: datetime, *, attempts: int,
                   reason: str, at: datetime) -> ReviewRun:
    row = run_row(session, run_id, now)
    row.attempts, row.last_error, row.next_attempt_at = attempts, reason[:500], at
    return to_model(row)


def count_done(session: Session, /, run_id: int, now: datetime) -> ReviewRun:
    """The attempt that finished the run counts, as a failed or skipped one does."""
    row = run_row(session, run_id, now)
    row.attempts, row.last_error = row.attempts + 1, ""
    return to_model(row)


# -- pending → reviewing -------------------------------------------------------------------

def start_ack(session: Session, /, run_id: int, now: datetime) -> ReviewRun:
    """An ack comment is about to be posted (hosts without reactions)."""
    row = run_row(session, run_id, now)
    row.ack_started_at = now
    return to_model(row)


def mark_acked(session: Session, /, run_id: int, now: datetime) -> ReviewRun:
    row = run_row(session, run_id, now)
    row.acked_at = now
    return to_model(row)


def start_review(session: Session, /, run_id: int, now: datetime, *, head_sha: str,
                 base_sha: str, start_sha: str, previous_run_id: int | None,
                 previous_head_sha: str) -> ReviewRun:
    """The MR's shas as read now, and the review it follows up (if any): reading starts."""
    row = run_row(session, run_id, now)
    row.state = ReviewState.REVIEWING.value
    row.head_sha, row.base_sha, row.start_sha = head_sha, base_sha, start_sha
    row.previous_run_id, row.previous_head_sha = previous_run_id, previous_head_sha
    return to_model(row)


# -- posting -------------------------------------------------------------------------------

def start_post(session: Session, /, run_id: int, now: datetime) -> ReviewRun:
    """The review (or its summary) is about to be posted: from now on it may be on the
    host."""
    row = run_row(session, run_id, now)
    row.post_started_at = now
    return to_model(row)


def mark_posted(session: Session, /, run_id: int, now: datetime, *, review_id: str,
                summary_message_id: str, verdict_applied: str | None = None) -> ReviewRun:
    """The review is on the host, with the ids its create response gave; a host that
    posts the verdict with the review (GitHub) says which it took."""
    row = run_row(session, run_id, now)
    row.review_id, row.summary_message_id, row.posted_at = review_id, summary_message_id, now
    if verdict_applied is not None:
        row.verdict_applied, row.verdict_at = verdict_applied, now
    return to_model(row)


def mark_verdict(session: Session, /, run_id: int, now: datetime, applied: str) -> ReviewRun:
    row = run_row(session, run_id, now)
    row.verdict_applied, row.verdict_at = applied, now
    return to_model(row)


def finish_posting(session: Session, /, run_id: int, now: datetime, *, notify: bool
                   ) -> ReviewRun:
    """Everything is on the host: the author is told next, or the run is done."""
    row = run_row(session, run_id, now)
    row.state = (ReviewState.NOTIFYING if notify else ReviewState.DONE).value
    row.completed_at = None if notify else now
    return to_model(row)


# -- notifying -----------------------------------------------------------------------------

def start_notice(session: Session, /, run_id: int, now: datetime) -> ReviewRun:
    row = run_row(session, run_id, now)
    row.notify_started_at = now
    return to_model(row)


def mark_notice(session: Session, /, run_id: int, now: datetime, message_id: str
                ) -> ReviewRun:
    row = run_row(session, run_id, now)
    row.notice_message_id = message_id
    return to_model(row)


def mark_notifiers(session: Session, /, run_id: int, now: datetime, done: str) -> ReviewRun:
    """The notifiers that confirmed delivery (space-separated names)."""
    row = run_row(session, run_id, now)
    row.notifiers_done = done
    return to_model(row)


def mark_done(session: Session, /, run_id: int, now: datetime) -> ReviewRun:
    row = run_row(session, run_id, now)
    row.state, row.completed_at = ReviewState.DONE.value, now
    return to_model(row)


# -- findings ------------------------------------------------------------------------------

def start_finding_post(session: Session, /, finding_id: int, now: datetime) -> None:
    finding_row(session, finding_id).post_started_at = now


def mark_finding_posted(session: Session, /, finding_id: int, message_id: str,
                        thread_id: str) -> None:
    row = finding_row(session, finding_id)
    row.message_id, row.thread_id = message_id, thread_id


def start_fix_note(session: Session, /, finding_id: int, now: datetime) -> None:
    """The "fixed by the new commits" note is about to be posted in the finding's thread."""
    finding_row(session, finding_id).fix_started_at = now


def mark_fixed(session: Session, /, finding_id: int, now: datetime) -> None:
    finding_row(session, finding_id).fixed_at = now
