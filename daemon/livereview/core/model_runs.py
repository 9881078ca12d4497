"""Review runs (docs/DESIGN.md §11): what asks for a review, the run that does it, and the
findings it stores — frozen dataclasses, as in `model.py`, which holds what every part of a
review shares with the conversation (MRs, anchors, verdicts)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from livereview.core.model import MRKey


class ReviewTrigger(enum.StrEnum):
    MENTION = "mention"  # `@livereview review` in a comment
    CLI = "cli"  # `livereview review <MR>`
    OPENED = "opened"  # repo policy review_on = ["opened"]
    PUSH = "push"  # repo policy review_on = ["push"]: a follow-up after new commits
    REPLY = "reply"  # a reply on a review that requested changes: its follow-up, at once
    REQUESTED = "requested"  # the bot was added as a reviewer (core/review_requests.py)


@dataclass(frozen=True, slots=True)
class ReviewRequest:
    mr: MRKey
    trigger: ReviewTrigger
    detail: str = ""  # the asking message's id (mention), the head sha (push, cli), when
    # the bot was asked as a reviewer (requested: that request's generation)
    thread_id: str = ""
    explicit: bool = False  # asked by a person: a draft MR is reviewed too

    @property
    def key(self) -> str:
        return f"{self.mr.host}:{self.mr.repo}:{self.mr.iid}:review:{self.trigger}:{self.detail}"


@dataclass(frozen=True, slots=True)
class AwaitingReview:
    """The MR's last review, finished with changes requested and nothing after it: a reply
    on it (in its summary's thread, or naming its id) asks for the follow-up at once."""

    review_id: str  # the host's, from the create response (GitHub's review; else the summary)
    summary_message_id: str
    finished_at: datetime


class ReviewState(enum.StrEnum):
    PENDING = "pending"  # asked for; nothing read yet
    REVIEWING = "reviewing"  # reading the diff file by file, findings stored as they come
    POSTING = "posting"  # findings, summary and verdict decided: putting them on the host
    NOTIFYING = "notifying"  # on the host; telling the author and the notifiers
    DONE = "done"
    SKIPPED = "skipped"
    FAILED = "failed"

    @property
    def open(self) -> bool:
        return self in (ReviewState.PENDING, ReviewState.REVIEWING, ReviewState.POSTING,
                        ReviewState.NOTIFYING)


@dataclass(frozen=True, slots=True)
class ReviewRun:
    """A persisted review run, as the runner sees it (columns of review_runs)."""

    id: int
    key: str
    token: str
    mr: MRKey
    trigger: ReviewTrigger
    trigger_thread_id: str
    trigger_message_id: str
    explicit: bool
    state: ReviewState
    attempts: int
    head_sha: str = ""
    base_sha: str = ""
    start_sha: str = ""
    previous_run_id: int | None = None
    previous_head_sha: str = ""
    files_done: int = 0
    files_reviewed: int = 0
    skipped_total: int = 0
    notes: str = ""
    knowledge: str = "[]"  # JSON: [{source, kind, relevance}] the prompts showed
    not_raised_again: int = 0
    verdict: str = ""
    verdict_applied: str = ""
    review_id: str = ""
    summary_message_id: str = ""
    ack_started: bool = False
    acked: bool = False
    post_started: bool = False
    posted: bool = False
    verdict_started: bool = False
    verdict_done: bool = False
    notify_started: bool = False
    notice_message_id: str = ""
    notifiers_done: str = ""
    last_error: str = ""


@dataclass(frozen=True, slots=True)
class StoredFinding:
    """A finding as stored for its run; ids are the host's, from its create responses."""

    id: int
    run_id: int
    number: int
    severity: str
    path: str
    line: int
    side: str
    old_path: str
    old_line: int | None
    body: str
    fingerprint: str
    placement: str
    category: str = "general"
    confidence: float = 1.0
    post_started: bool = False
    message_id: str = ""
    thread_id: str = ""
    fix_started: bool = False
    fixed: bool = False
