"""Events → reply requests. Pure: no I/O, no clock, no store.

A message earns an answer when a human mentions one of the bot's aliases in it, or when a
human writes in a thread the bot already took part in (DESIGN.md §5). Everything else —
the bot itself, system notes, ignored users, comments older than the first-seen baseline,
messages already answered — is filtered here so the decision can be unit-tested.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from datetime import datetime, timedelta

from livereview.model import (
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

_MARKER = "<!-- livereview:reply-to={} -->"
_MARKER_RE = re.compile(r"<!-- livereview:reply-to=([^\s>]+) -->")
_FENCE_RE = re.compile(r"^ {0,3}(```|~~~)")
_INLINE_CODE_RE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
_HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)


def reply_marker(message_id: str) -> str:
    """The hidden marker every posted reply carries (DESIGN.md §4)."""
    return _MARKER.format(message_id)


def replied_to(body: str) -> str | None:
    """The message id a bot reply answers, read from its hidden marker."""
    match = _MARKER_RE.search(body)
    return match.group(1) if match else None


def prose(body: str) -> str:
    """The text of a comment that a person actually wrote as prose.

    Drops fenced code blocks, inline code spans, `>` quotes and HTML comments, so a
    mention that is quoted or shown as code does not summon the bot.
    """
    kept: list[str] = []
    fence: str | None = None
    for line in body.splitlines():
        opening = _FENCE_RE.match(line)
        if fence is not None:
            if opening and opening.group(1) == fence:
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        if line.lstrip().startswith(">"):
            continue
        kept.append(line)
    text = "\n".join(kept)
    text = _HTML_COMMENT_RE.sub(" ", text)
    return _INLINE_CODE_RE.sub(" ", text)


@functools.lru_cache(maxsize=64)
def _alias_pattern(alias: str) -> re.Pattern[str]:
    name = alias.lstrip("@")
    # Word-bounded: not preceded by a word char or '@' (e-mail addresses, @@x), not followed
    # by a character that could continue a username.
    return re.compile(rf"(?<![\w@]){re.escape('@' + name)}(?![\w-])", re.IGNORECASE)


def mentions(body: str, aliases: Iterable[str]) -> bool:
    text = prose(body)
    return any(_alias_pattern(alias).search(text) for alias in aliases if alias.strip("@ "))


@functools.lru_cache(maxsize=256)
def _glob(pattern: str) -> re.Pattern[str]:
    # Only * and ? are wildcards: "[" is literal, so "*[bot]" means GitHub's "[bot]" suffix
    # (fnmatch would read it as a character class and ignore everyone ending in b, o or t).
    body = re.escape(pattern.lower()).replace(r"\*", ".*").replace(r"\?", ".")
    return re.compile(f"^{body}$")


def asks_to_resolve(body: str, aliases: Iterable[str]) -> bool:
    """`@livereview resolve` (any alias, any case) written as prose."""
    text = prose(body)
    return any(re.search(_alias_pattern(alias).pattern + r"[\s,:]+resolve\b", text,
                         re.IGNORECASE) for alias in aliases if alias.strip("@ "))


def is_ignored(actor: Actor, patterns: Iterable[str]) -> bool:
    name = actor.username.lower()
    return any(_glob(p).match(name) for p in patterns)


def answered_ids(snapshot: Snapshot, identity: Identity) -> set[str]:
    """Messages the bot has already answered, read from the markers of its own replies."""
    done: set[str] = set()
    for thread in snapshot.threads:
        for message in thread.messages:
            if identity.is_me(message.author):
                target = replied_to(message.body)
                if target:
                    done.add(target)
    return done


def _bot_spoke_before(thread: Thread, message: Message, identity: Identity) -> bool:
    for earlier in thread.messages:
        if earlier.id == message.id:
            return False
        if identity.is_me(earlier.author):
            return True
    return False


def _bot_spoke_after(thread: Thread, message: Message, identity: Identity) -> bool:
    seen = False
    for other in thread.messages:
        if seen and identity.is_me(other.author):
            return True
        seen = seen or other.id == message.id
    return False


def _reason(
    event: Event, thread: Thread, message: Message, identity: Identity, policy: Policy
) -> JobReason | None:
    if mentions(message.body, policy.aliases):
        return JobReason.EDIT_MENTION if event.kind is EventKind.COMMENT_EDITED else (
            JobReason.MENTION
        )
    if event.kind is EventKind.COMMENT_ADDED and _bot_spoke_before(thread, message, identity):
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
    done = answered_ids(snapshot, identity)
    threads = {t.id: t for t in snapshot.threads}
    messages = snapshot.messages()
    requests: dict[str, ReplyRequest] = {}
    for event in events:
        if event.kind not in (EventKind.COMMENT_ADDED, EventKind.COMMENT_EDITED):
            continue
        thread = threads.get(event.thread_id)
        message = messages.get(event.message_id)
        if thread is None or message is None:
            continue
        if (
            message.system
            or identity.is_me(message.author)
            or is_ignored(message.author, policy.ignore_users)
            or message.created_at < baseline
            or message.id in done
            or _bot_spoke_after(thread, message, identity)
        ):
            continue
        reason = _reason(event, thread, message, identity, policy)
        if reason is not None:
            request = ReplyRequest(snapshot.mr.key, thread.id, message.id, reason,
                                   message.created_at)
            requests.setdefault(request.key, request)
    return list(requests.values())


def consecutive_bot_replies(thread: Thread, identity: Identity, policy: Policy) -> int:
    """The bot's replies at the end of `thread` with no human in between.

    Ignored users do not count as humans, nor does an answer that arrives within
    `automated_reply_seconds` of the bot's previous message: people do not type that fast,
    another bot answering us does.
    """
    count, last_bot_at = 0, None
    for message in thread.messages:
        if message.system:
            continue
        if identity.is_me(message.author):
            count, last_bot_at = count + 1, message.created_at
            continue
        automated = last_bot_at is not None and (
            message.created_at - last_bot_at).total_seconds() < policy.automated_reply_seconds
        if not automated and not is_ignored(message.author, policy.ignore_users):
            count = 0
    return count


def loop_guard(snapshot: Snapshot, thread: Thread, identity: Identity, policy: Policy,
               now: datetime) -> str | None:
    """Why the bot must not answer in `thread` now, or None (DESIGN.md §4 loop guards)."""
    consecutive = consecutive_bot_replies(thread, identity, policy)
    if consecutive >= policy.max_consecutive_replies:
        return (f"loop guard: {consecutive} bot replies in this thread without a human in "
                "between")
    hour_ago = now - timedelta(hours=1)
    recent = sum(1 for t in snapshot.threads for m in t.messages
                 if identity.is_me(m.author) and m.created_at > hour_ago)
    if recent >= policy.max_replies_per_mr_per_hour:
        return f"reply budget: {recent} bot replies in this MR in the last hour"
    return None
