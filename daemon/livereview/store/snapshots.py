"""Snapshots ⇄ rows. A conversation is replaced whole on each ingest, in one transaction
together with the events derived from it and the reply jobs they triggered."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime

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
    candidates = [*human, *(c.created_at for c in snapshot.commits[:1])]
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


def _upsert_conversation(
    session: Session, row: MRConversation | None, snapshot: Snapshot, identity: Identity,
    now: datetime,
) -> MRConversation:
    """`row` as stored (None: none yet), updated from `snapshot`."""
    mr = snapshot.mr
    if row is None:
        row = MRConversation(host=mr.key.host, repo=mr.key.repo, iid=mr.key.iid, title="",
                             description="", author_id="", author_username="",
                             source_branch="", target_branch="", state="", head_sha="",
                             base_sha="", start_sha="", web_url="", created_at=mr.created_at,
                             updated_at=mr.updated_at, fetched_at=now, last_activity_at=now)
        previous = None
    else:
        previous = row.last_activity_at
    row.title, row.description, row.state = mr.title, mr.description, mr.state
    row.author_id, row.author_username, row.author_name = (
        mr.author.id, mr.author.username, mr.author.name)
    row.source_branch, row.target_branch = mr.source_branch, mr.target_branch
    row.head_sha, row.base_sha, row.start_sha = mr.head_sha, mr.base_sha, mr.start_sha
    row.web_url, row.created_at, row.updated_at = mr.web_url, mr.created_at, mr.updated_at
    row.reviewers = _reviewers_json(mr.reviewers)
    row.fetched_at = now
    row.last_activity_at = _last_activity(snapshot, identity, previous)
    session.add(row)
    if row.id is None:  # a new row's id is the children's key
        session.flush()
    return row


def save(
    session: Session, snapshot: Snapshot, events: list[Event], identity: Identity,
    now: datetime, stored: Snapshot | None = None,
) -> int:
    """Store `snapshot` over `stored` (what this MR's poller loaded and diffed against, or
    None to replace whatever is stored) and append `events`; returns the conversation id."""
    found = conversation(session, snapshot.mr.key)
    existed = found is not None
    row = _upsert_conversation(session, found, snapshot, identity, now)
    cid = row.id
    assert cid is not None
    if stored is None and existed:
        for table in _CHILDREN:
            session.exec(delete(table).where(col(table.conversation_id) == cid))
    save_children(session, cid, snapshot, stored, events, identity, now)
    return cid


def _anchor(row: MRThread) -> Anchor | None:
    if row.new_path is None:
        return None
    return Anchor(new_path=row.new_path, old_path=row.old_path or row.new_path,
                  new_line=row.new_line, old_line=row.old_line, base_sha=row.base_sha or "",
                  start_sha=row.start_sha or "", head_sha=row.head_sha or "")


def load(session: Session, key: MRKey) -> Snapshot | None:
    row = conversation(session, key)
    if row is None or row.id is None:
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
    commits = tuple(
        Commit(c.sha, c.title, c.created_at, tuple(c.parent_ids.split()), c.message, c.author)
        for c in session.exec(select(MRCommit).where(MRCommit.conversation_id == cid)
                              .order_by(col(MRCommit.position)))
    )
    mr = MergeRequest(
        key=key, title=row.title, description=row.description,
        author=Actor(row.author_id, row.author_username, row.author_name),
        source_branch=row.source_branch,
        target_branch=row.target_branch, state=row.state, head_sha=row.head_sha,
        base_sha=row.base_sha, start_sha=row.start_sha, web_url=row.web_url,
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


def touch(session: Session, key: MRKey, now: datetime) -> None:
    row = conversation(session, key)
    if row is not None:
        row.fetched_at = now
        session.add(row)


def ingest(
    session: Session, snapshot: Snapshot, events: list[Event], requests: list[ReplyRequest],
    identity: Identity, now: datetime, stored: Snapshot | None = None,
) -> list[tuple[int, str]]:
    """Persist a fetched snapshot (over `stored`, the one it was diffed against), its
    events and the reply jobs they trigger, atomically: a crash leaves either all of it or
    none (and the next poll derives it again)."""
    save(session, snapshot, events, identity, now, stored)
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
