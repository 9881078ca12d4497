"""Review runs, their findings and files: the persisted state machine of review/runner.py.

Like reply jobs, every transition is committed by the caller before the next I/O step; the
run key is unique (a second ask for the same thing is a no-op), and every id a host gave
for what a run posted is stored from its create response.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert
from sqlmodel import Session, col, select

from livereview.core.model import MRKey
from livereview.core.model_runs import (
    AwaitingReview,
    ReviewRequest,
    ReviewRun,
    ReviewState,
    ReviewTrigger,
    StoredFinding,
)
from livereview.store.tables import (
    AIMemory,
    ReplyJobRow,
    ReviewFileRow,
    ReviewFindingRow,
    ReviewRunRow,
)

OPEN = [s.value for s in ReviewState if s.open]
_FLAGS = {"ack_started": "ack_started_at", "acked": "acked_at",
          "post_started": "post_started_at", "posted": "posted_at",
          "verdict_started": "verdict_started_at", "verdict_done": "verdict_at",
          "notify_started": "notify_started_at"}


def to_model(row: ReviewRunRow) -> ReviewRun:
    assert row.id is not None
    plain: dict[str, Any] = {name: getattr(row, name) for name in (
        "key", "token", "trigger_thread_id", "trigger_message_id", "explicit", "attempts",
        "head_sha", "base_sha", "start_sha", "previous_run_id", "previous_head_sha",
        "files_done", "files_reviewed", "skipped_total", "notes", "knowledge",
        "not_raised_again",
        "verdict", "verdict_applied", "review_id", "summary_message_id", "notice_message_id",
        "notifiers_done", "last_error")}
    flags: dict[str, Any] = {flag: getattr(row, column) is not None
                             for flag, column in _FLAGS.items()}
    return ReviewRun(id=row.id, mr=MRKey(row.host, row.repo, row.iid),
                     trigger=ReviewTrigger(row.trigger), state=ReviewState(row.state),
                     **plain, **flags)


def finding_model(row: ReviewFindingRow) -> StoredFinding:
    assert row.id is not None
    return StoredFinding(
        id=row.id, run_id=row.run_id, number=row.number, severity=row.severity,
        path=row.path, line=row.line, side=row.side, old_path=row.old_path,
        old_line=row.old_line, body=row.body, fingerprint=row.fingerprint,
        placement=row.placement, category=row.category, confidence=row.confidence,
        post_started=row.post_started_at is not None,
        message_id=row.message_id, thread_id=row.thread_id,
        fix_started=row.fix_started_at is not None, fixed=row.fixed_at is not None)


def enqueue(session: Session, requests: Iterable[ReviewRequest], now: datetime
            ) -> list[tuple[int, str]]:
    """A run per request whose key is new; returns (id, key) of the runs created."""
    wanted = {r.key: r for r in requests}
    if not wanted:
        return []
    existing = set(session.exec(select(ReviewRunRow.key)
                                .where(col(ReviewRunRow.key).in_(list(wanted)))))
    rows = [ReviewRunRow(
        key=key, token=secrets.token_hex(8), host=r.mr.host, repo=r.mr.repo, iid=r.mr.iid,
        trigger=r.trigger.value, trigger_thread_id=r.thread_id,
        trigger_message_id=r.detail if r.trigger in (ReviewTrigger.MENTION, ReviewTrigger.REPLY)
        else "",
        explicit=r.explicit, state=ReviewState.PENDING.value, next_attempt_at=now,
        created_at=now, updated_at=now) for key, r in wanted.items() if key not in existing]
    session.add_all(rows)
    session.flush()
    return [(row.id, row.key) for row in rows if row.id is not None]


def awaiting(session: Session, key: MRKey) -> AwaitingReview | None:
    """The MR's last review if it finished with changes requested and no run of the MR
    is open (one follow-up at a time: a reply during a run asks for nothing more)."""
    last = session.exec(
        select(ReviewRunRow)
        .where(ReviewRunRow.host == key.host, ReviewRunRow.repo == key.repo,
               ReviewRunRow.iid == key.iid,
               col(ReviewRunRow.state).in_([*OPEN, ReviewState.DONE.value]))
        .order_by(col(ReviewRunRow.id).desc()).limit(1)).first()
    if last is None or last.state != ReviewState.DONE.value or not last.review_id \
            or last.verdict != "changes_requested" or last.completed_at is None:
        return None
    return AwaitingReview(last.review_id, last.summary_message_id, last.completed_at)


def unfinished(session: Session, repo: str | None = None) -> list[ReviewRunRow]:
    """Runs still open, and those that gave up: what `livereview pending` lists, with
    why (`last_error`)."""
    query = (select(ReviewRunRow)
             .where(col(ReviewRunRow.state).in_([*OPEN, ReviewState.FAILED.value]))
             .order_by(col(ReviewRunRow.id)))
    if repo is not None:
        query = query.where(ReviewRunRow.repo == repo)
    return list(session.exec(query))


def by_key(session: Session, key: str) -> ReviewRun | None:
    row = session.exec(select(ReviewRunRow).where(ReviewRunRow.key == key)).first()
    return to_model(row) if row else None


def due(session: Session, now: datetime, limit: int, exclude: Iterable[int] = (),
        only: MRKey | None = None) -> list[ReviewRun]:
    """Open runs whose next attempt is due (of the MR `only`, when given)."""
    of_mr = () if only is None else (ReviewRunRow.host == only.host,
                                     ReviewRunRow.repo == only.repo, ReviewRunRow.iid == only.iid)
    rows = session.exec(
        select(ReviewRunRow)
        .where(col(ReviewRunRow.state).in_(OPEN), ReviewRunRow.next_attempt_at <= now,
               col(ReviewRunRow.id).not_in(list(exclude)), *of_mr)
        .order_by(col(ReviewRunRow.next_attempt_at), col(ReviewRunRow.id)).limit(limit))
    found = []
    for row in rows:
        try:
            found.append(to_model(row))
        except ValueError as exc:  # a state or trigger a newer version wrote
            row.state, row.updated_at = ReviewState.FAILED.value, now
            row.last_error = f"unreadable review row: {exc}"[:500]
            session.add(row)
    return found


def get(session: Session, run_id: int) -> ReviewRun:
    row = session.get(ReviewRunRow, run_id)
    if row is None:
        raise LookupError(f"review run {run_id} vanished")
    return to_model(row)


def previous(session: Session, mr: MRKey, before: int) -> ReviewRun | None:
    """The last review of the MR that finished before run `before` (a follow-up's base)."""
    row = session.exec(
        select(ReviewRunRow)
        .where(ReviewRunRow.host == mr.host, ReviewRunRow.repo == mr.repo,
               ReviewRunRow.iid == mr.iid, ReviewRunRow.state == ReviewState.DONE.value,
               col(ReviewRunRow.id) < before)
        .order_by(col(ReviewRunRow.id).desc())).first()
    return to_model(row) if row else None


def add_batch(session: Session, /, run_id: int, now: datetime, *,
              findings: Sequence[dict[str, Any]], files: Sequence[dict[str, Any]],
              files_done: int, reviewed: int, skipped: int, note: str = "",
              knowledge: Sequence[dict[str, Any]] = ()) -> ReviewRun:
    """One batch of files read: its findings, its files and the cursor, together — a crash
    resumes after the last batch stored, never storing a finding twice."""
    row = session.get(ReviewRunRow, run_id)
    if row is None:
        raise LookupError(f"review run {run_id} vanished")
    if findings:
        start = session.exec(select(func.count()).select_from(ReviewFindingRow)
                             .where(ReviewFindingRow.run_id == run_id)).one()
        session.execute(insert(ReviewFindingRow), [
            {**f, "run_id": run_id, "number": start + i + 1, "host": row.host,
             "repo": row.repo, "iid": row.iid} for i, f in enumerate(findings)])
    if files:
        session.execute(insert(ReviewFileRow), [{**f, "run_id": run_id} for f in files])
    row.files_done = files_done
    row.files_reviewed += reviewed
    row.skipped_total += skipped
    if note:
        row.notes = json.dumps([*json.loads(row.notes or "[]"), note][:5])
    if knowledge:
        row.knowledge = json.dumps(merged_knowledge(json.loads(row.knowledge or "[]"),
                                                    knowledge))
    row.updated_at = now
    session.add(row)
    return to_model(row)


def merged_knowledge(before: Sequence[dict[str, Any]], batch: Sequence[dict[str, Any]]
                     ) -> list[dict[str, Any]]:
    """The run's references so far and a batch's, one entry per source with the highest
    relevance it had in any batch, most relevant first."""
    by_source: dict[str, dict[str, Any]] = {}
    for entry in [*before, *batch]:
        kept = by_source.get(entry["source"])
        if kept is None or entry["relevance"] > kept["relevance"]:
            by_source[entry["source"]] = dict(entry)
    return sorted(by_source.values(), key=lambda e: -float(e["relevance"]))


def findings(session: Session, run_id: int) -> list[StoredFinding]:
    rows = session.exec(select(ReviewFindingRow).where(ReviewFindingRow.run_id == run_id)
                        .order_by(col(ReviewFindingRow.number)))
    return [finding_model(r) for r in rows]


def set_placements(session: Session, /, placements: dict[int, str]) -> None:
    for finding_id, placement in placements.items():
        finding_row(session, finding_id).placement = placement


def finding_row(session: Session, finding_id: int) -> ReviewFindingRow:
    """The finding's row, about to change."""
    row = session.get(ReviewFindingRow, finding_id)
    if row is None:
        raise LookupError(f"review finding {finding_id} vanished")
    session.add(row)
    return row


def earlier(session: Session, mr: MRKey, before: int) -> list[StoredFinding]:
    """Findings earlier runs of the MR posted in threads of their own, not yet fixed."""
    rows = session.exec(
        select(ReviewFindingRow)
        .where(ReviewFindingRow.host == mr.host, ReviewFindingRow.repo == mr.repo,
               ReviewFindingRow.iid == mr.iid, col(ReviewFindingRow.run_id) < before,
               ReviewFindingRow.placement == "inline", ReviewFindingRow.thread_id != "",
               col(ReviewFindingRow.fixed_at).is_(None)))
    return [finding_model(r) for r in rows]


def fixing(session: Session, run_id: int) -> list[StoredFinding]:
    """Earlier findings this run found fixed: their threads get resolved."""
    rows = session.exec(select(ReviewFindingRow)
                        .where(ReviewFindingRow.fixed_by_run_id == run_id)
                        .order_by(col(ReviewFindingRow.id)))
    return [finding_model(r) for r in rows]


def digests(session: Session, run_id: int) -> dict[str, str]:
    rows = session.exec(select(ReviewFileRow.path, ReviewFileRow.digest)
                        .where(ReviewFileRow.run_id == run_id, ReviewFileRow.skipped == ""))
    return dict(rows.all())


def skipped_files(session: Session, run_id: int, limit: int) -> list[tuple[str, str]]:
    rows = session.exec(select(ReviewFileRow.path, ReviewFileRow.skipped)
                        .where(ReviewFileRow.run_id == run_id, ReviewFileRow.skipped != "")
                        .order_by(col(ReviewFileRow.id)).limit(limit))
    return [(p, s) for p, s in rows]


def conceded(session: Session, mr: MRKey) -> set[str]:
    """Ids of the bot's replies on the MR that conceded a point or proposed a lesson."""
    rows = session.exec(
        select(ReplyJobRow.posted_message_id, ReplyJobRow.answer_meta)
        .where(ReplyJobRow.host == mr.host, ReplyJobRow.repo == mr.repo,
               ReplyJobRow.iid == mr.iid, col(ReplyJobRow.posted_message_id).is_not(None)))
    found = set()
    for message_id, meta in rows:
        try:
            if message_id and json.loads(meta or "{}").get("concede"):
                found.add(message_id)
        except (ValueError, AttributeError):
            continue
    lessons = session.exec(select(AIMemory.source_message_id)
                           .where(AIMemory.source_message_id != ""))
    return found | {m for m in lessons if m}


def finding_in_thread(session: Session, mr: MRKey, thread_id: str
                      ) -> tuple[StoredFinding, str] | None:
    """The finding a thread was opened for, with its run's verdict (reply context)."""
    row = session.exec(
        select(ReviewFindingRow, ReviewRunRow.verdict)
        .join(ReviewRunRow, col(ReviewRunRow.id) == col(ReviewFindingRow.run_id))
        .where(ReviewFindingRow.host == mr.host, ReviewFindingRow.repo == mr.repo,
               ReviewFindingRow.iid == mr.iid, ReviewFindingRow.thread_id == thread_id)
    ).first()
    return (finding_model(row[0]), row[1]) if row else None


def counts(session: Session) -> dict[str, int]:
    rows = session.exec(select(ReviewRunRow.state, func.count()).group_by(ReviewRunRow.state))
    return {str(state): int(n) for state, n in rows}


def decided(session: Session, /, run_id: int, now: datetime, *, placements: dict[int, str],
            fixed: Sequence[int], verdict: str, not_raised_again: int) -> ReviewRun:
    """The review's decision, in one transaction: what is posted, which earlier findings
    this run resolves as fixed, the verdict; the run moves on to posting."""
    set_placements(session, placements)
    for finding_id in fixed:
        finding_row(session, finding_id).fixed_by_run_id = run_id
    row = run_row(session, run_id, now)
    row.state, row.verdict, row.not_raised_again = (
        ReviewState.POSTING.value, verdict, not_raised_again)
    return to_model(row)


def run_row(session: Session, run_id: int, now: datetime) -> ReviewRunRow:
    """The run's row, about to change at `now`."""
    row = session.get(ReviewRunRow, run_id)
    if row is None:
        raise LookupError(f"review run {run_id} vanished")
    row.updated_at = now
    session.add(row)
    return row
