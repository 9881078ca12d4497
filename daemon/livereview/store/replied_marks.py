"""Which comments were answered, as values: the marks `mr comments` shows and the rule that
folds a store's rows into them, without the ORM (store/replied.py reads the rows through it;
store/reads.py with sqlite3, for `mr comments` on a SQLite store: docs/DESIGN.md §7)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from livereview.core.model import JobState, Message, MRKey

DAEMON, TOOL = "daemon", "tool"
# A comment the bot's marked reply on the host answers, recorded by no row of this store:
# another replica's store, a store restored from backup, a reply made before tracking.
HOST = "host"
LAST = "\U0010ffff"  # sorts after every character a key can hold

# (comment id, reply id, posted at, state) of one MR's reply jobs.
JobMark = tuple[str, str | None, datetime | None, str]
# (comment id, reply id, replied at) of one MR's tool replies.
ToolMark = tuple[str, str | None, datetime | None]


@dataclass(frozen=True, slots=True)
class Replied:
    """One answered comment."""

    host: str
    repo: str
    iid: int
    comment_id: str
    reply_id: str
    replied_at: datetime
    source: str  # DAEMON (a reply job) | TOOL (`livereview mr reply`, the MCP tool) | HOST


def job_key_range(key: MRKey) -> tuple[str, str]:
    """A job's key is "host:repo:iid:message" (ReplyRequest.key): its unique index serves
    one MR's jobs as one range, however many posted jobs other MRs have."""
    prefix = f"{key.host}:{key.repo}:{key.iid}:"
    return prefix, prefix + LAST


def fold(key: MRKey, jobs: Iterable[JobMark], tools: Iterable[ToolMark]
         ) -> dict[str, Replied]:
    """The MR's answered comments by comment id: its posted reply jobs, then the tool
    replies of comments no job answered. The state is checked here, not in SQL, where
    SQLite would pick the state index and scan every posted job."""
    found: dict[str, Replied] = {}
    for comment_id, reply_id, at, state in jobs:
        if state == JobState.POSTED.value and at is not None:
            found[comment_id] = Replied(key.host, key.repo, key.iid, comment_id,
                                        reply_id or "", at, DAEMON)
    for comment_id, reply_id, at in tools:
        if at is not None and comment_id not in found:
            found[comment_id] = Replied(key.host, key.repo, key.iid, comment_id,
                                        reply_id or "", at, TOOL)
    return found


def answered(key: MRKey, recorded: Mapping[str, Replied], on_host: Mapping[str, Message]
             ) -> dict[str, Replied]:
    """The MR's answered comments: the store's rows (which say who replied and when) and
    every other comment the host shows the bot's marked reply to (`triggers.bot_replies`,
    the daemon's own test of "answered"), as HOST at the reply's time."""
    found = dict(recorded)
    for comment_id, reply in on_host.items():
        if comment_id not in found:
            found[comment_id] = Replied(key.host, key.repo, key.iid, comment_id, reply.id,
                                        reply.created_at, HOST)
    return found
