"""Writing a fetched snapshot over the stored one: only what changed, in bulk.

A hot MR is re-ingested whenever a note is added. Rewriting every row each time cost a
100 000-note thread its whole size per new note; now an unchanged thread costs a
comparison, a thread that grew costs the new rows, and only a thread whose history
changed (a note removed or reordered) is rewritten — that thread alone. Rows go in as
one executemany per table (Core inserts), not one ORM object per note.

The caller passes the stored snapshot it diffed against, loaded by the same poller that
writes here: conversations have one writer (the MR's poller), so it is still current.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, insert
from sqlmodel import Session, col, delete, select, update

from livereview.core.model import ActorKind, Event, Identity, Message, Snapshot, Thread
from livereview.store.tables import EventRow, MRCommit, MRMessage, MRReaction, MRThread

CHUNK = 2_000  # rows per executemany


def _actor_kind(message: Message, identity: Identity) -> ActorKind:
    if message.system:
        return ActorKind.SYSTEM
    if identity.is_me(message.author):
        return ActorKind.SELF
    return ActorKind.BOT if message.author.bot else ActorKind.HUMAN


def _message_row(cid: int, message: Message, position: int, previous: str | None,
                 identity: Identity) -> dict[str, Any]:
    return {"conversation_id": cid, "position": position, "host_message_id": message.id,
            "host_thread_id": message.thread_id, "in_reply_to": previous,
            "author_id": message.author.id, "author_username": message.author.username,
            "author_name": message.author.name, "author_bot": message.author.bot,
            "actor_kind": _actor_kind(message, identity),
            "kind": "system" if message.system else "comment", "body": message.body,
            "created_at": message.created_at, "updated_at": message.updated_at}


def _thread_row(cid: int, thread: Thread, position: int) -> dict[str, Any]:
    a = thread.anchor
    return {"conversation_id": cid, "position": position, "host_thread_id": thread.id,
            "individual": thread.individual, "resolvable": thread.resolvable,
            "resolved": thread.resolved,
            "new_path": a.new_path if a else None, "old_path": a.old_path if a else None,
            "new_line": a.new_line if a else None, "old_line": a.old_line if a else None,
            "base_sha": a.base_sha if a else None, "start_sha": a.start_sha if a else None,
            "head_sha": a.head_sha if a else None}


_INSERTS = {table: insert(table) for table in (EventRow, MRCommit, MRMessage, MRReaction,
                                                MRThread)}


def _bulk(session: Session, table: Any, rows: Sequence[dict[str, Any]]) -> None:
    """One executemany through Core (the ORM's bulk path costs a third more per row), of a
    statement built once: building it for every call of every MR read was a tenth of the
    store's CPU at first sight (bench figure 16)."""
    if rows:
        session.connection().execute(_INSERTS[table], list(rows))


def _reaction_rows(cid: int, message: Message) -> list[dict[str, Any]]:
    return [{"conversation_id": cid, "host_message_id": message.id, "host_reaction_id": r.id,
             "name": r.name, "user_id": r.user.id, "username": r.user.username,
             "created_at": r.created_at}
            for r in message.reactions]


def _insert_messages(session: Session, cid: int, messages: Sequence[Message], first: int,
                     previous: str | None, identity: Identity) -> None:
    """Insert rows for `messages`, a chunk at a time (the rows of a 100 000-note thread
    would take more memory than its messages)."""
    for start in range(0, len(messages), CHUNK):
        rows: list[dict[str, Any]] = []
        reactions: list[dict[str, Any]] = []
        for i, message in enumerate(messages[start: start + CHUNK], first + start):
            rows.append(_message_row(cid, message, i, previous, identity))
            reactions += _reaction_rows(cid, message)
            previous = message.id
        _bulk(session, MRMessage, rows)
        _bulk(session, MRReaction, reactions)


def _delete_thread_messages(session: Session, cid: int, thread: Thread) -> None:
    """The rows of `thread`'s messages — by thread as well as by id: a message that moved
    to another thread (its parent was deleted) keeps the row, and the reactions, that the
    other thread wrote."""
    chosen = [m.id for m in thread.messages]
    for start in range(0, len(chosen), 500):  # bounded IN lists
        batch = chosen[start: start + 500]
        session.connection().execute(delete(MRMessage).where(col(MRMessage.conversation_id) == cid,
                                             col(MRMessage.host_thread_id) == thread.id,
                                             col(MRMessage.host_message_id).in_(batch)))
        still_there = select(MRMessage.host_message_id).where(
            col(MRMessage.conversation_id) == cid, col(MRMessage.host_message_id).in_(batch))
        session.connection().execute(delete(MRReaction).where(
            col(MRReaction.conversation_id) == cid, col(MRReaction.host_message_id).in_(batch),
            col(MRReaction.host_message_id).not_in(still_there)))


def _sync_messages(session: Session, cid: int, old: Thread, new: Thread,
                   identity: Identity) -> None:
    old_ids = [m.id for m in old.messages]
    count = len(old_ids)
    if [m.id for m in new.messages[:count]] != old_ids:  # history changed: rewrite it
        _delete_thread_messages(session, cid, old)
        _insert_messages(session, cid, new.messages, 0, None, identity)
        return
    for was, message in zip(old.messages, new.messages, strict=False):
        if was != message:  # edited, or its reactions changed: update it where it is
            values = _message_row(cid, message, 0, None, identity)
            for key in ("conversation_id", "position", "host_message_id", "in_reply_to"):
                del values[key]
            session.connection().execute(update(MRMessage).where(
                col(MRMessage.conversation_id) == cid,
                col(MRMessage.host_message_id) == message.id).values(**values))
            session.connection().execute(delete(MRReaction).where(
                col(MRReaction.conversation_id) == cid,
                col(MRReaction.host_message_id) == message.id))
            _bulk(session, MRReaction, _reaction_rows(cid, message))
    if len(new.messages) > count:
        # Stores written before positions were per thread numbered them across the MR.
        last = session.exec(select(func.max(MRMessage.position)).where(
            MRMessage.conversation_id == cid, MRMessage.host_thread_id == new.id)).first()
        _insert_messages(session, cid, new.messages[count:], (last or 0) + 1,
                         old_ids[-1] if old_ids else None, identity)


def _same_thread_fields(a: Thread, b: Thread) -> bool:
    return (a.anchor, a.resolvable, a.resolved, a.individual) == (
        b.anchor, b.resolvable, b.resolved, b.individual)


def save_children(session: Session, cid: int, snapshot: Snapshot, stored: Snapshot | None,
                  events: Sequence[Event], identity: Identity, now: datetime) -> None:
    """Bring the rows of conversation `cid` from `stored` to `snapshot`; append `events`.
    Deletes and updates go through Core too: no ORM object of these tables is in the
    session, and the ORM's DML path (its session synchronisation) cost as much again."""
    old_threads = {t.id: (i, t) for i, t in enumerate(stored.threads)} if stored else {}
    if stored is None or stored.commits != snapshot.commits:
        session.connection().execute(delete(MRCommit).where(col(MRCommit.conversation_id) == cid))
        _bulk(session, MRCommit, [
            {"conversation_id": cid, "position": i, "sha": c.sha, "title": c.title,
             "created_at": c.created_at, "parent_ids": " ".join(c.parent_ids),
             "message": c.message, "author": c.author}
            for i, c in enumerate(snapshot.commits or ())])  # None: not read, no rows
    new_threads = []
    for position, thread in enumerate(snapshot.threads):
        was_position, old = old_threads.pop(thread.id, (None, None))
        if old is None:
            new_threads.append(_thread_row(cid, thread, position))
            _insert_messages(session, cid, thread.messages, 0, None, identity)
            continue
        if was_position != position or not _same_thread_fields(old, thread):
            session.connection().execute(update(MRThread).where(
                col(MRThread.conversation_id) == cid, col(MRThread.host_thread_id) == thread.id,
            ).values(**{k: v for k, v in _thread_row(cid, thread, position).items()
                        if k not in ("conversation_id", "host_thread_id")}))
        if old.messages != thread.messages:
            _sync_messages(session, cid, old, thread, identity)
    _bulk(session, MRThread, new_threads)
    for _, gone in old_threads.values():
        session.connection().execute(delete(MRThread).where(col(MRThread.conversation_id) == cid,
                                            col(MRThread.host_thread_id) == gone.id))
        _delete_thread_messages(session, cid, gone)
    _bulk(session, EventRow, [
        {"conversation_id": cid, "kind": e.kind, "host_thread_id": e.thread_id,
         "host_message_id": e.message_id, "detail": e.detail, "created_at": now}
        for e in events])
