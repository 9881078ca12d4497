"""Small builders of model values for pure tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from livereview.core.model import (
    Actor,
    Anchor,
    Commit,
    Identity,
    MergeRequest,
    Message,
    MRKey,
    Snapshot,
    Thread,
)

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
KEY = MRKey("gl", "group/project", 7)
BOT = Actor("99", "livereview", "Live Review")
ALICE = Actor("1", "alice", "Alice")
BOB = Actor("2", "bob", "Bob")
IDENTITY = Identity("gl", "99", "livereview")


def msg(mid: str, author: Actor = ALICE, body: str = "hello", *, thread: str = "t1",
        at: int = 0, system: bool = False) -> Message:
    when = T0 + timedelta(minutes=at)
    return Message(mid, thread, author, body, when, when, system)


def thread(tid: str, *messages: Message, anchor: Anchor | None = None,
           resolved: bool = False) -> Thread:
    return Thread(tid, tuple(messages), anchor=anchor, resolvable=anchor is not None,
                  resolved=resolved)


def mr(head: str = "c2", state: str = "opened") -> MergeRequest:
    return MergeRequest(KEY, "Add a lock", "Guards the cache.", BOB, "feature", "main", state,
                        head, "c0", "c0", "https://gitlab.example/group/project/-/merge_requests/7",
                        T0, T0)


def snapshot(*threads: Thread, head: str = "c2", commits: tuple[str, ...] = ("c2", "c1"),
             state: str = "opened") -> Snapshot:
    return Snapshot(mr(head, state), tuple(threads),
                    tuple(Commit(sha, f"commit {sha}", T0) for sha in commits))
