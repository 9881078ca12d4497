"""Snapshots ⇄ rows. A conversation is replaced whole on each ingest, in one transaction
together with the events derived from it and the reply jobs they triggered."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime

from sqlalchemy import bindparam, insert, update
from sqlalchemy import select as columns
from sqlmodel import Session, col, delete, select

from livereview.core.model import (
    Actor,
    Anchor,
    Commit,
    Event,
    Identity,
    MergeRequest,
    Message,
    MRKey,
    Reaction,
    ReplyRequest,
    Snapshot,
    Thread,
)
from livereview.store import jobs
from livereview.store.snapshot_save import save_children
from livereview.store.tables import (
    EventRow,
    MRCommit,
    MRConversation,
    MRMessage,
    MRReaction,
    MRThread,
)

_CHILDREN = (MRCommit, MRThread, MRMessage, MRReaction)


def conversation(session: Session, key: MRKey) -> MRConversation | None:
    return session.exec(
        select(MRConversation).where(
            MRConversation.host == key.host,
            MRConversation.repo == key.repo,
            MRConversation.iid == key.iid,
        )
    ).first()


def _last_activity(snapshot: Snapshot, identity: Identity, previous: datetime | None) -> datetime:
    human = [
        m.created_at
        for t in snapshot.threads
        for m in t.messages
        if not m.system and not identity.is_me(m.author)
    ]
    # Commits not read: the MR's updated_at (a push bumps it) stands in for the newest
    # commit's time; it is never earlier, so the MR is polled hot no less than before.
    pushed = [snapshot.mr.updated_at] if snapshot.commits is None else \
        [c.created_at for c in snapshot.commits[:1]]
    candidates = [*human, *pushed]
    if previous is not None:
        candidates.append(previous)
    return max(candidates, default=snapshot.mr.created_at)


def _reviewers_json(reviewers: tuple[Actor, ...]) -> str:
    return json.dumps([[a.id, a.username] for a in reviewers]) if reviewers else ""


def _reviewers(text: str) -> tuple[Actor, ...]:
    """The stored reviewer list ("" before 0015, or none)."""
    if not text:
        return ()
    return tuple(Actor(str(user_id), str(username)) for user_id, username in json.loads(text))


def _conversation_values(snapshot: Snapshot, identity: Identity, now: datetime,
                         previous: datetime | None) -> dict[str, object]:
    """The conversation row's columns from `snapshot` (`previous`: its stored
    last_activity_at, None for a new row)."""
    mr = snapshot.mr
    return {"title": mr.title, "description": mr.description, "state": mr.state,
            "author_id": mr.author.id, "author_username": mr.author.username,
            "author_name": mr.author.name, "source_branch": mr.source_branch,
            "target_branch": mr.target_branch, "head_sha": mr.head_sha,
            # Not read (a listing row's MR): "" in the columns, and said by diff_refs_read.
            "base_sha": mr.base_sha or "", "start_sha": mr.start_sha or "",
            "diff_refs_read": mr.refs_read, "web_url": mr.web_url,
            "created_at": mr.created_at, "updated_at": mr.updated_at,
            "reviewers": _reviewers_json(mr.reviewers), "fetched_at": now,
            "commits_read": snapshot.commits is not None,
            "last_activity_at": _last_activity(snapshot, identity, previous)}


# Found by key through Core, bound by name: the statement is built and compiled once.
# Through the ORM (an entity select, an object, a flush), one conversation's lookups and
# upsert were a third of the store's CPU at first sight of hundreds of MRs (bench figure
# 16, docs/performance.md).
_FIND = columns(col(MRConversation.id), col(MRConversation.last_activity_at)).where(
    col(MRConversation.host) == bindparam("host"),
    col(MRConversation.repo) == bindparam("repo"),
    col(MRConversation.iid) == bindparam("iid"))


_INSERT = insert(MRConversation)
_UPDATE = update(MRConversation).where(col(MRConversation.id) == bindparam("cid"))


def _find(session: Session, key: MRKey) -> tuple[int, datetime] | None:
    """(id, last_activity_at) of `key`'s stored conversation, or None."""
    found = session.connection().execute(
        _FIND, {"host": key.host, "repo": key.repo, "iid": key.iid}).first()
    if found is None or found[0] is None:
        return None
    return found[0], found[1]


def _upsert_conversation(session: Session, found: tuple[int, datetime] | None,
                         snapshot: Snapshot, identity: Identity, now: datetime) -> int:
    """The id of `snapshot`'s conversation row, inserted or updated (`found`: as stored)."""
    values = _conversation_values(snapshot, identity, now,
                                  None if found is None else found[1])
    connection = session.connection()
    if found is not None:
        connection.execute(_UPDATE, {**values, "cid": found[0]})
        return found[0]
    key = snapshot.mr.key
    inserted = connection.execute(_INSERT, {"host": key.host, "repo": key.repo,
                                            "iid": key.iid, **values})
    primary = inserted.inserted_primary_key  # the new id, by whatever means the dialect has
    assert primary is not None and isinstance(primary[0], int)
    return primary[0]


def save(
    session: Session, snapshot: Snapshot, events: list[Event], identity: Identity,
    now: datetime, stored: Snapshot | None = None, *, unstored: bool = False,
) -> int:
    """Store `snapshot` over `stored` (what this MR's poller loaded and diffed against, or
    None to replace whatever is stored) and append `events`; returns the conversation id.
    `unstored`: this transaction found nothing stored for the MR already (not looked up
    again)."""
    found = None if unstored else _find(session, snapshot.mr.key)
    cid = _upsert_conversation(session, found, snapshot, identity, now)
    if stored is None and found is not None:
        for table in _CHILDREN:
            session.connection().execute(
                delete(table).where(col(table.conversation_id) == cid))
    save_children(session, cid, snapshot, stored, events, identity, now)
    return cid


def _anchor(row: MRThread) -> Anchor | None:
    if row.new_path is None:
        return None
    return Anchor(new_path=row.new_path, old_path=row.old_path or row.new_path,
                  new_line=row.new_line, old_line=row.old_line, base_sha=row.base_sha or "",
                  start_sha=row.start_sha or "", head_sha=row.head_sha or "")


_MR_COLUMNS = ("id", "title", "description", "author_id", "author_username", "author_name",
               "source_branch", "target_branch", "state", "head_sha", "base_sha",
               "start_sha", "web_url", "created_at", "updated_at", "reviewers",
               "commits_read", "diff_refs_read")
_LOAD = columns(*(col(getattr(MRConversation, name)) for name in _MR_COLUMNS)).where(
    col(MRConversation.host) == bindparam("host"),
    col(MRConversation.repo) == bindparam("repo"),
    col(MRConversation.iid) == bindparam("iid"))


def load(session: Session, key: MRKey) -> Snapshot | None:
    row = session.connection().execute(
        _LOAD, {"host": key.host, "repo": key.repo, "iid": key.iid}).first()
    if row is None:
        return None
    cid = row.id
    reactions: dict[str, list[Reaction]] = defaultdict(list)
    for r in session.exec(select(MRReaction).where(MRReaction.conversation_id == cid)):
        reactions[r.host_message_id].append(
            Reaction(r.name, Actor(r.user_id, r.username), r.host_reaction_id,
                     r.created_at))
    messages: dict[str, list[Message]] = defaultdict(list)
    # Plain rows, not ORM objects: a thread can hold 100 000 notes.
    m = MRMessage
    for (mid, tid, author_id, username, name, bot, body, created, updated,
         kind) in session.execute(
            columns(col(m.host_message_id), col(m.host_thread_id), col(m.author_id),
                    col(m.author_username), col(m.author_name), col(m.author_bot), col(m.body),
                    col(m.created_at), col(m.updated_at), col(m.kind))
            .where(col(m.conversation_id) == cid).order_by(col(m.position))):
        messages[tid].append(Message(
            id=mid, thread_id=tid, author=Actor(author_id, username, name, bot), body=body,
            created_at=created, updated_at=updated, system=kind == "system",
            reactions=tuple(reactions.get(mid, ()))))
    threads = tuple(
        Thread(id=t.host_thread_id, messages=tuple(messages.get(t.host_thread_id, ())),
               anchor=_anchor(t), resolvable=t.resolvable, resolved=t.resolved,
               individual=t.individual)
        for t in session.exec(select(MRThread).where(MRThread.conversation_id == cid)
                              .order_by(col(MRThread.position)))
    )
    commits = None if not row.commits_read else tuple(
        Commit(c.sha, c.title, c.created_at, tuple(c.parent_ids.split()), c.message, c.author)
        for c in session.exec(select(MRCommit).where(MRCommit.conversation_id == cid)
                              .order_by(col(MRCommit.position)))
    )
    mr = MergeRequest(
        key=key, title=row.title, description=row.description,
        author=Actor(row.author_id, row.author_username, row.author_name),
        source_branch=row.source_branch,
        target_branch=row.target_branch, state=row.state, head_sha=row.head_sha,
        base_sha=row.base_sha if row.diff_refs_read else None,
        start_sha=row.start_sha if row.diff_refs_read else None, web_url=row.web_url,
        created_at=row.created_at, updated_at=row.updated_at,
        reviewers=_reviewers(row.reviewers),
    )
    return Snapshot(mr=mr, threads=threads, commits=commits)


def active_mrs(session: Session, host: str, since: datetime) -> set[MRKey]:
    """Open MRs with human activity or a push since `since`: polled hot."""
    rows = session.exec(select(MRConversation.repo, MRConversation.iid).where(
        MRConversation.host == host, MRConversation.state == "opened",
        MRConversation.last_activity_at >= since))
    return {MRKey(host, repo, iid) for repo, iid in rows}


def most_active(session: Session, host: str, since: datetime) -> list[MRKey]:
    """Open MRs with human activity or a push since `since`, the most recent first (ties by
    repo and number): the active tier's candidates (sync/active.py)."""
    rows = session.exec(select(MRConversation.repo, MRConversation.iid).where(
        MRConversation.host == host, MRConversation.state == "opened",
        MRConversation.last_activity_at >= since).order_by(
        col(MRConversation.last_activity_at).desc(), col(MRConversation.repo),
        col(MRConversation.iid)))
    return [MRKey(host, repo, iid) for repo, iid in rows]


def touch(session: Session, key: MRKey, now: datetime, refs: MergeRequest | None = None
          ) -> None:
    """An MR read unchanged: when it was read — and `refs`'s diff refs, where it was
    stored without them (from its listing row)."""
    values: dict[str, object] = {"fetched_at": now}
    if refs is not None and refs.base_sha is not None and refs.start_sha is not None:
        values.update(base_sha=refs.base_sha, start_sha=refs.start_sha, diff_refs_read=True)
    session.connection().execute(update(MRConversation).where(
        col(MRConversation.host) == key.host, col(MRConversation.repo) == key.repo,
        col(MRConversation.iid) == key.iid).values(**values))


def ingest(
    session: Session, snapshot: Snapshot, events: list[Event], requests: list[ReplyRequest],
    identity: Identity, now: datetime, stored: Snapshot | None = None, *,
    unstored: bool = False,
) -> list[tuple[int, str]]:
    """Persist a fetched snapshot (over `stored`, the one it was diffed against), its
    events and the reply jobs they trigger, atomically: a crash leaves either all of it or
    none (and the next poll derives it again). `unstored`: as for `save`."""
    save(session, snapshot, events, identity, now, stored, unstored=unstored)
    return jobs.enqueue(session, requests, now)


def fetch_marks(session: Session, host: str) -> dict[MRKey, tuple[datetime, datetime]]:
    """Per stored MR of `host`: (the host's updated_at we saw, when we fetched it)."""
    rows = session.exec(select(MRConversation.repo, MRConversation.iid,
                               MRConversation.updated_at, MRConversation.fetched_at)
                        .where(MRConversation.host == host))
    return {MRKey(host, repo, iid): (updated, fetched) for repo, iid, updated, fetched in rows}


def events_of(session: Session, key: MRKey, limit: int = 50) -> list[EventRow]:
    """The newest events derived for one MR, oldest first."""
    row = conversation(session, key)
    if row is None:
        return []
    rows = session.exec(select(EventRow).where(EventRow.conversation_id == row.id)
                        .order_by(col(EventRow.id).desc()).limit(limit))
    return list(reversed(list(rows)))
