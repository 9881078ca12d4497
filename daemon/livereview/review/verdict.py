"""The verdict, decided from the findings. Pure.

Any finding of a severity in `changes_requested_on` (critical, by default) requests
changes; an MR with nothing at or above `approve_below` is approved (if allowed);
anything else is a comment.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from livereview.model import Verdict
from livereview.review.findings import Severity


@dataclass(frozen=True)
class VerdictPolicy:
    changes_requested_on: frozenset[Severity] = frozenset({Severity.CRITICAL})
    approve: bool = True  # may the bot approve at all?
    approve_despite: frozenset[Severity] = frozenset({Severity.SUGGESTION})


def decide(severities: Iterable[Severity], policy: VerdictPolicy = VerdictPolicy()) -> Verdict:
    seen = set(severities)
    if seen & policy.changes_requested_on:
        return Verdict.CHANGES_REQUESTED
    if policy.approve and seen <= policy.approve_despite:
        return Verdict.APPROVED
    return Verdict.COMMENTED
