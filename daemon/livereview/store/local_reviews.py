"""Local reviews (docs/DESIGN.md §14) ⇄ rows: the review, its threads and their messages.

Each function runs inside the caller's transaction (`store.transaction(fn, …)`). A thread
or review id that does not exist, or a thread of another review, is a LookupError whose
text can be shown as it is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime

from sqlmodel import Session, col, func, select

from livereview.core.local_model import (
    AuthorKind,
    Feedback,
    FileStat,
    LocalMessage,
    LocalReview,
    LocalThread,
    NewThread,
    RangeState,
    ReviewStatus,
    ThreadKind,
)
from livereview.store.tables import LocalMessageRow, LocalReviewRow, LocalThreadRow


def _files_json(files: Iterable[FileStat]) -> str:
    return json.dumps([[f.path, f.old_path, f.status, f.additions, f.deletions, f.binary]
                       for f in files])


def _files(text: str) -> tuple[FileStat, ...]:
    return tuple(FileStat(str(p), str(o), str(s), int(a), int(d), bool(b))
                 for p, o, s, a, d, b in json.loads(text))


# The branch under review has no column of its own (no migration for it yet): it rides in
# `range_spec` after a NUL, which no range can hold (local_git.Git.resolve refuses it).
_BRANCH_SEPARATOR = "\0"


def _range_column(at: RangeState) -> str:
    return f"{at.range_spec}{_BRANCH_SEPARATOR}{at.branch}" if at.branch else at.range_spec


def _message(row: LocalMessageRow) -> LocalMessage:
    assert row.id is not None
    return LocalMessage(row.id, row.thread_id, row.author, AuthorKind(row.author_kind),
                        row.body, row.created_at, tuple(row.reactions.split()))


def create(session: Session, repo: str, title: str, description: str, at: RangeState,
           threads: Sequence[NewThread], now: datetime) -> LocalReview:
    row = LocalReviewRow(
        repo=repo, title=title, description=description, range_spec=_range_column(at),
        base_sha=at.base_sha, head_sha=at.head_sha, worktree=at.worktree,
        status=ReviewStatus.PENDING.value, files=_files_json(at.files), created_at=now,
        updated_at=now)
    session.add(row)
    session.flush()
    assert row.id is not None
    for new in threads:
        add_thread(session, row.id, new, now)
    found = load(session, row.id)
    assert found is not None
    return found


def load(session: Session, review_id: int) -> LocalReview | None:
    row = session.get(LocalReviewRow, review_id)
    if row is None or row.id is None:
        return None
    messages: dict[int, list[LocalMessage]] = {}
    for m in session.exec(select(LocalMessageRow).where(LocalMessageRow.review_id == row.id)
                          .order_by(col(LocalMessageRow.id))):
        messages.setdefault(m.thread_id, []).append(_message(m))
    threads = tuple(
        LocalThread(id=t.id, kind=ThreadKind(t.kind), path=t.path, line=t.line, code=t.code,
                    resolved=t.resolved, messages=tuple(messages.get(t.id, ())),
                    created_at=t.created_at, number=t.number, old_line=t.old_line)
        for t in session.exec(select(LocalThreadRow).where(LocalThreadRow.review_id == row.id)
                              .order_by(col(LocalThreadRow.id)))
        if t.id is not None and t.number is not None)
    spec, _, branch = row.range_spec.partition(_BRANCH_SEPARATOR)
    return LocalReview(
        id=row.id, repo=row.repo, title=row.title, description=row.description,
        range=spec, base_sha=row.base_sha, head_sha=row.head_sha,
        worktree=row.worktree, status=ReviewStatus(row.status), files=_files(row.files),
        threads=threads, created_at=row.created_at, updated_at=row.updated_at,
        branch=branch)


def need(session: Session, review_id: int) -> LocalReview:
    review = load(session, review_id)
    if review is None:
        raise LookupError(f"no local review {review_id}")
    return review


def of_repo(session: Session, repo: str) -> list[LocalReview]:
    ids = session.exec(select(LocalReviewRow.id).where(LocalReviewRow.repo == repo)
                       .order_by(col(LocalReviewRow.id))).all()
    return [need(session, i) for i in ids if i is not None]


def _touch(session: Session, review_id: int, now: datetime) -> LocalReviewRow:
    row = session.get(LocalReviewRow, review_id)
    if row is None:
        raise LookupError(f"no local review {review_id}")
    row.updated_at = now
    session.add(row)
    return row


def add_thread(session: Session, review_id: int, new: NewThread, now: datetime) -> LocalThread:
    """A new thread, numbered after the review's last one (the unique index on (review,
    number) refuses a second writer's same number; writers are one at a time anyway)."""
    _touch(session, review_id, now)
    last = session.exec(select(func.max(LocalThreadRow.number))
                        .where(LocalThreadRow.review_id == review_id)).one()
    number = (last or 0) + 1
    row = LocalThreadRow(review_id=review_id, number=number, kind=new.kind.value,
                         path=new.path, line=new.line, old_line=new.old_line, code=new.code,
                         created_at=now)
    session.add(row)
    session.flush()
    assert row.id is not None
    first = add_message(session, review_id, row.id, new.author, new.author_kind, new.body, now)
    return LocalThread(id=row.id, kind=new.kind, path=new.path, line=new.line, code=new.code,
                       resolved=False, messages=(first,), created_at=now, number=number,
                       old_line=new.old_line)


def add_message(session: Session, review_id: int, thread_id: int, author: str,
                author_kind: AuthorKind, body: str, now: datetime) -> LocalMessage:
    thread = session.get(LocalThreadRow, thread_id)
    if thread is None or thread.review_id != review_id:
        raise LookupError(f"review {review_id} has no thread {thread_id}")
    _touch(session, review_id, now)
    row = LocalMessageRow(review_id=review_id, thread_id=thread_id, author=author,
                          author_kind=author_kind.value, body=body, created_at=now)
    session.add(row)
    session.flush()
    return _message(row)


def react(session: Session, review_id: int, message_id: int, emoji: str,
          now: datetime) -> None:
    row = session.get(LocalMessageRow, message_id)
    if row is None or row.review_id != review_id:
        raise LookupError(f"review {review_id} has no message {message_id}")
    if emoji not in row.reactions.split():
        _touch(session, review_id, now)
        row.reactions = f"{row.reactions} {emoji}".strip()
        session.add(row)


def set_status(session: Session, review_id: int, status: ReviewStatus,
               now: datetime) -> None:
    _touch(session, review_id, now).status = status.value


def set_resolved(session: Session, review_id: int, thread_id: int, resolved: bool,
                 now: datetime) -> None:
    thread = session.get(LocalThreadRow, thread_id)
    if thread is None or thread.review_id != review_id:
        raise LookupError(f"review {review_id} has no thread {thread_id}")
    _touch(session, review_id, now)
    thread.resolved = resolved
    session.add(thread)


def move_range(session: Session, review_id: int, at: RangeState,
               anchors: dict[int, tuple[int | None, str]], now: datetime) -> None:
    """The review now covers `at`; threads move to their new (line, code)."""
    row = _touch(session, review_id, now)
    row.range_spec, row.base_sha, row.head_sha = _range_column(at), at.base_sha, at.head_sha
    row.worktree, row.files = at.worktree, _files_json(at.files)
    for thread_id, (line, code) in anchors.items():
        thread = session.get(LocalThreadRow, thread_id)
        if thread is not None and thread.review_id == review_id:
            thread.line, thread.code = line, code
            session.add(thread)


def take_feedback(session: Session, review_id: int, kinds: frozenset[AuthorKind],
                  deliver: bool = True) -> Feedback:
    """What people said since feedback was last handed out, marked handed out (`deliver`)."""
    row = session.get(LocalReviewRow, review_id)
    if row is None:
        raise LookupError(f"no local review {review_id}")
    messages = tuple(_message(m) for m in session.exec(
        select(LocalMessageRow)
        .where(LocalMessageRow.review_id == review_id,
               col(LocalMessageRow.id) > row.delivered_message_id,
               col(LocalMessageRow.author_kind).in_([k.value for k in kinds]))
        .order_by(col(LocalMessageRow.id))))
    status = ReviewStatus(row.status) if row.status != row.delivered_status else None
    if deliver and (messages or status is not None):
        if messages:
            row.delivered_message_id = messages[-1].id
        row.delivered_status = row.status
        session.add(row)
    return Feedback(review_id, status, messages)


def change_mark(session: Session, review_id: int) -> str:
    """What changes whenever the review does, read without loading it (one row and one
    index lookup): a watcher polls it (the web face's live updates, DESIGN §11). Every write
    touches `updated_at`; the last message id also tells apart two writes whose clocks,
    in two processes, read the same instant."""
    row = session.get(LocalReviewRow, review_id)
    if row is None:
        raise LookupError(f"no local review {review_id}")
    last = session.exec(select(func.max(LocalMessageRow.id))
                        .where(LocalMessageRow.review_id == review_id)).one()
    return f"{row.updated_at.isoformat()}/{last or 0}"
