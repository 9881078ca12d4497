"""Lessons (ai_memory rows) and knowledge references ⇄ model; governance transitions."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, col, select

from livereview.core.lesson_file import FIELDS
from livereview.core.lessons import STATUSES, duplicate_of
from livereview.core.model import Lesson, MRKey
from livereview.store.tables import AIMemory, KnowledgeRef, ReplyJobRow

EXPORT_FIELDS = FIELDS  # what `lessons import` reads back


def _model(row: AIMemory) -> Lesson:
    assert row.id is not None
    return Lesson(key=row.key, value=row.value, scope=row.scope, status=row.status,
                  source_message_id=row.source_message_id, id=row.id,
                  created_by=row.created_by)


def everything(session: Session, status: str | None = None) -> list[Lesson]:
    query = select(AIMemory).order_by(col(AIMemory.id))
    if status is not None:
        query = query.where(AIMemory.status == status)
    return [_model(row) for row in session.exec(query)]


def get(session: Session, lesson_id: int) -> Lesson | None:
    row = session.get(AIMemory, lesson_id)
    return _model(row) if row else None


def propose(session: Session, lesson: Lesson, now: datetime) -> tuple[Lesson, bool]:
    """Store a candidate, or merge it into the same principle already known in its scope.
    Returns the stored lesson and whether it was new."""
    twin = duplicate_of(lesson, everything(session))
    if twin is not None:
        row = session.get(AIMemory, twin.id)
        assert row is not None
        if len(lesson.value) > len(row.value):  # keep the more complete wording
            row.value = lesson.value
        row.updated_at = now
        session.add(row)
        return _model(row), False
    row = AIMemory(key=lesson.key, value=lesson.value, scope=lesson.scope,
                   status=lesson.status, source_message_id=lesson.source_message_id,
                   created_by=lesson.created_by, created_at=now, updated_at=now)
    session.add(row)
    session.flush()
    return _model(row), True


def set_status(session: Session, lesson_id: int, status: str, now: datetime) -> Lesson:
    if status not in STATUSES:
        raise ValueError(f"unknown lesson status {status!r}")
    row = session.get(AIMemory, lesson_id)
    if row is None:
        raise LookupError(f"no lesson {lesson_id}")
    row.status, row.updated_at = status, now
    session.add(row)
    return _model(row)


def export(session: Session) -> list[dict[str, str]]:
    return [{name: str(getattr(lesson, name)) for name in EXPORT_FIELDS}
            for lesson in everything(session)]


def import_(session: Session, lessons: list[Lesson], now: datetime) -> tuple[int, int]:
    """Add lessons read from a file (core/lesson_file.py, checked there); returns (added,
    merged): the same principle in the same scope merges into the one known."""
    added = merged = 0
    for lesson in lessons:
        _, new = propose(session, lesson, now)
        added, merged = added + new, merged + (not new)
    return added, merged


def cite(session: Session, host: str, repo: str, message_id: str,
         citations: list[tuple[str, str, str, float]], now: datetime) -> None:
    """What a posted reply cited: (ref, title, kind, relevance) each."""
    session.add_all(KnowledgeRef(host=host, repo=repo, host_message_id=message_id, url=ref,
                                 title=title, kind=kind, relevance=relevance, created_at=now)
                    for ref, title, kind, relevance in citations)


def citations_of(session: Session, message_id: str) -> list[KnowledgeRef]:
    return list(session.exec(select(KnowledgeRef).where(
        KnowledgeRef.host_message_id == message_id)))


def watched_concessions(session: Session, host: str) -> dict[MRKey, frozenset[str]]:
    """Per MR of `host`: the bot's concessions whose proposed lesson a 👎 may still archive
    (their award emoji are read when the MR is fetched)."""
    # The concession is a reply the bot posted: its job names the MR.
    rows = session.exec(
        select(ReplyJobRow.repo, ReplyJobRow.iid, AIMemory.source_message_id)
        .join(AIMemory, col(AIMemory.source_message_id) == col(ReplyJobRow.posted_message_id))
        .where(ReplyJobRow.host == host, AIMemory.status == "proposed"))
    watched: dict[MRKey, set[str]] = {}
    for repo, iid, message_id in rows:
        watched.setdefault(MRKey(host, repo, iid), set()).add(message_id)
    return {key: frozenset(ids) for key, ids in watched.items()}


def archive_from(session: Session, source_message_ids: set[str], now: datetime
                 ) -> list[Lesson]:
    """Archive the proposed lessons whose concession a human turned down (👎)."""
    rows = session.exec(select(AIMemory).where(
        col(AIMemory.source_message_id).in_(source_message_ids), AIMemory.status == "proposed"))
    archived = []
    for row in rows:
        row.status, row.updated_at = "archived", now
        session.add(row)
        archived.append(_model(row))
    return archived
