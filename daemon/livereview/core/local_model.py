"""A local review: a synthetic merge request over a commit range of a local git repository.

Pure types shared by the local host (hosts/local/adapter.py), the store (store/local_reviews.py)
and the faces; `as_dict` is the one JSON shape of `.livereview/review.json`, `--json` and
the MCP tools, so the three never drift apart.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from datetime import datetime

STATE_DIR = ".livereview"  # in the repository: its reviews' store and review.json
DATABASE_NAME = "livereview.db"  # the reviews' store, in STATE_DIR


class ReviewStatus(enum.StrEnum):
    PENDING = "pending"
    CHANGES_REQUESTED = "changes_requested"
    APPROVED = "approved"
    MERGED = "merged"


class ThreadKind(enum.StrEnum):
    EXPLANATION = "explanation"  # a 💡 comment in the code
    QUESTION = "question"  # a ❓ comment in the code
    TODO = "todo"
    FIXME = "fixme"
    FINDING = "finding"  # the AI review's
    COMMENT = "comment"  # a person's or an agent's, on a line or on the whole review


class AuthorKind(enum.StrEnum):
    HUMAN = "human"  # a person at the terminal (`review reply`, `approve`, …)
    AGENT = "agent"  # the coding agent, through the MCP tools
    BOT = "bot"  # livereview itself (findings, answers)
    CODE = "code"  # a comment written in the code


@dataclass(frozen=True, slots=True)
class FileStat:
    path: str
    old_path: str
    status: str  # added | modified | deleted | renamed
    additions: int
    deletions: int
    binary: bool = False


@dataclass(frozen=True, slots=True)
class LocalMessage:
    id: int
    thread_id: int
    author: str
    author_kind: AuthorKind
    body: str
    created_at: datetime
    reactions: tuple[str, ...] = ()  # the bot's (its 👀 acknowledgement)


@dataclass(frozen=True, slots=True)
class LocalThread:
    id: int  # the store's row id: internal (the local host's thread id), never shown
    kind: ThreadKind
    path: str  # "" for a thread on the whole review
    line: int | None  # in the new file; None when the anchored code is gone (outdated)
    code: str  # the anchored line's text, to find it again after new commits
    resolved: bool
    messages: tuple[LocalMessage, ...]
    created_at: datetime
    number: int  # within its review, from 1 in order of creation: its name (DESIGN §14)
    old_line: int | None = None  # a removed line's number in the old file


@dataclass(frozen=True, slots=True)
class LocalReview:
    id: int
    repo: str  # the repository's top-level directory
    title: str
    description: str  # JSON text, free-form
    range: str  # as the user wrote it
    base_sha: str
    head_sha: str  # the HEAD commit when the range is the working tree
    worktree: bool  # the working tree and index against base_sha
    status: ReviewStatus
    files: tuple[FileStat, ...]
    threads: tuple[LocalThread, ...]
    created_at: datetime
    updated_at: datetime
    branch: str = ""  # the branch under review, recorded at request time; "" for none

    def thread(self, thread_id: int) -> LocalThread | None:
        """The thread of this row id (the store's, internal)."""
        return next((t for t in self.threads if t.id == thread_id), None)

    def numbered(self, number: int) -> LocalThread | None:
        """The thread of this number within the review (what people name it by)."""
        return next((t for t in self.threads if t.number == number), None)


@dataclass(frozen=True, slots=True)
class RangeState:
    """Where a review's diff stands: what `request` and `update` write."""

    range_spec: str
    base_sha: str
    head_sha: str
    worktree: bool
    files: tuple[FileStat, ...]
    branch: str = ""  # what becomes `merged` (hosts/local_git.Git.branch_of)


@dataclass(frozen=True, slots=True)
class NewThread:
    kind: ThreadKind
    path: str
    line: int | None
    code: str
    author: str
    author_kind: AuthorKind
    body: str
    old_line: int | None = None


@dataclass(frozen=True, slots=True)
class Feedback:
    review_id: int
    status: ReviewStatus | None  # the new status, when it changed since the last delivery
    messages: tuple[LocalMessage, ...]  # people's messages not handed out yet

    @property
    def empty(self) -> bool:
        return self.status is None and not self.messages


# How a range is given, in one wording wherever one is (`review request|update`, the MCP
# tools): one vocabulary for people and agents (hosts/local/git.py resolves it).
RANGE_HELP = ("HEAD (uncommitted work), HEAD~N (the last N commits), A..B, a commit sha, "
              "or a branch (since it left main)")
NOTHING_TO_REVIEW = "the range has no textual change: there is nothing to review"


def has_textual_change(files: tuple[FileStat, ...]) -> bool:
    """Whether any file gains or loses a line of text: a range with none (`HEAD..HEAD`, a
    reverted edit, only binaries or renames) has nothing an AI review could read."""
    return any(f.additions or f.deletions for f in files)


def message_dict(message: LocalMessage, thread: int) -> dict[str, object]:
    """The message as JSON; `thread` is its thread's number within the review."""
    return {"id": message.id, "thread": thread, "author": message.author,
            "author_kind": message.author_kind.value, "body": message.body,
            "reactions": list(message.reactions),
            "created_at": message.created_at.isoformat()}


def thread_dict(thread: LocalThread) -> dict[str, object]:
    """The thread as JSON: its `id` is its number within the review, the one every verb and
    tool takes (the store's row id stays inside)."""
    return {"id": thread.number, "kind": thread.kind.value, "path": thread.path,
            "line": thread.line, "old_line": thread.old_line, "code": thread.code,
            "resolved": thread.resolved, "created_at": thread.created_at.isoformat(),
            "messages": [message_dict(m, thread.number) for m in thread.messages]}


def as_dict(review: LocalReview) -> dict[str, object]:
    return {
        "id": review.id, "repo": review.repo, "title": review.title,
        "description": json.loads(review.description) if review.description else None,
        "range": review.range, "branch": review.branch or None,
        "base_sha": review.base_sha, "head_sha": review.head_sha,
        "worktree": review.worktree, "status": review.status.value,
        "files": [{"path": f.path, "old_path": f.old_path, "status": f.status,
                   "additions": f.additions, "deletions": f.deletions, "binary": f.binary}
                  for f in review.files],
        "threads": [thread_dict(t) for t in review.threads],
        "created_at": review.created_at.isoformat(),
        "updated_at": review.updated_at.isoformat(),
    }


class UnsafeStore(Exception):
    """The repository's `.livereview/` is not the clone's own (a symlink, a tracked file, a
    path outside the working tree): nothing is opened or written there. `str()` is one
    line, naming the entry and what to do; bad input (exit 2) for a command."""
