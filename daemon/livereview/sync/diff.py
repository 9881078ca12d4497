"""Stored snapshot vs freshly fetched snapshot → events. Pure.

Polling sees states, not changes; this function turns two states into the changes a
webhook would have delivered. It must be cheap (1 000-note MRs) and total: any pair of
snapshots of the same MR yields a well-defined event list.
"""

from __future__ import annotations

from livereview.core.model import Event, EventKind, Message, MRKey, Snapshot
from livereview.core.review_requests import request_events


def _message_events(key: MRKey, old: dict[str, Message], new: dict[str, Message]) -> list[Event]:
    events: list[Event] = []
    for mid, message in new.items():
        before = old.get(mid)
        if before is None:
            events.append(Event(EventKind.COMMENT_ADDED, key, message.thread_id, mid))
        elif before.body != message.body:
            events.append(Event(EventKind.COMMENT_EDITED, key, message.thread_id, mid))
    events.extend(
        Event(EventKind.COMMENT_DELETED, key, message.thread_id, mid)
        for mid, message in old.items()
        if mid not in new
    )
    return events


def _reactions(messages: dict[str, Message]) -> set[tuple[str, str, str, str]]:
    return {
        (m.thread_id, mid, r.name, r.user.id) for mid, m in messages.items() for r in m.reactions
    }


def _reaction_events(
    key: MRKey, old: dict[str, Message], new: dict[str, Message]
) -> list[Event]:
    before, after = _reactions(old), _reactions(new)
    # A reaction vanishing because its message was deleted is not a separate event.
    gone = {r for r in before - after if r[1] in new}
    return [
        Event(EventKind.REACTION_ADDED, key, tid, mid, f"{name}:{user}")
        for tid, mid, name, user in sorted(after - before)
    ] + [
        Event(EventKind.REACTION_REMOVED, key, tid, mid, f"{name}:{user}")
        for tid, mid, name, user in sorted(gone)
    ]


class CommitsNotRead(ValueError):
    """A push was diffed without the commits that tell a push from a force-push."""


def pushed(stored: Snapshot | None, fresh: Snapshot) -> bool:
    """The head moved since `stored`: telling a push from a force-push needs `fresh`'s
    commits (a read without them reads them first: sync/poller.py)."""
    return stored is not None and bool(fresh.mr.head_sha) \
        and stored.mr.head_sha != fresh.mr.head_sha


def _push_events(stored: Snapshot, fresh: Snapshot) -> list[Event]:
    old_head, new_head = stored.mr.head_sha, fresh.mr.head_sha
    if not pushed(stored, fresh):
        return []
    if fresh.commits is None:
        raise CommitsNotRead(f"{fresh.mr.key}: {old_head}..{new_head} without its commits")
    # A push keeps the old head among the MR's commits; a force-push (rebase, amend)
    # drops it: the new head no longer descends from what we stored.
    shas = {c.sha for c in fresh.commits}
    kind = EventKind.COMMIT_PUSH if old_head in shas else EventKind.FORCE_PUSH
    return [Event(kind, fresh.mr.key, detail=f"{old_head}..{new_head}")]


def _thread_events(stored: Snapshot, fresh: Snapshot) -> list[Event]:
    was = {t.id: t.resolved for t in stored.threads}
    events: list[Event] = []
    for thread in fresh.threads:
        before = was.get(thread.id)
        if before is None or before == thread.resolved:
            continue
        kind = EventKind.RESOLVED if thread.resolved else EventKind.REOPENED
        events.append(Event(kind, fresh.mr.key, thread.id))
    return events


def diff(stored: Snapshot | None, fresh: Snapshot) -> list[Event]:
    """The events that turn `stored` into `fresh` (everything is new on first sight)."""
    key = fresh.mr.key
    new_messages = fresh.messages()
    if stored is None:
        return _message_events(key, {}, new_messages) + request_events(None, fresh)
    old_messages = stored.messages()
    events = _push_events(stored, fresh)
    if stored.mr.state != fresh.mr.state:
        events.append(
            Event(EventKind.MR_STATE_CHANGED, key, detail=f"{stored.mr.state}->{fresh.mr.state}")
        )
    events += _message_events(key, old_messages, new_messages)
    events += _reaction_events(key, old_messages, new_messages)
    events += _thread_events(stored, fresh)
    events += request_events(stored, fresh)
    return events
