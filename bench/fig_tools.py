"""Figure 12: the MR tools' reply tracking — the `comments` filter on a 1 000-comment MR,
the cost of recording one reply, and the store's size per 10 000 tracked replies.

The filter reads the MR's replied marks from the store (the daemon's posted reply jobs and
the tool replies, two indexed reads) and keeps the comments not answered: 990 of the 1 000
are answered here, half by the daemon and half by tool calls, in a database that also holds
20 000 posted replies on other MRs. Measured: the store read, the pure filter, and both —
what `livereview mr comments` and the MCP tool add to the host's fetch. Recording a reply
is the two transactions `mr reply` commits around its POST (the attempt before it, the
reply's id after), each its own fsync'd commit, as the tool does them; the size is the
SQLite file's growth when 10 000 more replies are recorded (`VACUUM`ed before and after,
so free pages do not count).
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from common import Row, timed

from livereview.core.model import (
    Actor,
    Identity,
    JobReason,
    MergeRequest,
    Message,
    MRKey,
    ReplyRequest,
    Snapshot,
    Thread,
)
from livereview.store import jobs
from livereview.store import replied as replied_rows
from livereview.store.db import Store
from livereview.tools.comments import select_comments

KEY = MRKey("gl", "bench/big", 1)
T0 = datetime(2025, 1, 1, tzinfo=UTC)
BOT = Actor("1", "livereview", "LiveReview Bot")
PEOPLE = tuple(Actor(str(10 + i), f"user{i}", f"User {i}") for i in range(8))
IDENTITY = Identity("gl", BOT.id, BOT.username)


def snapshot(comments: int) -> Snapshot:
    threads = []
    for t in range(comments // 4):
        messages = tuple(Message(str(1000 + 4 * t + i), f"t{t}", PEOPLE[(t + i) % 8],
                                 f"Comment {4 * t + i}: please rename `x`.",
                                 T0 + timedelta(minutes=4 * t + i),
                                 T0 + timedelta(minutes=4 * t + i)) for i in range(4))
        threads.append(Thread(f"t{t}", messages))
    mr = MergeRequest(KEY, "Big", "", PEOPLE[0], "f", "main", "opened", "h" * 40, "b" * 40,
                      "s" * 40, "https://gl/bench/big/-/merge_requests/1", T0, T0)
    return Snapshot(mr, tuple(threads), ())


def populate(store: Store, comments: int, answered: int, elsewhere: int) -> None:
    """`answered` of the MR's comments replied (daemon and tools alternately), and
    `elsewhere` posted daemon replies on other MRs of the same repo."""
    others = [ReplyRequest(MRKey(KEY.host, KEY.repo, 2 + n // 100), "t", str(50_000 + n),
                           JobReason.MENTION, T0) for n in range(elsewhere)]
    daemon = [ReplyRequest(KEY, "t", str(1000 + n), JobReason.MENTION, T0)
              for n in range(0, answered, 2)]
    ids = store.transaction(jobs.enqueue, others + daemon, T0)
    for job_id, key in ids:
        store.transaction(jobs.mark_posted, job_id, f"r{key}", T0, citations=[], lesson=None)
    for n in range(1, answered, 2):
        store.transaction(replied_rows.begin_tool_reply, KEY, str(1000 + n), "t", "d", T0)
        store.transaction(replied_rows.finish_tool_reply, KEY, str(1000 + n), f"r{n}", T0)


def record_reply(store: Store, n: int) -> None:
    """One reply as `mr reply` records it: the attempt, then the posted reply's id."""
    key = MRKey(KEY.host, KEY.repo, 900_000 + n // 1000)
    store.transaction(replied_rows.begin_tool_reply, key, str(n), "t", "d" * 64, T0)
    store.transaction(replied_rows.finish_tool_reply, key, str(n), f"r{n}", T0)


def vacuum(path: Path) -> None:
    """The file holds every page (the WAL checkpointed) and no free one."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("VACUUM")
    finally:
        db.close()


def size_per(store: Store, path: Path, replies: int, first: int) -> int:
    """Bytes the database file grows by when `replies` more replies are recorded."""
    vacuum(path)
    before = path.stat().st_size
    for n in range(first, first + replies):
        record_reply(store, n)
    vacuum(path)
    return path.stat().st_size - before


def run(state: Path | None = None, quick: bool = False) -> list[Row]:
    comments, answered = 1000, 990
    elsewhere = 2_000 if quick else 20_000
    repeat = 20 if quick else 100
    snap = snapshot(comments)
    tracked = 10_000
    with tempfile.TemporaryDirectory(dir=state) as tmp:
        path = Path(tmp) / "tools.db"
        store = Store.open(f"sqlite:///{path}")
        try:
            populate(store, comments, answered, elsewhere)
            marks = store.transaction(replied_rows.replied_in, KEY)
            result = select_comments(snap, IDENTITY, marks)
            read = timed(lambda: store.transaction(replied_rows.replied_in, KEY), repeat)
            pure = timed(lambda: select_comments(snap, IDENTITY, marks), repeat)
            both = timed(lambda: select_comments(
                snap, IDENTITY, store.transaction(replied_rows.replied_in, KEY)), repeat)
            counter = iter(range(10**6, 2 * 10**6))
            record = timed(lambda: record_reply(store, next(counter)), repeat)
            grown = size_per(store, path, tracked, 3 * 10**6)
        finally:
            store.close()
    shown = f"{result.returned} returned, {result.left_out_replied} left out"
    rows = [
        Row("12. comments filter, 1 000 comments (990 answered): store read + filter",
            f"{both * 1000:.2f} ms ({shown})", "< 10 ms", both < 0.010),
        Row("12a. of which the store read (replied marks; "
            f"{elsewhere} posted replies elsewhere)", f"{read * 1000:.2f} ms"),
        Row("12b. of which the pure filter", f"{pure * 1000:.2f} ms"),
        Row("12c. recording one reply (the attempt and the reply's id, two commits)",
            f"{record * 1000:.2f} ms", "< 50 ms", record < 0.050),
        Row("12d. filtering 1 000 comments, the issue's target",
            f"{both * 1000:.2f} ms", "< 100 ms", both < 0.100),
        Row(f"12e. the store's size per {tracked:,} tracked replies (SQLite, vacuumed)",
            f"{grown / 1e6:.2f} MB ({grown / tracked:.0f} bytes a reply)"),
    ]
    for row in rows:
        print(f"{row.figure}: {row.measured}")
    return rows


if __name__ == "__main__":
    run(quick="--quick" in sys.argv)
