"""The review model: what a merge-request conversation is, independent of any host.

Host adapters translate their JSON into these frozen dataclasses; the store persists them;
the pure core (sync.diff, triggers, reply.context) reasons only about them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime


class ActorKind(enum.StrEnum):
    HUMAN = "human"
    SELF = "self"  # the bot this daemon runs as
    BOT = "bot"  # another bot (ignored users, GitHub Apps, …)
    SYSTEM = "system"  # host-generated notes ("added 1 commit")


@dataclass(frozen=True, slots=True)
class Actor:
    id: str
    username: str
    name: str = ""
    # The host itself marks the account as automated (a GitHub App, a GitLab project or
    # group access token, a service account): never a human, whatever its timing.
    bot: bool = False


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the bot is on one host: the account its token acts as, and (`also`) the accounts
    of the host's other tokens (`[[hosts.tokens]]`, docs/DESIGN.md "Is this the bot?"), each
    as (user id, username). What any of them posted is the bot's own: an answer posted under
    one organisation's token is never answered by the instance acting with another's."""

    host: str
    user_id: str
    username: str
    also: tuple[tuple[str, str], ...] = ()

    def is_me(self, actor: Actor) -> bool:
        return any(actor.id == user_id or actor.username.lower() == username.lower()
                   for user_id, username in ((self.user_id, self.username), *self.also))


@dataclass(frozen=True, slots=True)
class MRKey:
    host: str
    repo: str
    iid: int

    def __str__(self) -> str:
        return f"{self.host}:{self.repo}!{self.iid}"


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where a diff thread points: a line of a file at a given diff version, a range of
    lines ending at that line (`start_*`: its first line, numbered as the host numbers the
    end), or the whole file (no line at all).

    The range's start is what the host shows, not what the thread is: two reads of one
    thread compare equal whether or not a host (or the store) kept the start."""

    new_path: str
    old_path: str
    new_line: int | None
    old_line: int | None
    base_sha: str
    start_sha: str
    head_sha: str
    start_new_line: int | None = field(default=None, compare=False)
    start_old_line: int | None = field(default=None, compare=False)

    @property
    def line(self) -> int | None:
        return self.new_line if self.new_line is not None else self.old_line

    @property
    def start_line(self) -> int | None:
        """The range's first line on the side `line` numbers (None: one line, or the file)."""
        start = self.start_new_line if self.new_line is not None else self.start_old_line
        return start if start is not None and start != self.line else None

    @property
    def whole_file(self) -> bool:
        return self.new_line is None and self.old_line is None


@dataclass(frozen=True, slots=True)
class Reaction:
    name: str
    user: Actor
    id: str = ""
    created_at: datetime | None = None  # where the host says (GitLab, GitHub; not Bitbucket)


@dataclass(frozen=True, slots=True)
class Message:
    id: str
    thread_id: str
    author: Actor
    body: str
    created_at: datetime
    updated_at: datetime
    system: bool = False
    reactions: tuple[Reaction, ...] = ()


@dataclass(frozen=True, slots=True)
class Thread:
    id: str
    messages: tuple[Message, ...]
    anchor: Anchor | None = None
    resolvable: bool = False
    resolved: bool = False
    individual: bool = False  # a lone general comment (GitLab individual_note)

    @property
    def root(self) -> Message | None:
        return self.messages[0] if self.messages else None


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    title: str
    created_at: datetime
    parent_ids: tuple[str, ...] = ()
    message: str = ""  # the whole message, title included, as the host lists it
    author: str = ""  # the author's name as the host shows it (never an e-mail address)


@dataclass(frozen=True, slots=True)
class MergeRequest:
    key: MRKey
    title: str
    description: str
    author: Actor
    source_branch: str
    target_branch: str
    state: str  # opened | closed | merged | locked
    head_sha: str
    # The diff version's base and start. None: not read — an MR built from a listing row
    # (GitLab's `diff_refs` are only in "Get single MR": docs/DESIGN.md §6 "First sight"),
    # never "": what places a note on a line reads them (`diff_refs`).
    base_sha: str | None
    start_sha: str | None
    web_url: str
    created_at: datetime
    updated_at: datetime
    # Who is asked to review, as the host lists them (GitLab `reviewers`, GitHub
    # `requested_reviewers`, Bitbucket reviewers): part of the snapshot, so that being added
    # is an event like any other (core/review_requests.py).
    reviewers: tuple[Actor, ...] = ()

    @property
    def refs_read(self) -> bool:
        return self.base_sha is not None and self.start_sha is not None

    def diff_refs(self) -> DiffRefs:
        """The version's diff refs; RefsNotRead when this MR was built without them."""
        if self.base_sha is None or self.start_sha is None:
            raise RefsNotRead(f"{self.key}: its diff refs were not read")
        return DiffRefs(self.base_sha, self.start_sha, self.head_sha)


class RefsNotRead(ValueError):
    """An MR's diff refs were asked of a read that did not read them (a listing row)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything fetched about one MR in one poll."""

    mr: MergeRequest
    threads: tuple[Thread, ...]
    # Newest first, as hosts list them. None: not read (an MR read at first sight that asked
    # nothing of the bot, docs/DESIGN.md §6 "First sight"): never "no commits"; the read
    # that needs them (a push to tell apart, a job) reads them.
    commits: tuple[Commit, ...] | None

    def messages(self) -> dict[str, Message]:
        return {m.id: m for t in self.threads for m in t.messages}

    def thread(self, thread_id: str) -> Thread | None:
        return next((t for t in self.threads if t.id == thread_id), None)


@dataclass(frozen=True, slots=True)
class People:
    """An MR's standing beyond its snapshot (`mr show`): draft or not, who is asked to
    review, who approved, its labels (user names and labels as the host spells them)."""

    draft: bool
    reviewers: tuple[str, ...]
    approved_by: tuple[str, ...]
    labels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChangedMR:
    """One row of a host's 'MRs changed since' listing."""

    repo: str
    iid: int
    updated_at: datetime
    state: str = "opened"
    # The MR as the row shows it, where the listing carries all an MR read needs but its
    # diff refs (GitLab): a first read uses it instead of reading the MR again (sync/read.py).
    mr: MergeRequest | None = None


class EventKind(enum.StrEnum):
    COMMENT_ADDED = "comment_added"
    COMMENT_EDITED = "comment_edited"
    COMMENT_DELETED = "comment_deleted"
    REACTION_ADDED = "reaction_added"
    REACTION_REMOVED = "reaction_removed"
    COMMIT_PUSH = "commit_push"
    FORCE_PUSH = "force_push"
    RESOLVED = "resolved"
    REOPENED = "reopened"
    MR_STATE_CHANGED = "mr_state_changed"
    REVIEW_REQUESTED = "review_requested"  # someone was added as a reviewer


@dataclass(frozen=True, slots=True)
class Event:
    kind: EventKind
    mr: MRKey
    thread_id: str = ""
    message_id: str = ""
    detail: str = ""


class JobReason(enum.StrEnum):
    MENTION = "mention"
    THREAD_REPLY = "thread_reply"
    EDIT_MENTION = "edit_mention"
    EDITED_QUESTION = "edited_question"  # an answered question edited to ask something new


EDIT_SUFFIX = ":edit-"  # job key and reply marker of an answer to an edit: …:edit-<digest>


@dataclass(frozen=True, slots=True)
class ReplyRequest:
    """A decision of the trigger function: answer this message in this thread."""

    mr: MRKey
    thread_id: str
    message_id: str
    reason: JobReason
    comment_created_at: datetime
    edit: str = ""  # an edited question: the digest of its new content (core/edits.py)

    @property
    def key(self) -> str:
        return f"{self.mr.host}:{self.mr.repo}:{self.mr.iid}:{self.target}"

    @property
    def target(self) -> str:
        """What the answer's marker names: the message, and the version it answers."""
        return f"{self.message_id}{EDIT_SUFFIX}{self.edit}" if self.edit else self.message_id


class JobState(enum.StrEnum):
    PENDING = "pending"  # triggered, not yet acknowledged
    ACKED = "acked"  # 👀 given (or deliberately skipped)
    ANSWERED = "answered"  # the answer is written and stored, not yet posted
    POSTED = "posted"
    SKIPPED = "skipped"
    FAILED = "failed"

    @property
    def open(self) -> bool:
        return self in (JobState.PENDING, JobState.ACKED, JobState.ANSWERED)


@dataclass(frozen=True, slots=True)
class ReplyJob:
    """A persisted reply job, as the worker sees it."""

    id: int
    key: str
    mr: MRKey
    thread_id: str
    message_id: str
    reason: JobReason
    state: JobState
    attempts: int
    comment_created_at: datetime
    answer: str | None = None
    answer_meta: str | None = None  # JSON of the structured answer (mode, lesson, citations)
    post_started: bool = False
    ack_started: bool = False  # an ack comment may be on the host (hosts without reactions)
    last_error: str = ""

    @property
    def target(self) -> str:
        """What the answer's marker names (`ReplyRequest.target`, read back from the key)."""
        at = self.key.rfind(EDIT_SUFFIX)
        if self.reason is not JobReason.EDITED_QUESTION or at < 0:
            return self.message_id
        return f"{self.message_id}{self.key[at:]}"


@dataclass(frozen=True, slots=True)
class Lesson:
    """A rule the bot learned when a human convincingly disagreed (governed: docs/DESIGN.md §10)."""

    key: str  # the principle, e.g. "Locks around dict reads"
    value: str  # the short actionable rule
    scope: str  # "repo:<host>:<path>" | "group:<host>:<path>" | "global"
    status: str = "proposed"  # proposed | active | rejected | archived
    source_message_id: str = ""  # the bot's concession
    id: int = 0
    created_by: str = ""  # the human whose argument it was


@dataclass(frozen=True, slots=True)
class Policy:
    """What the trigger function needs to know from the configuration."""

    aliases: tuple[str, ...] = ("@livereview",)
    ignore_users: tuple[str, ...] = ()
    backfill_hours: float = 24.0
    max_consecutive_replies: int = 5  # per thread, without a human in between
    max_exchange_replies: int = 10  # per thread, to one counterpart with nobody else writing
    max_replies_per_thread_per_hour: int = 12  # whoever asks (bots taking turns look human)
    max_replies_per_mr_per_hour: int = 30
    automated_reply_seconds: float = 5.0  # an answer to the bot faster than this is a bot's
    max_edit_answers: int = 3  # new answers per question to its edits (core/edits.py)
    review_on_request: bool = True  # being asked as a reviewer starts a review


# ---- reviews (docs/DESIGN.md §11): what a host needs to show a review, independent of the host ---


class FileStatus(enum.StrEnum):
    ADDED = "added"
    MODIFIED = "modified"
    REMOVED = "removed"
    RENAMED = "renamed"


@dataclass(frozen=True, slots=True)
class FileChange:
    """One row of an MR's diffstat."""

    new_path: str
    old_path: str
    status: FileStatus
    additions: int
    deletions: int
    binary: bool = False


@dataclass(frozen=True, slots=True)
class FileDiff:
    """One file of an MR's diff, yielded one at a time (memory bounded by one file)."""

    change: FileChange
    diff: str  # this file's unified diff ("" when skipped)
    skipped: str = ""  # why it was left out: "binary", "too large (N bytes)", …


@dataclass(frozen=True, slots=True)
class DiffRefs:
    """The diff version a review is anchored to."""

    base_sha: str
    start_sha: str
    head_sha: str


class Side(enum.StrEnum):
    NEW = "new"  # an added or context line, numbered in the new file
    OLD = "old"  # a removed line, numbered in the old file


@dataclass(frozen=True, slots=True)
class InlineComment:
    """A comment placed on one diff line."""

    path: str  # new path (old path for a removed file)
    line: int
    side: Side
    body: str
    old_path: str = ""  # when renamed
    old_line: int | None = None  # context lines: the old-side number too (GitLab needs both)


class Verdict(enum.StrEnum):
    APPROVED = "approved"
    CHANGES_REQUESTED = "changes_requested"
    COMMENTED = "commented"


@dataclass(frozen=True, slots=True)
class PostedReview:
    """What the host's create responses said about a posted review (never a read-back)."""

    review_id: str  # GitHub: the review's id; GitLab/Bitbucket: the summary note's id
    summary: Message | None
    comments: tuple[Message, ...]  # one per InlineComment, same order
    verdict_applied: Verdict  # e.g. COMMENTED when the host refused APPROVE on an own PR
