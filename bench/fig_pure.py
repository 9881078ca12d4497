"""Figures 3 and 4: the pure core on a 1 000-note merge request, best of N.

3. `sync.diff.diff(stored, fresh)`: stored and fresh are equal but distinct objects (one
   comes from the store, one from the host), unchanged and with one note added.
4. `triggers.reply_requests(...)`: 1 000 human comments that mention the bot, 990 of them
   already answered by a bot reply carrying the hidden marker; every comment is an event
   (what a first sight or a re-ingest hands it). 10 requests must come out.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from common import Row, timed

from livereview.core.model import (
    Actor,
    Anchor,
    Commit,
    Event,
    EventKind,
    Identity,
    MergeRequest,
    Message,
    MRKey,
    Policy,
    Reaction,
    Snapshot,
    Thread,
)
from livereview.core.triggers import reply_marker, reply_requests
from livereview.sync.diff import diff

KEY = MRKey("gl", "bench/big", 1)
T0 = datetime(2025, 1, 1, tzinfo=UTC)
BOT = Actor("1", "livereview", "LiveReview Bot")
PEOPLE = tuple(Actor(str(10 + i), f"user{i}", f"User {i}") for i in range(8))
IDENTITY = Identity("gl", BOT.id, BOT.username)
POLICY = Policy(ignore_users=("ghost", "*-bot", "*[bot]"))


def _mr() -> MergeRequest:
    return MergeRequest(KEY, "Big change", "A long discussion.", PEOPLE[0], "feature", "main",
                        "opened", "h" * 40, "b" * 40, "s" * 40, "https://gl/bench/big/-/mr/1",
                        T0, T0 + timedelta(days=3))


def _anchor(i: int) -> Anchor:
    return Anchor(f"src/file_{i % 40}.py", f"src/file_{i % 40}.py", i % 300 + 1, None,
                  "b" * 40, "s" * 40, "h" * 40)


def _comment(n: int, tid: str, *, react: bool) -> Message:
    at = T0 + timedelta(minutes=n)
    reactions = (Reaction("thumbsup", PEOPLE[(n + 1) % len(PEOPLE)], str(n)),) if (
        react and n % 10 == 0) else ()
    return Message(str(1000 + n), tid, PEOPLE[n % len(PEOPLE)],
                   f"Comment {n}: I think `x` should be renamed here.\n"
                   "Also consider the error path.", at, at, reactions=reactions)


def conversation(notes: int = 1000, per_thread: int = 4, extra: int = 0) -> Snapshot:
    """`notes` comments in threads of `per_thread` (every other one on a diff line, every
    10th comment with a reaction), plus `extra` comments appended to the last thread."""
    threads: list[Thread] = []
    for t, start in enumerate(range(0, notes, per_thread)):
        tid = f"{t:040x}"
        last = start + per_thread >= notes
        end = min(start + per_thread, notes) + (extra if last else 0)
        threads.append(Thread(tid, tuple(_comment(n, tid, react=n < notes)
                                               for n in range(start, end)),
                              _anchor(t) if t % 2 else None, resolvable=True,
                              resolved=t % 3 == 0))
    commits = tuple(Commit(f"{i:040x}", f"commit {i}", T0 + timedelta(hours=i))
                    for i in range(5))
    return Snapshot(_mr(), tuple(threads), commits)


def answered_conversation(comments: int = 1000, unanswered: int = 10,
                          one_thread: bool = False) -> Snapshot:
    """`comments` human mentions, each answered by the bot with its marker except the last
    `unanswered`; each question in its own thread, or all in one long thread."""
    threads: list[Thread] = []
    flat: list[Message] = []
    for n in range(comments):
        tid = "t" * 39 + "0" if one_thread else f"{n:040x}"
        at = T0 + timedelta(minutes=2 * n)
        question = Message(str(1000 + n), tid, PEOPLE[n % len(PEOPLE)],
                           f"@livereview question {n}: why is `x` needed here?", at, at)
        pair = [question]
        if n < comments - unanswered:
            pair.append(Message(str(100000 + n), tid, BOT,
                                f"Because of the cache.\n\n{reply_marker(question.id)}",
                                at + timedelta(seconds=30), at + timedelta(seconds=30)))
        if one_thread:
            flat.extend(pair)
        else:
            threads.append(Thread(tid, tuple(pair), None, resolvable=True))
    if one_thread:
        threads = [Thread("t" * 39 + "0", tuple(flat), None, resolvable=True)]
    return Snapshot(_mr(), tuple(threads), ())


def comment_events(snapshot: Snapshot) -> list[Event]:
    return [Event(EventKind.COMMENT_ADDED, KEY, m.thread_id, m.id)
            for t in snapshot.threads for m in t.messages if m.author != BOT]


def _ms(fn: Callable[[], object], repeat: int) -> float:
    return timed(fn, repeat) * 1000


def run(*, quick: bool) -> list[Row]:
    repeat = 10 if quick else 50
    print(f"\n## 3–4. pure core on a 1 000-note MR (best of {repeat})")
    stored = conversation()
    same = conversation()
    added = conversation(extra=1)
    assert stored == same and stored is not same
    added_events = diff(stored, added)
    n_added = len(added_events)
    one_added = [e.kind for e in added_events] == [EventKind.COMMENT_ADDED]
    unchanged_ms = _ms(lambda: diff(stored, same), repeat)
    added_ms = _ms(lambda: diff(stored, added), repeat)
    first_ms = _ms(lambda: diff(None, same), repeat)
    print(f"diff, unchanged: {unchanged_ms:.2f} ms ({len(diff(stored, same))} events); "
          f"1 note added: {added_ms:.2f} ms ({n_added} event); first sight: {first_ms:.2f} ms")

    baseline = T0 - timedelta(days=1)
    snap = answered_conversation()
    events = comment_events(snap)
    found = len(reply_requests(events, snap, IDENTITY, POLICY, baseline))
    filter_ms = _ms(lambda: reply_requests(events, snap, IDENTITY, POLICY, baseline), repeat)
    long = answered_conversation(one_thread=True)
    long_events = comment_events(long)
    long_found = len(reply_requests(long_events, long, IDENTITY, POLICY, baseline))
    long_ms = _ms(lambda: reply_requests(long_events, long, IDENTITY, POLICY, baseline),
                  max(3, repeat // 5))
    print(f"reply_requests, 1 000 mentions (990 answered) in 1 000 threads: {filter_ms:.2f} ms "
          f"→ {found} requests; all in one thread: {long_ms:.2f} ms → {long_found} requests")
    return [
        Row("3. diff 1 000-note MR vs stored, unchanged", f"{unchanged_ms:.2f} ms", "< 20 ms",
            unchanged_ms < 20),
        Row("3. diff 1 000-note MR vs stored, 1 note added", f"{added_ms:.2f} ms "
            f"({n_added} event)", "< 20 ms", added_ms < 20 and one_added),
        Row("4. reply_requests over 1 000 comments, 990 answered",
            f"{filter_ms:.2f} ms ({found} to answer)", "< 10 ms", filter_ms < 10 and found == 10),
        Row("4b. same, all 1 000 in one thread", f"{long_ms:.2f} ms ({long_found} to answer)"),
    ]
