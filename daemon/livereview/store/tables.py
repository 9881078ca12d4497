"""SQLModel tables: the persisted review model, events, reply jobs and poll watermarks.

Rows only live here; `store/*` converts them to and from `model` dataclasses. Datetimes
are timezone-aware (SQLModel's UTCDateTime stores UTC and hands back aware values).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


class ProviderIdentity(SQLModel, table=True):
    __tablename__ = "provider_identities"
    id: int | None = Field(default=None, primary_key=True)
    host: str = Field(unique=True)
    user_id: str
    username: str
    checked_at: datetime


class MRConversation(SQLModel, table=True):
    __tablename__ = "mr_conversations"
    __table_args__ = (UniqueConstraint("host", "repo", "iid"),)
    id: int | None = Field(default=None, primary_key=True)
    host: str = Field(index=True)
    repo: str
    iid: int
    title: str
    description: str = Field(sa_type=Text)
    author_id: str
    author_username: str
    author_name: str = ""
    source_branch: str
    target_branch: str
    state: str
    head_sha: str
    base_sha: str
    start_sha: str
    web_url: str
    created_at: datetime
    updated_at: datetime  # the host's updated_at
    fetched_at: datetime  # when we last fetched it
    last_activity_at: datetime  # newest human message or push we saw (drives hot polling)
    reviewers: str = Field(default="", sa_type=Text)  # JSON [[id, username], …] (0015)
    # False: stored without its commits (Snapshot.commits None, 0016), not "no commits".
    commits_read: bool = True
    # False: stored from a listing row, its diff refs not read (MergeRequest.base_sha and
    # start_sha None, 0017); base_sha and start_sha are "" then.
    diff_refs_read: bool = True


class MRCommit(SQLModel, table=True):
    __tablename__ = "mr_commits"
    id: int | None = Field(default=None, primary_key=True)
    conversation_id: int = Field(foreign_key="mr_conversations.id", index=True)
    position: int
    sha: str
    title: str
    created_at: datetime
    parent_ids: str = ""  # space-separated
    message: str = Field(default="", sa_type=Text)
    author: str = ""


class MRThread(SQLModel, table=True):
    __tablename__ = "mr_threads"
    id: int | None = Field(default=None, primary_key=True)
    conversation_id: int = Field(foreign_key="mr_conversations.id", index=True)
    position: int
    host_thread_id: str
    individual: bool = False
    resolvable: bool = False
    resolved: bool = False
    new_path: str | None = None
    old_path: str | None = None
    new_line: int | None = None
    old_line: int | None = None
    base_sha: str | None = None
    start_sha: str | None = None
    head_sha: str | None = None


class MRMessage(SQLModel, table=True):
    __tablename__ = "mr_messages"
    id: int | None = Field(default=None, primary_key=True)
    conversation_id: int = Field(foreign_key="mr_conversations.id", index=True)
    position: int
    host_message_id: str
    host_thread_id: str
    in_reply_to: str | None = None  # the previous message of the thread
    author_id: str
    author_username: str
    author_name: str = ""
    author_bot: bool = False  # the host marks the author as automated (model.Actor.bot)
    actor_kind: str  # model.ActorKind
    kind: str  # "comment" | "system"
    body: str = Field(sa_type=Text)
    created_at: datetime
    updated_at: datetime


class MRReaction(SQLModel, table=True):
    __tablename__ = "mr_reactions"
    id: int | None = Field(default=None, primary_key=True)
    conversation_id: int = Field(foreign_key="mr_conversations.id", index=True)
    host_message_id: str
    host_reaction_id: str = ""
    name: str
    user_id: str
    username: str
    created_at: datetime | None = None


class KnowledgeRef(SQLModel, table=True):
    __tablename__ = "knowledge_refs"
    id: int | None = Field(default=None, primary_key=True)
    host: str
    repo: str
    host_message_id: str = Field(index=True)  # the posted reply that cited it
    url: str
    title: str = ""
    kind: str = ""  # core.prompt.RefKind's value (doc, code, link, …), "" when unknown
    relevance: float = 0.0  # as the prompt ranked it (core.prompt.ranked), 0..1
    snippet: str = Field(default="", sa_type=Text)
    created_at: datetime


class AIMemory(SQLModel, table=True):
    __tablename__ = "ai_memory"
    id: int | None = Field(default=None, primary_key=True)
    key: str
    value: str = Field(sa_type=Text)
    scope: str = Field(index=True)  # "repo:<host>:<path>" | "group:<host>:<path>" | "global"
    status: str = "proposed"  # proposed | active | rejected | archived
    source_message_id: str = ""
    created_by: str = ""
    created_at: datetime
    updated_at: datetime


class EventRow(SQLModel, table=True):
    __tablename__ = "events"
    id: int | None = Field(default=None, primary_key=True)
    conversation_id: int = Field(foreign_key="mr_conversations.id", index=True)
    kind: str
    host_thread_id: str = ""
    host_message_id: str = ""
    detail: str = ""
    created_at: datetime


class ReplyJobRow(SQLModel, table=True):
    __tablename__ = "reply_jobs"
    id: int | None = Field(default=None, primary_key=True)
    key: str = Field(unique=True)  # host:repo:mr:message — the idempotency key
    host: str
    repo: str
    iid: int
    host_thread_id: str
    host_message_id: str
    reason: str
    state: str = Field(index=True)  # pending | acked | answered | posted | skipped | failed
    attempts: int = 0
    next_attempt_at: datetime
    last_error: str = ""
    comment_created_at: datetime
    created_at: datetime
    updated_at: datetime
    acked_at: datetime | None = None
    answer: str | None = Field(default=None, sa_type=Text)
    answer_meta: str | None = Field(default=None, sa_type=Text)  # JSON: mode, lesson, citations
    lessons_used: str = ""  # space-separated ai_memory ids the answer's prompt contained
    ack_started_at: datetime | None = None  # an ack comment was being posted (no reactions)
    post_started_at: datetime | None = None
    posted_message_id: str | None = None
    posted_at: datetime | None = None


class PollWatermark(SQLModel, table=True):
    __tablename__ = "poll_watermarks"
    __table_args__ = (UniqueConstraint("host", "scope"),)
    id: int | None = Field(default=None, primary_key=True)
    host: str
    scope: str  # a repo path, or "*" for an instance-wide listing
    first_seen_at: datetime  # the backfill baseline is measured from here
    listed_until: datetime | None = None  # start time of the last successful listing


class MRSyncFailure(SQLModel, table=True):
    """An MR the listing named whose fetch failed: synced again until it works, across
    restarts (the listing watermark has moved past it)."""

    __tablename__ = "mr_sync_failures"
    __table_args__ = (UniqueConstraint("host", "repo", "iid"),)
    id: int | None = Field(default=None, primary_key=True)
    host: str = Field(index=True)
    repo: str
    iid: int
    failures: int = 1
    last_error: str = Field(default="", sa_type=Text)
    first_failed_at: datetime
    last_failed_at: datetime


class MRSighting(SQLModel, table=True):
    """An MR known from the listing alone (docs/DESIGN.md, first sight): idle since before
    its repo's baseline, so it holds nothing to answer and is not read until its
    `updated_at` moves. Gone once the MR is read and stored."""

    __tablename__ = "mr_sightings"
    __table_args__ = (UniqueConstraint("host", "repo", "iid"),)
    id: int | None = Field(default=None, primary_key=True)
    host: str = Field(index=True)
    repo: str
    iid: int
    updated_at: datetime  # the host's updated_at the listing showed
    seen_at: datetime  # when the listing showed it


# ---- reviews (docs/DESIGN.md §11) ----------------------------------------------------------------
class ReviewRunRow(SQLModel, table=True):
    """One review of one MR at one head: the persisted state machine of review/runner.py
    (pending → reviewing → posting → notifying → done, or skipped / failed)."""

    __tablename__ = "review_runs"
    # The poller asks per MR it syncs whether a review awaits a reply (reviews.awaiting).
    __table_args__ = (Index("ix_review_runs_mr", "host", "repo", "iid"),)
    id: int | None = Field(default=None, primary_key=True)
    key: str = Field(unique=True)  # what asked for it: the idempotency key
    token: str = Field(unique=True)  # in every marker it posts (not the row id: ids repeat)
    host: str
    repo: str
    iid: int
    trigger: str  # mention | cli | opened | push | reply
    trigger_thread_id: str = ""
    trigger_message_id: str = ""
    explicit: bool = False  # asked by a person: drafts are reviewed too
    state: str = Field(index=True)
    attempts: int = 0
    next_attempt_at: datetime
    last_error: str = Field(default="", sa_type=Text)
    head_sha: str = ""
    base_sha: str = ""
    start_sha: str = ""
    previous_run_id: int | None = None  # the review a follow-up continues
    previous_head_sha: str = ""
    files_done: int = 0  # files of the diff already read (a crash resumes after them)
    files_reviewed: int = 0
    skipped_total: int = 0
    notes: str = Field(default="", sa_type=Text)  # JSON list: the model's overall remarks
    # JSON list of the knowledge the prompts showed: {source, kind, relevance} (the highest
    # relevance over the run's batches)
    knowledge: str = Field(default="[]", sa_type=Text)
    not_raised_again: int = 0
    verdict: str = ""  # approved | changes_requested | commented (machine-readable)
    verdict_applied: str = ""  # what the host took (COMMENT on GitHub's own PR)
    review_id: str = ""  # GitHub's review id; elsewhere the summary note's id
    summary_message_id: str = ""
    ack_started_at: datetime | None = None
    acked_at: datetime | None = None
    post_started_at: datetime | None = None
    posted_at: datetime | None = None
    verdict_started_at: datetime | None = None
    verdict_at: datetime | None = None
    notify_started_at: datetime | None = None
    notice_message_id: str = ""
    notifiers_done: str = ""  # space-separated names of the notifiers that succeeded
    completed_at: datetime | None = None
    created_at: datetime
    updated_at: datetime


class ReviewFindingRow(SQLModel, table=True):
    """A finding of a run; `message_id` / `thread_id` come from the host's create response."""

    __tablename__ = "review_findings"
    __table_args__ = (UniqueConstraint("run_id", "number"),)
    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="review_runs.id", index=True)
    number: int
    host: str
    repo: str
    iid: int
    severity: str
    category: str = "general"  # core.findings.Category
    confidence: float = 1.0  # the model's own, 0..1
    path: str
    line: int
    side: str
    old_path: str = ""
    old_line: int | None = None
    body: str = Field(sa_type=Text)
    fingerprint: str = Field(index=True)
    placement: str  # inline | outside | settled | open (already in a thread) | fixed
    post_started_at: datetime | None = None
    message_id: str = ""
    thread_id: str = Field(default="", index=True)
    fixed_by_run_id: int | None = None
    fix_started_at: datetime | None = None
    fixed_at: datetime | None = None


class ReviewFileRow(SQLModel, table=True):
    """A file of a run's diff: its change digest (a follow-up reads only files whose change
    differs) or why it was skipped."""

    __tablename__ = "review_files"
    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="review_runs.id", index=True)
    path: str
    digest: str = ""
    skipped: str = ""


# -- replicas split the work through lease rows (docs/DESIGN.md §12) -------------------------
class Lease(SQLModel, table=True):
    """Who does a piece of work until when: a poll shard ("poll:<host>:<i>/<n>"), a reply
    job ("job:<id>"), or a replica's own heartbeat ("replica:<holder>")."""

    __tablename__ = "leases"
    name: str = Field(primary_key=True)
    holder: str = Field(index=True)
    expires_at: datetime


# ---- agent tools (docs/DESIGN.md §13): replies posted through `livereview mr` / `livereview mcp` -
class ToolReply(SQLModel, table=True):
    """A reply a tool call posted (or is posting): the daemon's own replies are its posted
    reply jobs. Keyed per repository: the same comment id on two repos never collides."""

    __tablename__ = "tool_replies"
    __table_args__ = (UniqueConstraint("host", "repo", "comment_id"),
                      Index("ix_tool_replies_mr", "host", "repo", "iid"))
    id: int | None = Field(default=None, primary_key=True)
    host: str
    repo: str
    iid: int
    comment_id: str
    thread_id: str
    body_digest: str  # sha256 of the body asked for: the same call again is a retry
    started_at: datetime  # committed before the POST: a reply may be on the host from here
    reply_id: str | None = None
    replied_at: datetime | None = Field(default=None, index=True)


class ReplyClaim(SQLModel, table=True):
    """Who answers a comment: the one exactly-once claim the daemon's reply jobs and the
    tools' replies share (store/reply_claims.py). Unique per (host, repo, comment): of two
    racing claimants one gets the row. `reply_id` set: answered, for good."""

    __tablename__ = "reply_claims"
    __table_args__ = (UniqueConstraint("host", "repo", "comment_id"),)
    id: int | None = Field(default=None, primary_key=True)
    host: str
    repo: str
    iid: int
    comment_id: str
    source: str  # "daemon" | "tool": who holds it (or answered)
    holder: str  # "job:<id>" | "tool:<body digest>": the same claimant again resumes it
    expires_at: datetime  # unanswered past this: its holder died, another may take it over
    reply_id: str | None = None
    answered_at: datetime | None = None
# ---- local reviews (docs/DESIGN.md §14): a synthetic MR over a local repository's commit range


class LocalReviewRow(SQLModel, table=True):
    __tablename__ = "local_reviews"
    id: int | None = Field(default=None, primary_key=True)
    repo: str = Field(index=True)  # the repository's top-level directory
    title: str
    description: str = Field(default="", sa_type=Text)  # JSON text, free-form
    range_spec: str
    base_sha: str
    head_sha: str
    worktree: bool = False
    status: str  # pending | changes_requested | approved | merged
    files: str = Field(default="[]", sa_type=Text)  # JSON rows of the diffstat
    delivered_message_id: int = 0  # feedback up to here was handed out by `review wait`
    delivered_status: str = "pending"
    created_at: datetime
    updated_at: datetime


class LocalThreadRow(SQLModel, table=True):
    __tablename__ = "local_review_threads"
    # A thread's number within its review (what people and agents name it by, DESIGN §14);
    # null only between migration 0012's new column and its numbering of older threads.
    __table_args__ = (Index("ix_local_review_threads_number", "review_id", "number",
                            unique=True),)
    id: int | None = Field(default=None, primary_key=True)
    review_id: int = Field(foreign_key="local_reviews.id", index=True)
    number: int | None = None
    kind: str
    path: str = ""
    line: int | None = None
    old_line: int | None = None
    code: str = Field(default="", sa_type=Text)
    resolved: bool = False
    created_at: datetime


class LocalMessageRow(SQLModel, table=True):
    __tablename__ = "local_review_messages"
    id: int | None = Field(default=None, primary_key=True)
    review_id: int = Field(foreign_key="local_reviews.id", index=True)
    thread_id: int = Field(foreign_key="local_review_threads.id", index=True)
    author: str
    author_kind: str  # human | agent | bot | code
    body: str = Field(sa_type=Text)
    reactions: str = ""  # space-separated emoji names the bot gave (its 👀 acknowledgement)
    created_at: datetime
