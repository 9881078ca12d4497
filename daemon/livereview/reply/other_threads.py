"""The rest of the MR's conversation, as one answer needs it: the other open threads (their
first message and state) and what the bot said in other threads, so it neither contradicts
nor repeats itself and can point to an earlier answer by link. Pure.

One pass over the snapshot: an MR can hold hundreds of threads, a thread 100 000 notes.
"""

from __future__ import annotations

import heapq
import re
from dataclasses import dataclass
from datetime import datetime

from livereview.core.model import Identity, Message, Snapshot, Thread
from livereview.core.sanitize import clean, one_line
from livereview.core.triggers import acked_for

MAX_THREADS = 30
THREAD_CHARS = 400  # of another thread's first message
MAX_SAID = 10
SAID_CHARS = 800  # of each of the bot's answers elsewhere


@dataclass(frozen=True)
class Elsewhere:
    threads: tuple[str, ...]  # one item per other open thread, most relevant first
    said: tuple[str, ...]  # the bot's answers in other threads, newest first
    not_shown: tuple[str, ...] = ()  # what was left out before any budget, and why


def link(host_type: str, web_url: str, message_id: str) -> str:
    """Where a message is on the host's web page (the URL fragment each host uses)."""
    base = web_url.rstrip("/")
    if not base or not message_id.replace("-", "").replace("_", "").isalnum():
        return ""
    return {"gitlab": f"{base}#note_{message_id}",
            "github": f"{base}#{message_id}",  # ids are already `discussion_r1`, `issuecomment-2`
            "bitbucket-cloud": f"{base}#comment-{message_id}",
            "bitbucket-server": f"{base}/overview?commentId={message_id}",
            }.get(host_type, "")


_HIDDEN = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)  # the bot's reply markers among them


def _short(text: str, limit: int) -> str:
    text = _HIDDEN.sub("", clean(text)).strip()
    return text if len(text) <= limit else text[:limit] + " …(cut)"


def _where(thread: Thread, head_sha: str) -> str:
    anchor = thread.anchor
    if anchor is None:
        return "a general comment"
    where = f"on {one_line(anchor.new_path or anchor.old_path)}"
    where += f":{anchor.line}" if anchor.line is not None else " (the whole file)"
    if anchor.head_sha not in ("", head_sha):
        where += ", of an earlier version"
    return where


def gather(snapshot: Snapshot, thread_id: str, identity: Identity, host_type: str = "",
           ) -> Elsewhere:
    here = snapshot.thread(thread_id)
    here_path = here.anchor.new_path if here and here.anchor else None
    mr = snapshot.mr
    open_threads: list[tuple[bool, datetime, str]] = []
    said: list[tuple[datetime, str, Message, str]] = []  # a heap of the newest MAX_SAID
    said_total = resolved = 0
    for thread in snapshot.threads:
        if thread.id == thread_id:
            continue
        where = _where(thread, mr.head_sha)
        first: Message | None = None
        last: Message | None = None
        count = 0
        for message in thread.messages:
            if message.system:
                continue
            mine = identity.is_me(message.author)
            if mine and acked_for(message.body) is not None:  # an acknowledgement: no talk
                continue
            first, last, count = first or message, message, count + 1
            if mine:
                said_total += 1
                entry = (message.created_at, message.id, message, where)
                if len(said) < MAX_SAID:
                    heapq.heappush(said, entry)
                elif entry[:2] > said[0][:2]:
                    heapq.heapreplace(said, entry)
        if first is None or last is None:
            continue
        if thread.resolved:
            resolved += 1
            continue
        state = "open" if thread.resolvable else "not resolvable"
        item = (f"@{one_line(first.author.username, 60)} {where} ({state}, "
                f"{count} message{'s' if count != 1 else ''}, last "
                f"{last.created_at:%Y-%m-%d %H:%M}Z)\n\n{_short(first.body, THREAD_CHARS)}")
        same_file = here_path is not None and thread.anchor is not None and \
            thread.anchor.new_path == here_path
        open_threads.append((same_file, last.created_at, item))
    open_threads.sort(key=lambda t: (t[0], t[1]), reverse=True)
    newest = sorted(said, key=lambda s: s[:2], reverse=True)
    not_shown = []
    if len(open_threads) > MAX_THREADS:
        not_shown.append(f"{len(open_threads) - MAX_THREADS} more open threads")
    if said_total > MAX_SAID:
        not_shown.append(f"{said_total - MAX_SAID} older answers of yours elsewhere")
    if resolved:
        not_shown.append(f"{resolved} resolved threads (not shown: settled)")
    return Elsewhere(tuple(item for _, _, item in open_threads[:MAX_THREADS]),
                     tuple(_said(m, where, host_type, snapshot) for _, _, m, where in newest),
                     tuple(not_shown))


def _said(message: Message, where: str, host_type: str, snapshot: Snapshot) -> str:
    url = link(host_type, snapshot.mr.web_url, message.id)
    at = f" ({url})" if url else ""
    return (f"you wrote {where} at {message.created_at:%Y-%m-%d %H:%M}Z{at}\n\n"
            f"{_short(message.body, SAID_CHARS)}")
