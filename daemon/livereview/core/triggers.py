"""Events → reply requests. Pure: no I/O, no clock, no store.

A message earns an answer when a human mentions one of the bot's aliases in it, or when a
human writes in a thread the bot already took part in (docs/DESIGN.md §5). Everything else —
the bot itself, system notes, other bots, comments older than the first-seen baseline,
messages already answered — is filtered here so the decision can be unit-tested.

Every function is linear in the size of the MR: a thread can hold 100 000 notes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from livereview.core.markdown import prose
from livereview.core.model import (
    EDIT_SUFFIX,
    Actor,
    Event,
    EventKind,
    Identity,
    JobReason,
    Message,
    Policy,
    ReplyRequest,
    Snapshot,
    Thread,
)
from livereview.core.model_runs import AwaitingReview, ReviewRequest, ReviewTrigger

PROSE_CHARS = 65_536  # of a comment searched for a mention (GitLab allows 1 MB notes)
_MARKER = "<!-- livereview:reply-to={} -->"
_ACK_MARKER = "<!-- livereview:ack-for={} -->"
# Only the bot's own last line counts: a marker a commenter smuggles into text the bot quotes
# or the model echoes is defused before posting (sanitize.outgoing) and is never last.
_TRAILING_MARKER = re.compile(r"(?:\A|\n)<!-- livereview:reply-to=([\w:.\-]+) -->\s*\Z")
_TRAILING_ACK = re.compile(r"(?:\A|\n)<!-- livereview:ack-for=([\w:.\-]+) -->\s*\Z")


def reply_marker(message_id: str) -> str:
    """The hidden marker every posted reply ends with (docs/DESIGN.md §4)."""
    return _MARKER.format(message_id)


def replied_to(body: str) -> str | None:
    """The message id a bot reply answers: its last line, in the exact form the bot writes."""
    match = _TRAILING_MARKER.search(body[-300:])
    return match.group(1) if match else None


def ack_marker(message_id: str) -> str:
    """The hidden last line of an acknowledgement comment (hosts without reactions)."""
    return _ACK_MARKER.format(message_id)


def acked_for(body: str) -> str | None:
    """The message id an acknowledgement comment acknowledges, read like `replied_to`."""
    match = _TRAILING_ACK.search(body[-300:])
    return match.group(1) if match else None


def is_ack(message: Message, identity: Identity) -> bool:
    """The bot's own acknowledgement comment: part of the thread, but not an answer — it
    does not count against the loop guards and is no context for the model."""
    return identity.is_me(message.author) and acked_for(message.body) is not None


@functools.lru_cache(maxsize=64)
def _alias_pattern(alias: str) -> re.Pattern[str]:
    name = alias.lstrip("@")
    # Word-bounded: not preceded by a word char or '@' (e-mail addresses, @@x), not followed
    # by a character that could continue a username.
    return re.compile(rf"(?<![\w@]){re.escape('@' + name)}(?![\w-])", re.IGNORECASE)


def _names(aliases: Iterable[str]) -> list[str]:
    return [alias for alias in aliases if alias.strip("@ ")]


def mentions(body: str, aliases: Iterable[str]) -> bool:
    """Does `body` mention an alias in prose (not in code, a link, a quote or a comment)?
    Only the first PROSE_CHARS are read: Markdown parsing of a megabyte of `[` takes seconds."""
    names = _names(aliases)
    head = body[:PROSE_CHARS]
    lowered = head.lower()
    if not any(alias.lower() in lowered for alias in names):
        return False  # most comments: no Markdown parsing at all
    text = prose(head)
    return any(_alias_pattern(alias).search(text) for alias in names)


def asks_to_resolve(body: str, aliases: Iterable[str]) -> bool:
    """`@livereview resolve` (any alias, any case) written as prose."""
    names = _names(aliases)
    if not mentions(body, names):
        return False
    text = prose(body[:PROSE_CHARS])
    return any(re.search(_alias_pattern(alias).pattern + r"[\s,:]+resolve\b", text,
                         re.IGNORECASE) for alias in names)


@functools.lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    # Only * and ? are wildcards: "[" is literal, so "*[bot]" means GitHub's "[bot]" suffix
    # (fnmatch would read it as a character class and ignore everyone ending in b, o or t).
    body = re.escape(pattern.lower()).replace(r"\*", ".*").replace(r"\?", ".")
    return re.compile(f"^{body}$")


def is_ignored(actor: Actor, patterns: Iterable[str]) -> bool:
    name = actor.username.lower()
    return any(_glob(p).match(name) for p in patterns)


def is_other_bot(message: Message, policy: Policy) -> bool:
    """Written by an automated account, whatever `ignore_users` forgets: the host marks it
    (a GitHub App, a GitLab access-token or service account), its login ends in `[bot]`,
    it is listed in `ignore_users`, or it signs its posts the way livereview does (another
    instance of this daemon under another account)."""
    author = message.author
    return (author.bot or author.username.lower().endswith("[bot]")
            or is_ignored(author, policy.ignore_users) or replied_to(message.body) is not None
            or acked_for(message.body) is not None)


def bot_replies(snapshot: Snapshot, identity: Identity) -> dict[str, Message]:
    """What "answered" means, for the daemon (`reply_requests`) and the agent tools
    (`comments`, `reply`) alike: a message is answered when the host shows the bot's reply
    to it, the message id in the marker its reply ends with — anywhere on the MR (GitHub's
    general comments are not threaded), whichever process, replica or store posted it, or
    none that this one can see (a store restored from backup, a reply from before replies
    were recorded). Message id → the bot's first such reply."""
    found: dict[str, Message] = {}
    for thread in snapshot.threads:
        for message in thread.messages:
            if identity.is_me(message.author):
                target = replied_to(message.body)
                if target:
                    found.setdefault(target.split(EDIT_SUFFIX, 1)[0], message)
    return found


def answered_edits(snapshot: Snapshot, identity: Identity) -> dict[str, set[str]]:
    """Message id → the digests of its edited versions the host shows the bot answered
    (their markers end in `EDIT_SUFFIX` + digest, core/edits.py)."""
    found: dict[str, set[str]] = {}
    for thread in snapshot.threads:
        for message in thread.messages:
            target = replied_to(message.body) if identity.is_me(message.author) else None
            if target and EDIT_SUFFIX in target:
                question, version = target.split(EDIT_SUFFIX, 1)
                found.setdefault(question, set()).add(version)
    return found


@dataclass(frozen=True)
class _ThreadIndex:
    """Where each message sits in its thread and where the bot first and last spoke: one
    pass, so 'did the bot speak before/after this message?' costs O(1), not O(thread)."""

    position: dict[str, int]
    first_bot: int | None
    last_bot: int | None

    @classmethod
    def of(cls, thread: Thread, identity: Identity) -> _ThreadIndex:
        position: dict[str, int] = {}
        first = last = None
        for i, message in enumerate(thread.messages):
            position[message.id] = i
            if identity.is_me(message.author):
                first = i if first is None else first
                last = i
        return cls(position, first, last)

    def bot_spoke_before(self, message_id: str) -> bool:
        at = self.position.get(message_id)
        return at is not None and self.first_bot is not None and self.first_bot < at

    def bot_spoke_after(self, message_id: str) -> bool:
        at = self.position.get(message_id)
        return at is not None and self.last_bot is not None and self.last_bot > at


def _reason(event: Event, message: Message, index: _ThreadIndex, policy: Policy
            ) -> JobReason | None:
    if mentions(message.body, policy.aliases):
        return JobReason.EDIT_MENTION if event.kind is EventKind.COMMENT_EDITED else (
            JobReason.MENTION
        )
    if event.kind is EventKind.COMMENT_ADDED and index.bot_spoke_before(message.id):
        return JobReason.THREAD_REPLY
    return None


def reply_requests(
    events: Iterable[Event],
    snapshot: Snapshot,
    identity: Identity,
    policy: Policy,
    baseline: datetime,
) -> list[ReplyRequest]:
    """Decide which of the new or edited messages of one MR the bot must answer.

    `baseline` is the first-seen time of the repo minus the backfill window: anything
    created before it is history, never answered.
    """
    done = bot_replies(snapshot, identity)
    threads = {t.id: t for t in snapshot.threads}
    messages = snapshot.messages()
    indexes: dict[str, _ThreadIndex] = {}
    requests: dict[str, ReplyRequest] = {}
    for event in events:
        if event.kind not in (EventKind.COMMENT_ADDED, EventKind.COMMENT_EDITED):
            continue
        thread = threads.get(event.thread_id)
        message = messages.get(event.message_id)
        if thread is None or message is None:
            continue
        if (message.system or identity.is_me(message.author) or message.created_at < baseline
                or message.id in done or is_other_bot(message, policy)):
            continue
        index = indexes.get(thread.id)
        if index is None:
            index = indexes[thread.id] = _ThreadIndex.of(thread, identity)
        if index.bot_spoke_after(message.id):
            continue
        reason = _reason(event, message, index, policy)
        if reason is not None:
            request = ReplyRequest(snapshot.mr.key, thread.id, message.id, reason,
                                   message.created_at)
            requests.setdefault(request.key, request)
    return list(requests.values())


def _looks_automated(message: Message, last_bot_at: datetime | None, policy: Policy) -> bool:
    """Behaviour no person shows: an answer to the bot faster than anyone types, or a post
    that hides metadata in HTML comments, as bots sign theirs."""
    fast = last_bot_at is not None and (
        message.created_at - last_bot_at).total_seconds() < policy.automated_reply_seconds
    return fast or _hides_a_comment(message.body)


def _hides_a_comment(body: str) -> bool:
    """An HTML comment in the text (linear: a regex for `<!--.*?-->` is quadratic on a
    comment made of `<!--` repeated)."""
    start = body.find("<!--")
    return start >= 0 and body.find("-->", start + 4) >= 0


def consecutive_bot_replies(thread: Thread, identity: Identity, policy: Policy) -> int:
    """The bot's replies at the end of `thread` with no human in between.

    Other bots do not count as humans (host markers, `ignore_users`), nor does a message
    that behaves like a bot's (see `_looks_automated`)."""
    count, last_bot_at = 0, None
    for message in thread.messages:
        if message.system or is_ack(message, identity):
            continue
        if identity.is_me(message.author):
            count, last_bot_at = count + 1, message.created_at
            continue
        if not (is_other_bot(message, policy) or _looks_automated(message, last_bot_at, policy)):
            count = 0
    return count


def exchange_replies(thread: Thread, identity: Identity) -> int:
    """The bot's replies at the end of `thread` since anyone other than its current
    counterpart wrote. However slowly it answers, a bot that keeps replying to the bot is
    one counterpart talking to it forever: this caps that, whatever the timing."""
    count, counterpart = 0, None
    for message in thread.messages:
        if message.system or is_ack(message, identity):
            continue
        if identity.is_me(message.author):
            count += 1
            continue
        if message.author.id != counterpart:
            count, counterpart = 0, message.author.id
    return count


def loop_guard(snapshot: Snapshot, thread: Thread, identity: Identity, policy: Policy,
               now: datetime) -> str | None:
    """Why the bot must not answer in `thread` now, or None (docs/DESIGN.md §4)."""
    consecutive = consecutive_bot_replies(thread, identity, policy)
    if consecutive >= policy.max_consecutive_replies:
        return (f"loop guard: {consecutive} bot replies in this thread without a human in "
                "between")
    exchange = exchange_replies(thread, identity)
    if exchange >= policy.max_exchange_replies:
        return (f"loop guard: {exchange} bot replies in this thread to one counterpart with "
                "nobody else writing (another bot?)")
    hour_ago = now - timedelta(hours=1)

    def replies(messages: Iterable[Message]) -> int:
        return sum(1 for m in messages if identity.is_me(m.author) and m.created_at > hour_ago
                   and not is_ack(m, identity))

    in_thread = replies(thread.messages)
    if in_thread >= policy.max_replies_per_thread_per_hour:
        return (f"reply budget: {in_thread} bot replies in this thread in the last hour "
                "(accounts taking turns?)")
    recent = replies(m for t in snapshot.threads for m in t.messages)
    if recent >= policy.max_replies_per_mr_per_hour:
        return f"reply budget: {recent} bot replies in this MR in the last hour"
    return None


# ---- reviews (docs/DESIGN.md §11): `@livereview review`, and repo policy -------------------------
_DRAFT = re.compile(r"\s*(?:\[draft\]|\(draft\)|draft:|draft\s+-|\[wip\]|wip:)", re.IGNORECASE)


def is_draft(title: str) -> bool:
    """GitLab's rule for a draft MR (its title starts with Draft:, [Draft], (Draft)); GitHub
    drafts carry the same prefix by convention when the model has no draft flag."""
    return bool(_DRAFT.match(title))


def asks_to_review(body: str, aliases: Iterable[str]) -> bool:
    """`@livereview review` (any alias, any case) written as prose."""
    names = _names(aliases)
    if not mentions(body, names):
        return False
    text = prose(body[:PROSE_CHARS])
    return any(re.search(_alias_pattern(alias).pattern + r"[\s,:]+review\b", text,
                         re.IGNORECASE) for alias in names)


def review_requests(events: Iterable[Event], snapshot: Snapshot, first_sight: bool,
                    asked: Iterable[ReplyRequest], policy: Policy, review_on: Iterable[str],
                    baseline: datetime) -> list[ReviewRequest]:
    """Reviews to run for one MR: one per `@livereview review` among the reply requests
    (`asked`, already filtered like any mention), one when the repo reviews new MRs and the
    MR is seen for the first time (and was opened after `baseline`: a daemon starting on
    a repo does not review its whole backlog), one per new head when it re-reviews after pushes. A
    draft is reviewed only when a person asks."""
    mr = snapshot.mr
    messages = snapshot.messages()
    found: list[ReviewRequest] = []
    for request in asked:
        message = messages.get(request.message_id)
        if message is not None and asks_to_review(message.body, policy.aliases):
            found.append(ReviewRequest(mr.key, ReviewTrigger.MENTION, request.message_id,
                                       request.thread_id, explicit=True))
    wanted = set(review_on)
    if mr.state != "opened" or is_draft(mr.title):
        return found
    if "opened" in wanted and first_sight and mr.created_at >= baseline:
        found.append(ReviewRequest(mr.key, ReviewTrigger.OPENED, mr.head_sha))
    pushed = any(e.kind in (EventKind.COMMIT_PUSH, EventKind.FORCE_PUSH) for e in events)
    if "push" in wanted and pushed and not first_sight:
        found.append(ReviewRequest(mr.key, ReviewTrigger.PUSH, mr.head_sha))
    return found


# ---- the follow-up on a reply to a review (docs/DESIGN.md §11) -----------------------------
def names_review(body: str, review_id: str) -> bool:
    """"review 4711" (also "review #4711", "review id 4711", any case) in the prose of a
    message: quoted text and code do not count (quoting the notice is not replying)."""
    if not review_id:
        return False
    pattern = rf"\breview\s*(?:id\s*)?[#:]?\s*{re.escape(review_id)}(?![\w-])"
    return re.search(pattern, prose(body[:PROSE_CHARS]), re.IGNORECASE) is not None


def reply_follow_ups(events: Iterable[Event], snapshot: Snapshot, awaiting: AwaitingReview,
                     identity: Identity, policy: Policy) -> list[ReviewRequest]:
    """A follow-up review per new message of a person that replies on the awaited review:
    in the thread of its summary (GitLab and Bitbucket take replies there), or anywhere
    naming its id (GitHub's review body takes none: a PR comment or a reply in one of its
    threads that says `review <id>`). Written after the review finished, never by the
    bot or another bot; each is its own request (keyed by the reply), so it is asked for
    once, and the reply gets the review rather than an answer."""
    mr = snapshot.mr
    if mr.state != "opened":
        return []
    summary_thread = next((t.id for t in snapshot.threads
                           if any(m.id == awaiting.summary_message_id for m in t.messages)),
                          None)
    messages = snapshot.messages()
    summary = messages.get(awaiting.summary_message_id)
    # By the host's clock where it can: the summary's own time (ours may differ from it).
    since = summary.created_at if summary is not None else awaiting.finished_at
    found: list[ReviewRequest] = []
    for event in events:
        if event.kind is not EventKind.COMMENT_ADDED:
            continue
        message = messages.get(event.message_id)
        if message is None or message.system or identity.is_me(message.author) \
                or is_other_bot(message, policy) or message.created_at < since:
            continue
        if (event.thread_id == summary_thread and message.id != awaiting.summary_message_id) \
                or names_review(message.body, awaiting.review_id):
            found.append(ReviewRequest(mr.key, ReviewTrigger.REPLY, message.id,
                                       event.thread_id, explicit=True))
    return found
