"""The fake GitHub's data model: records, errors, timestamps, node ids and diff positions.

Shapes and behaviour follow GitHub's REST reference (docs.github.com/en/rest: pulls, pulls/
comments, pulls/reviews, issues/comments, reactions, repos/contents, commits/commits#compare)
and the OpenAPI description in github/rest-api-description.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from livereview.sandbox.gitlab.model import unified_diff

JSON = dict[str, Any]
Tree = dict[str, str]  # path -> file text
Files = dict[str, tuple[str, str]]  # path -> (old text, new text); "" means absent
DOCS = "https://docs.github.com/rest"
API_VERSION = "2022-11-28"
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


class GitHubError(Exception):
    """An API error as GitHub sends it: `{"message", "documentation_url", "status"}`."""

    def __init__(self, status: int, message: str, docs: str = DOCS,
                 errors: list[JSON] | None = None, headers: dict[str, str] | None = None
                 ) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}
        self.body: JSON = {"message": message, "documentation_url": docs, "status": str(status)}
        if errors is not None:
            self.body = {"message": message, "errors": errors, "documentation_url": docs,
                         "status": str(status)}


def not_found(docs: str = DOCS) -> GitHubError:
    return GitHubError(404, "Not Found", docs)


def invalid(resource: str, field_name: str, message: str, docs: str = DOCS) -> GitHubError:
    """422 Validation Failed with one `custom` error, as GitHub reports a bad field."""
    return GitHubError(422, "Validation Failed", docs, errors=[
        {"resource": resource, "code": "custom", "field": field_name, "message": message}])


def iso(dt: datetime) -> str:
    """GitHub's timestamp format: UTC, whole seconds, `Z` (e.g. 2011-01-26T19:01:12Z)."""
    return f"{dt.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}"


def node_id(prefix: str, number: int) -> str:
    """A global node id in GitHub's current format (`PRRC_kwDO…`): opaque, stable, unique."""
    packed = base64.urlsafe_b64encode(number.to_bytes(8, "big")).decode().rstrip("=")
    return f"{prefix}_kwDO{packed}"


@dataclass(eq=False)
class User:
    id: int
    login: str
    name: str
    type: str  # "User" | "Bot" (GitHub Apps act as `slug[bot]`)
    created_at: datetime


@dataclass(eq=False)
class Commit:
    sha: str
    tree: Tree
    message: str
    author: User
    date: datetime
    parents: list[str]


@dataclass(eq=False)
class Reaction:
    id: int
    user: User
    content: str
    created_at: datetime


@dataclass(eq=False)
class IssueComment:
    id: int
    issue: PullRequest
    user: User
    body: str
    created_at: datetime
    updated_at: datetime
    reactions: list[Reaction] = field(default_factory=list)


@dataclass(eq=False)
class Review:
    id: int
    pr: PullRequest
    user: User
    body: str
    state: str  # APPROVED | CHANGES_REQUESTED | COMMENTED | PENDING
    submitted_at: datetime
    commit_id: str
    reactions: list[Reaction] = field(default_factory=list)


@dataclass(eq=False)
class ReviewComment:
    id: int
    pr: PullRequest
    review: Review
    user: User
    body: str
    path: str
    side: str  # RIGHT (the head's lines) | LEFT (the base's)
    line: int | None  # None once outdated
    original_line: int
    commit_id: str
    original_commit_id: str
    diff_hunk: str
    position: int | None
    original_position: int
    in_reply_to: ReviewComment | None
    created_at: datetime
    updated_at: datetime
    reactions: list[Reaction] = field(default_factory=list)
    # A multi-line comment's first line (`line` is its last; None once outdated), and a
    # comment on a whole file (`subject_type: file`, no line at all).
    start_line: int | None = None
    original_start_line: int | None = None
    start_side: str | None = None
    subject_type: str = "line"

    @property
    def root(self) -> ReviewComment:
        return self.in_reply_to.root if self.in_reply_to else self


@dataclass(eq=False)
class ReviewThread:
    """GraphQL's PullRequestReviewThread: a root review comment and its replies."""

    id: int
    root: ReviewComment
    resolved: bool = False
    resolved_by: User | None = None


@dataclass(eq=False)
class Repo:
    id: int
    owner: User
    name: str
    created_at: datetime
    private: bool = True
    default_branch: str = "main"
    branches: dict[str, str] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)
    issues: dict[int, PullRequest] = field(default_factory=dict)
    next_number: int = 1

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"


@dataclass(eq=False)
class PullRequest:
    """A pull request, or (`is_pull` False) a plain issue: they share numbers and the
    issue-comment endpoints."""

    id: int
    number: int
    repo: Repo
    title: str
    body: str
    user: User
    created_at: datetime
    updated_at: datetime
    is_pull: bool = True
    head_ref: str = ""
    base_ref: str = ""
    base_sha: str = ""
    commits: list[str] = field(default_factory=list)  # oldest first
    state: str = "open"  # open | closed
    merged_at: datetime | None = None
    closed_at: datetime | None = None
    comments: list[IssueComment] = field(default_factory=list)
    review_comments: list[ReviewComment] = field(default_factory=list)
    reviews: list[Review] = field(default_factory=list)
    threads: list[ReviewThread] = field(default_factory=list)
    requested_reviewers: list[User] = field(default_factory=list)  # in the order requested

    @property
    def head_sha(self) -> str:
        return self.commits[-1] if self.commits else ""


@dataclass(frozen=True)
class FileDiff:
    filename: str
    status: str  # added | removed | modified
    patch: str  # hunks only, as GitHub's `patch` field (no ---/+++ header)
    additions: int
    deletions: int


def file_diffs(old: Tree, new: Tree) -> list[FileDiff]:
    out = []
    for path in sorted(set(old) | set(new)):
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        binary = "\0" in (before or "") or "\0" in (after or "")  # GitHub sends no patch
        patch = "" if binary else unified_diff(before or "", after or "")
        lines = patch.splitlines()
        status = "added" if before is None else "removed" if after is None else "modified"
        out.append(FileDiff(path, status, patch, sum(x.startswith("+") for x in lines),
                            sum(x.startswith("-") for x in lines)))
    return out


def locate(patch: str, line: int, side: str) -> tuple[int, str] | None:
    """(position, diff_hunk) of a line in a file's patch: the position counts lines below
    the first `@@` header (later headers count too); the hunk runs from its header to the
    line. None when the line is not part of the diff (GitHub answers 422 then)."""
    old = new = 0
    position, header_at = 0, 0
    lines = patch.splitlines()
    for index, text in enumerate(lines):
        if m := _HUNK.match(text):
            old, new = int(m[1]), int(m[2])
            header_at = index
            position += index > 0
            continue
        kind = text[:1]
        position += 1  # "\ No newline at end of file" counts as a line of the diff too
        if kind not in ("+", "-", " "):
            continue
        hit = (side == "RIGHT" and kind != "-" and new == line) or (
            side == "LEFT" and kind != "+" and old == line)
        if hit:
            return position, "\n".join(lines[header_at:index + 1])
        old += kind != "+"
        new += kind != "-"
    return None


def check_start(patch: str, start: int, start_side: str, line: int, side: str,
                hunk: str) -> None:
    """GitHub's 422s for a multi-line comment: a start off the diff, not before the end,
    or in another hunk than the end's (`hunk`: the end's, from `locate`)."""
    docs = "https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request"
    name = "pull_request_review_thread.start_line"
    if start_side not in ("LEFT", "RIGHT"):
        raise invalid("PullRequestReviewComment", "start_side",
                      "start_side is not LEFT or RIGHT", docs)
    begun = locate(patch, start, start_side)
    if begun is None:
        raise invalid("PullRequestReviewComment", name, f"{name} must be part of the diff",
                      docs)
    ended = locate(patch, line, side)
    if ended is None or begun[0] >= ended[0]:
        raise invalid("PullRequestReviewComment", name, f"{name} must precede the end line",
                      docs)
    if not hunk.startswith(begun[1]):
        raise invalid("PullRequestReviewComment", name,
                      f"{name} must be part of the same hunk as the line", docs)
