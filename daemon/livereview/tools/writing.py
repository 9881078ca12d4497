"""The write operations: reply, comment, approve, unapprove, request_changes. Each is
refused unless the host's `agent_writes` is on.

`reply` keeps the daemon's exactly-once discipline: the body ends with the same hidden
marker naming the comment it answers; the attempt is committed before the POST; a call
that finds an attempt whose response was lost looks in the thread for its marker and adopts
that reply instead of posting a second one. The comment is then recorded as replied.
"""

from __future__ import annotations

import hashlib

from livereview.model import Anchor, Identity, Message, MRKey, Snapshot, Thread
from livereview.reply.compose import postable
from livereview.sanitize import outgoing
from livereview.store import replied as replied_rows
from livereview.tools import results
from livereview.tools.errors import BadInput
from livereview.tools.toolbox import Toolbox
from livereview.triggers import replied_to

MAX_BODY_CHARS = 60_000  # under GitHub's 65 536 with the marker


def _body(body: str) -> str:
    if not body.strip():
        raise BadInput("--body: the text is empty")
    if len(body) > MAX_BODY_CHARS:
        raise BadInput(f"--body: {len(body)} characters, over the {MAX_BODY_CHARS} a "
                       "comment may hold")
    return body


def _find(snapshot: Snapshot, comment_id: str) -> tuple[Thread, Message]:
    for thread in snapshot.threads:
        for message in thread.messages:
            if message.id == comment_id and not message.system:
                return thread, message
    raise BadInput(f"comment {comment_id} is not on {snapshot.mr.key} (the comments "
                   "operation lists their ids)")


def _marked_reply(snapshot: Snapshot, identity: Identity, comment_id: str) -> Message | None:
    """The bot's reply to `comment_id`, by its marker, anywhere on the MR: where general
    comments are not threaded (GitHub) the reply is a thread of its own."""
    return next((m for t in snapshot.threads for m in t.messages
                 if identity.is_me(m.author) and replied_to(m.body) == comment_id), None)


async def reply(box: Toolbox, mr: str, comment_id: str, body: str) -> results.Posted:
    key = box.mr(mr)
    box.require_writes(key, "reply")
    comment_id, digest = comment_id.strip(), hashlib.sha256(_body(body).encode()).hexdigest()
    done = (await box.stored(replied_rows.replied_in, key)).get(comment_id)
    attempt = await box.stored(replied_rows.tool_attempt, key, comment_id)
    if done is not None:
        if done.source == replied_rows.TOOL and attempt and attempt.body_digest == digest:
            return results.Posted(mr=str(key), id=done.reply_id, thread_id=attempt.thread_id,
                                  adopted=True, note="already posted by an earlier call")
        raise BadInput(f"comment {comment_id} on {key} is already answered ({done.source} "
                       f"reply {done.reply_id} at {done.replied_at:%Y-%m-%d %H:%M}): reply to "
                       "a later comment of the thread, or add a comment")
    identity = await box.identity(key)
    snapshot = await box.snapshot(key)
    thread, question = _find(snapshot, comment_id)
    if identity.is_me(question.author):
        raise BadInput(f"comment {comment_id} on {key} is the bot's own")
    posted = _marked_reply(snapshot, identity, comment_id)
    if posted is not None and attempt is not None:  # our POST landed, its response did not
        await box.stored(replied_rows.finish_tool_reply, key, comment_id, posted.id,
                         box.clock())
        return results.Posted(mr=str(key), id=posted.id, thread_id=thread.id, adopted=True,
                              note="an earlier call had posted it: adopted, not posted again")
    if posted is not None:
        raise BadInput(f"comment {comment_id} on {key} is already answered by the bot "
                       f"(message {posted.id})")
    text = postable(body, comment_id, MAX_BODY_CHARS, (question.author.username,))
    await box.stored(replied_rows.begin_tool_reply, key, comment_id, thread.id, digest,
                     box.clock())
    message = await box.call(key, "reply", box.host(key).reply(key, thread.id, text))
    await box.stored(replied_rows.finish_tool_reply, key, comment_id, message.id, box.clock())
    return results.Posted(mr=str(key), id=message.id, thread_id=message.thread_id,
                          adopted=False, note="")


async def comment(box: Toolbox, mr: str, body: str, path: str | None = None,
                  line: int | None = None, old: bool = False) -> results.Posted:
    """A general comment, or one on a diff line (`old`: the line as numbered in the old file,
    a removed line)."""
    key = box.mr(mr)
    box.require_writes(key, "comment")
    text = outgoing(_body(body))
    anchor = None
    if (path is None) != (line is None):
        raise BadInput("comment: --path and --line go together (an inline comment)")
    if path is not None and line is not None:
        if line < 1:
            raise BadInput(f"--line {line}: line numbers start at 1")
        anchor = await _anchor(box, key, path.strip().lstrip("/"), line, old)
    elif old:
        raise BadInput("comment: --old needs --path and --line")
    message = await box.call(key, "comment", box.host(key).comment(key, text, anchor))
    return results.Posted(mr=str(key), id=message.id, thread_id=message.thread_id,
                          adopted=False, note="")


async def _anchor(box: Toolbox, key: MRKey, path: str, line: int, old: bool) -> Anchor:
    mr_now = (await box.snapshot(key)).mr
    return Anchor(new_path=path, old_path=path, new_line=None if old else line,
                  old_line=line if old else None, base_sha=mr_now.base_sha,
                  start_sha=mr_now.start_sha, head_sha=mr_now.head_sha)


async def approve(box: Toolbox, mr: str) -> results.Verdict:
    key = box.mr(mr)
    box.require_writes(key, "approve")
    await box.call(key, "approve", box.host(key).approve(key))
    return results.Verdict(mr=str(key), action="approve", message_id="", note="")


async def unapprove(box: Toolbox, mr: str) -> results.Verdict:
    key = box.mr(mr)
    box.require_writes(key, "unapprove")
    await box.call(key, "unapprove", box.host(key).unapprove(key))
    return results.Verdict(mr=str(key), action="unapprove", message_id="", note="")


async def request_changes(box: Toolbox, mr: str, body: str = "") -> results.Verdict:
    key = box.mr(mr)
    box.require_writes(key, "request_changes")
    text = outgoing(_body(body)) if body else ""
    message = await box.call(key, "request_changes",
                             box.host(key).request_changes(key, text))
    return results.Verdict(mr=str(key), action="request_changes",
                           message_id=message.id if message else "", note="")
