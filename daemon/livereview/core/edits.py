"""When an edited question asks something new (docs/DESIGN.md §4, idempotency keys). Pure.

A question the bot answered and its author then edited earns one new answer when the edit
changes what is asked; a cosmetic edit — whitespace, letter case, punctuation, a one- or
two-character typo fix inside a word — does not. The rule, on `normalise`d text:

- equal normalised texts: cosmetic;
- otherwise cosmetic only when both have the same words but for at most two, every changed
  pair keeps its first letter, is at least three letters long, holds no digit, and the
  changed pairs differ by at most two edits in all (Damerau–Levenshtein: a swap is one),
  and no word loses more than a third of its letters to them.

So "recieve" → "receive" and "teh" → "the" are typo fixes, while "safe" → "unsafe",
"this" → "that", "line 10" → "line 12", "is" → "it" and a word added or removed change
the question.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from livereview.core.model import (
    Event,
    EventKind,
    Identity,
    JobReason,
    Policy,
    ReplyRequest,
    Snapshot,
)
from livereview.core.triggers import answered_edits, bot_replies, is_other_bot

MAX_TYPO_EDITS = 2  # characters changed, in all, by a typo fix
MIN_TYPO_WORD = 3  # shorter words carry too much meaning per letter ("is"/"it", "no"/"so")


def normalise(text: str) -> str:
    """The question's content: NFKC, case-folded, punctuation and symbols dropped (each
    counts as a space), whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(" " if unicodedata.category(c)[0] in "PSZC" else c for c in folded)
    return " ".join(kept.split())


def digest(text: str) -> str:
    """A short, stable name of the question's normalised content (for idempotency keys)."""
    return hashlib.sha256(normalise(text).encode()).hexdigest()[:16]


def _distance(a: str, b: str, limit: int) -> int:
    """Damerau–Levenshtein (optimal string alignment) distance of `a` and `b`, or `limit`+1
    once it is sure to exceed `limit` (words are short; the cut keeps it linear anyway)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1,
                             previous[j - 1] + (ca != cb))
            if (i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb):
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def _typo(a: str, b: str) -> int | None:
    """The edits of a typo fix turning word `a` into word `b`, or None if it is not one."""
    if (min(len(a), len(b)) < MIN_TYPO_WORD or a[0] != b[0]
            or any(c.isdigit() for c in a + b)):
        return None
    edits = _distance(a, b, MAX_TYPO_EDITS)
    return edits if edits <= MAX_TYPO_EDITS and 3 * edits <= min(len(a), len(b)) else None


def changes_question(before: str, after: str) -> bool:
    """Does the edit from `before` to `after` change what is asked (module docstring)?"""
    old, new = normalise(before).split(), normalise(after).split()
    if old == new:
        return False
    if len(old) != len(new):
        return True
    pairs = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    if len(pairs) > MAX_TYPO_EDITS:
        return True
    total = 0
    for a, b in pairs:
        edits = _typo(a, b)
        if edits is None:
            return True
        total += edits
    return total > MAX_TYPO_EDITS


@dataclass(frozen=True, slots=True)
class EditDecisions:
    requests: tuple[ReplyRequest, ...]
    capped: tuple[str, ...]  # message ids whose edit went unanswered: max_edit_answers reached


def edit_requests(events: Iterable[Event], stored: Snapshot | None, fresh: Snapshot,
                  identity: Identity, policy: Policy, baseline: datetime) -> EditDecisions:
    """One new answer per answered question whose edit changes what is asked, keyed by the
    new content (a restart, a replica or a second poll of the same text asks no more). A
    question not answered yet is no business of this: its job, keyed by the message alone,
    answers whatever the text is when it runs (`triggers.reply_requests`)."""
    if stored is None:
        return EditDecisions((), ())
    before, after = stored.messages(), fresh.messages()
    done = bot_replies(fresh, identity)
    versions = answered_edits(fresh, identity)
    requests: dict[str, ReplyRequest] = {}
    capped: list[str] = []
    for event in events:
        was, message = before.get(event.message_id), after.get(event.message_id)
        if (event.kind is not EventKind.COMMENT_EDITED or was is None or message is None
                or message.id not in done or message.system or identity.is_me(message.author)
                or message.created_at < baseline or is_other_bot(message, policy)
                or not changes_question(was.body, message.body)):
            continue
        seen = versions.get(message.id, set())
        version = digest(message.body)
        if version in seen:
            continue
        if len(seen) >= policy.max_edit_answers:
            capped.append(message.id)
            continue
        request = ReplyRequest(fresh.mr.key, message.thread_id, message.id,
                               JobReason.EDITED_QUESTION, message.created_at, edit=version)
        requests.setdefault(request.key, request)
    return EditDecisions(tuple(requests.values()), tuple(capped))
