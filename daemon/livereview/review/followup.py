"""A follow-up review after new commits: what not to raise again, what to resolve. Pure.

Findings are matched across reviews by a fingerprint of their file and first line, not by
line number (lines move when code is added above). An earlier finding whose thread a human
resolved, or in which the bot conceded (a lesson or a concession), is never raised again.
An earlier finding still open is not posted a second time either: its thread is there. An
open earlier finding in a file the new commits changed that the model does not raise again
is taken as fixed: its thread is resolved with a one-line note — but only when the model's
answer about that file was read in full. A file not read this time (skipped, gone from the
diff) or read unsure (an item about it was dropped, see findings.ParsedReview) proves
nothing: "not raised again" there may just be "not readable".
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from livereview.core.findings import Finding, Severity
from livereview.core.model import Identity, Thread

_WORD = re.compile(r"[^\W_]+")
# The change digest stored for a file whose findings may be incomplete: it equals no real
# digest, so the next follow-up reads the file again, and this run resolves nothing in it.
UNSURE = ""


def fingerprint(path: str, body: str) -> str:
    title = body.strip().splitlines()[0] if body.strip() else ""
    words = " ".join(w.lower() for w in _WORD.findall(title))
    return hashlib.sha256(f"{path}\0{words}".encode("utf-8", "surrogatepass")).hexdigest()[:24]


def of(finding: Finding) -> str:
    return fingerprint(finding.path, finding.title)


@dataclass(frozen=True)
class Earlier:
    """A finding an earlier review posted in a thread of its own."""

    id: int
    fingerprint: str
    path: str
    thread_id: str
    settled: bool  # resolved by a human, or conceded by the bot in its thread


@dataclass(frozen=True)
class FollowUp:
    post: tuple[Finding, ...]
    not_raised_again: int  # settled earlier
    already_open: int  # still open in their threads
    fixed: tuple[Earlier, ...]  # resolve these, with a note


def settled(thread: Thread | None, identity: Identity, conceded: Collection[str]) -> bool:
    """Has the point of this finding's thread been settled by the people in it? Resolved
    by someone, gone (deleted), or answered convincingly: the bot conceded in it (`conceded`:
    ids of the bot's replies that conceded or proposed a lesson)."""
    if thread is None or thread.resolved:
        return True
    return any(identity.is_me(m.author) and m.id in conceded for m in thread.messages)


def classify(prints: Iterable[str], earlier: Iterable[Earlier]) -> list[str]:
    """Per new finding (by fingerprint): "new" (post it), "settled" (a human resolved it or
    the bot conceded it: never again) or "open" (its earlier thread is still open)."""
    by_print: dict[str, bool] = {}
    for item in earlier:
        by_print[item.fingerprint] = by_print.get(item.fingerprint, False) or item.settled
    return ["new" if p not in by_print else "settled" if by_print[p] else "open"
            for p in prints]


def fixed(earlier: Iterable[Earlier], raised: Collection[str],
          changed_paths: Collection[str]) -> tuple[Earlier, ...]:
    """Earlier open findings in files the new commits changed that were not raised again."""
    return tuple(e for e in earlier if not e.settled and e.path in changed_paths
                 and e.fingerprint not in raised)


def read_in_full(now: Mapping[str, str], before: Mapping[str, str]) -> set[str]:
    """Paths whose change differs from the last reviewed one and whose findings this run
    read in full (`now`, `before`: path → change digest of this run and the last one):
    the only files where an earlier finding not raised again can be fixed."""
    return {path for path, digest in now.items()
            if digest != UNSURE and before.get(path) != digest}


def unsure(now: Mapping[str, str]) -> list[str]:
    """The files of this run whose findings may be incomplete."""
    return sorted(path for path, digest in now.items() if digest == UNSURE)


def follow_up(found: Iterable[Finding], earlier: Iterable[Earlier],
              changed_paths: Collection[str]) -> FollowUp:
    """Decide over the findings of a follow-up review, given the earlier findings of the MR
    and the paths whose change differs from the last reviewed head."""
    found, earlier = list(found), list(earlier)
    prints = [of(f) for f in found]
    kinds = classify(prints, earlier)
    # Two earlier findings with one fingerprint: a settled one wins (never raise again).
    settled_prints = {e.fingerprint for e in earlier if e.settled}
    return FollowUp(tuple(f for f, k in zip(found, kinds, strict=True) if k == "new"),
                    kinds.count("settled"), kinds.count("open"),
                    fixed([e for e in earlier if e.fingerprint not in settled_prints],
                          set(prints), changed_paths))


def overflow(inline: Sequence[tuple[int, Severity]], limit: int) -> dict[int, str]:
    """Inline findings beyond `limit` (the least severe first) go to the summary instead: a
    3 000-file MR must not become 3 000 threads."""
    if len(inline) <= limit:
        return {}
    ranked = sorted(inline, key=lambda item: (item[1].rank, item[0]))
    return {finding_id: "outside" for finding_id, _ in ranked[limit:]}
