"""The write operations: reply, comment, approve, unapprove, request_changes. Each is
refused unless the host's `agent_writes` is on.

`reply` keeps the daemon's exactly-once discipline: the body ends with the same hidden
marker naming the comment it answers; it posts only while it holds the comment's claim,
which the daemon's reply jobs take too (store/reply_claims.py), so the two never both
answer one comment; the attempt is committed before the POST; a call that finds an attempt
whose response was lost looks on the MR for its marker and adopts that reply instead of
posting a second one. The comment is then recorded as replied.
"""

from __future__ import annotations

import asyncio
import hashlib

from livereview.core.model import Identity, Message, MRKey, Snapshot, Thread
from livereview.core.postable import postable
from livereview.core.sanitize import outgoing
from livereview.core.triggers import bot_replies
from livereview.store import replied_marks
from livereview.tools import anchors, results
from livereview.tools.errors import BadInput
from livereview.tools.toolbox import Toolbox

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
    """The bot's reply to `comment_id` as the daemon finds it (`triggers.bot_replies`)."""
    return bot_replies(snapshot, identity).get(comment_id)


def _answered(key: MRKey, comment_id: str, by: str, reply_id: str, thread_id: str,
              *, in_progress: bool = False) -> results.Posted:
    """Nothing posted: the comment has its one answer already (or is getting it now)."""
    who = {replied_marks.DAEMON: "the daemon", replied_marks.TOOL: "another tool call"}.get(
        by, "the bot (its marked reply is on the MR)")
    note = (f"comment {comment_id} on {key} is already answered: {who} is posting its reply "
            "now; nothing posted" if in_progress else
            f"comment {comment_id} on {key} is already answered by {who} (reply "
            f"{reply_id or '?'}); nothing posted")
    return results.Posted(mr=str(key), id=reply_id, thread_id=thread_id, adopted=False,
                          note=note, already_answered=True, answered_by=by,
                          in_progress=in_progress)


async def reply(box: Toolbox, mr: str, comment_id: str, body: str) -> results.Posted:
    """Post `body` in the comment's thread, unless it is answered: a retried call adopts
    its own reply; another's reply — the daemon's, or a tool call's — makes the result
    `already_answered`, as does another claimant posting right now (the shared claim)."""
    # The ORM's store modules: loaded by the calls that write, not by `mr comments`.
    from livereview.store import replied as replied_rows
    from livereview.store import reply_claims

    key = await box.reached(mr)
    box.require_writes(key, "reply")
    comment_id, digest = comment_id.strip(), hashlib.sha256(_body(body).encode()).hexdigest()
    done = (await box.stored(replied_rows.replied_in, key)).get(comment_id)
    attempt = await box.stored(replied_rows.tool_attempt, key, comment_id)
    if done is not None:
        if done.source == replied_rows.TOOL and attempt and attempt.body_digest == digest:
            return results.Posted(mr=str(key), id=done.reply_id, thread_id=attempt.thread_id,
                                  adopted=True, note="already posted by an earlier call")
        return _answered(key, comment_id, done.source, done.reply_id,
                         attempt.thread_id if attempt else "")
    identity = await box.identity(key)
    snapshot = await box.snapshot(key)
    thread, question = _find(snapshot, comment_id)
    if identity.is_me(question.author):
        raise BadInput(f"comment {comment_id} on {key} is the bot's own")
    posted = _marked_reply(snapshot, identity, comment_id)
    if posted is not None and attempt is not None:  # our POST landed, its response did not
        return await _adopt(box, key, comment_id, thread.id, digest, posted.id)
    if posted is not None:  # a POST no row of this store records (yet, or ever)
        return _answered(key, comment_id, replied_rows.HOST, posted.id, thread.id)
    daemon = box.settings.daemon
    claim = await box.stored(reply_claims.claim, key, comment_id, reply_claims.TOOL,
                             replied_rows.tool_holder(digest), box.clock(),
                             reply_claims.claim_seconds(daemon.lease_seconds,
                                                        daemon.step_timeout_seconds))
    if claim.outcome is not reply_claims.Outcome.MINE:
        return _answered(key, comment_id, claim.source, claim.reply_id, thread.id,
                         in_progress=claim.outcome is reply_claims.Outcome.BUSY)
    if claim.maybe_posted:  # taken from a claimant that died: did its POST land?
        landed = _marked_reply(await box.snapshot(key), identity, comment_id)
        if landed is not None:
            return await _adopt(box, key, comment_id, thread.id, digest, landed.id)
    text = postable(body, comment_id, MAX_BODY_CHARS, (question.author.username,))
    await box.stored(replied_rows.begin_tool_reply, key, comment_id, thread.id, digest,
                     box.clock())
    # Over before the claim can lapse: no one takes it over while this POST may land.
    step = asyncio.wait_for(box.host(key).reply(key, thread.id, text),
                            claim.seconds_left(box.clock()))
    message = await box.call(key, "reply", step)
    await box.stored(replied_rows.finish_tool_reply, key, comment_id, message.id, box.clock())
    box.wrote(key, "reply", message.id)
    return results.Posted(mr=str(key), id=message.id, thread_id=message.thread_id,
                          adopted=False, note="")


async def _adopt(box: Toolbox, key: MRKey, comment_id: str, thread_id: str, digest: str,
                 reply_id: str) -> results.Posted:
    """A marked reply an earlier call posted (its response lost, or its process killed):
    recorded as this call's, not posted again."""
    from livereview.store import replied as replied_rows

    await box.stored(replied_rows.adopt_tool_reply, key, comment_id, thread_id, digest,
                     reply_id, box.clock())
    box.wrote(key, "reply", reply_id, adopted=True)
    return results.Posted(mr=str(key), id=reply_id, thread_id=thread_id, adopted=True,
                          note="an earlier call had posted it: adopted, not posted again")


async def comment(box: Toolbox, mr: str, body: str, path: str | None = None,
                  line: int | None = None, old: bool = False,
                  end_line: int | None = None) -> results.Posted:
    """A general comment; one on a diff line (`old`: the line as numbered in the old file,
    a removed line); on the lines `line`..`end_line` of one hunk; or, with a path and no
    line, on the whole file. A host with no ranges (Bitbucket Cloud) anchors one at its
    last line, and the body says which lines it covers."""
    key = await box.reached(mr)
    box.require_writes(key, "comment")
    text = outgoing(_body(body))
    end_line = anchors.check_lines(line, end_line)
    anchor = None
    if path is not None and path.strip().strip("/"):
        where = path.strip().lstrip("/")
        anchor = (await anchors.whole_file(box, key, where) if line is None else
                  await anchors.lines_anchor(box, key, where, line, old, end_line))
    elif path is not None:
        raise BadInput("--path: expected a file the MR changes")
    elif line is not None or old:
        raise BadInput("comment: --line and --old need --path (the file they are in)")
    if anchor is not None and anchor.whole_file and old:
        raise BadInput("comment: --old numbers a line: give --line too, or leave --old out "
                       "for a comment on the whole file")
    message = await box.call(key, "comment", box.host(key).comment(key, text, anchor))
    box.wrote(key, "comment", message.id)
    return results.Posted(mr=str(key), id=message.id, thread_id=message.thread_id,
                          adopted=False, note="")


async def approve(box: Toolbox, mr: str) -> results.Verdict:
    key = await box.reached(mr)
    box.require_writes(key, "approve")
    await box.call(key, "approve", box.host(key).approve(key))
    box.wrote(key, "approve")
    return results.Verdict(mr=str(key), action="approve", message_id="", note="")


async def unapprove(box: Toolbox, mr: str) -> results.Verdict:
    key = await box.reached(mr)
    box.require_writes(key, "unapprove")
    await box.call(key, "unapprove", box.host(key).unapprove(key))
    box.wrote(key, "unapprove")
    return results.Verdict(mr=str(key), action="unapprove", message_id="", note="")


async def request_changes(box: Toolbox, mr: str, body: str = "") -> results.Verdict:
    key = await box.reached(mr)
    box.require_writes(key, "request_changes")
    text = outgoing(_body(body)) if body else ""
    message = await box.call(key, "request_changes",
                             box.host(key).request_changes(key, text))
    box.wrote(key, "request_changes", message.id if message else "")
    return results.Verdict(mr=str(key), action="request_changes",
                           message_id=message.id if message else "", note="")
