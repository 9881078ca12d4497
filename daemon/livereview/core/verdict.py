"""The verdict, decided from the findings. Pure.

Any finding of a severity in `changes_requested_on` (critical, by default) requests
changes; an MR with nothing but `approve_despite` severities is approved (if allowed),
and only when the review read every file's findings in full (`complete`): a review whose
model answer lost items — invalid, or beyond the cap — cannot know the MR is fine;
anything else is a comment.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from livereview.core.findings import Severity
from livereview.core.model import Verdict


@dataclass(frozen=True)
class VerdictPolicy:
    changes_requested_on: frozenset[Severity] = frozenset({Severity.CRITICAL})
    approve: bool = True  # may the bot approve at all?
    approve_despite: frozenset[Severity] = frozenset({Severity.SUGGESTION})


def decide(severities: Iterable[Severity], policy: VerdictPolicy = VerdictPolicy(),
           complete: bool = True) -> Verdict:
    seen = set(severities)
    if seen & policy.changes_requested_on:
        return Verdict.CHANGES_REQUESTED
    if policy.approve and complete and seen <= policy.approve_despite:
        return Verdict.APPROVED
    return Verdict.COMMENTED
