"""The fake GitLab's data model: records, errors, timestamps, diffs and mention parsing.

Shapes follow the recorded gitlab.com responses in tests/fixtures/gitlab and GitLab's
own source (gitlabhq/gitlabhq: lib/api/*.rb, lib/api/entities/*.rb, app/services/todo_service.rb).
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

JSON = dict[str, Any]
Files = dict[str, tuple[str, str]]  # path -> (old text, new text); "" means absent
NOT_FOUND = "404 Not found"  # lib/api/api.rb: rescue_from ActiveRecord::RecordNotFound
_HUNK = re.compile(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


class GitLabError(Exception):
    """An API error: the HTTP status and GitLab's JSON body ({"message": ...} or {"error": ...})."""

    def __init__(self, status: int, message: str, key: str = "message") -> None:
        super().__init__(message)
        self.status = status
        self.body: JSON = {key: message}


def iso(dt: datetime) -> str:
    """GitLab's timestamp format: UTC, milliseconds, `Z`."""
    dt = dt.astimezone(UTC) if dt.tzinfo else dt
    return f"{dt:%Y-%m-%dT%H:%M:%S}.{dt.microsecond // 1000:03d}Z"


def unified_diff(old: str, new: str, path: str = "file") -> str:
    """The `diff` field of GitLab's diff entries: hunks only, no ---/+++ header; for a
    binary file (a NUL byte in either side) git's note instead of hunks, as Gitaly sends."""
    if "\0" in old or "\0" in new:
        return f"Binary files a/{path} and b/{path} differ\n"
    lines = list(difflib.unified_diff(old.splitlines(True), new.splitlines(True), n=3))[2:]
    return "".join(x if x.endswith("\n") else x + "\n\\ No newline at end of file\n"
                   for x in lines)


def diff_lines(path: str, diff: str) -> dict[tuple[int | None, int | None], str]:
    """(old_line, new_line) of every line shown in a diff -> its GitLab line_code."""
    digest = hashlib.sha1(path.encode(), usedforsecurity=False).hexdigest()
    out: dict[tuple[int | None, int | None], str] = {}
    old = new = 0
    for line in diff.splitlines():
        if m := _HUNK.match(line):
            old, new = int(m[1]), int(m[2])
            continue
        key: tuple[int | None, int | None] | None = {
            "+": (None, new), "-": (old, None), " ": (old, new)}.get(line[:1])
        if key is not None:
            out[key] = f"{digest}_{old}_{new}"
            old += line[:1] != "+"
            new += line[:1] != "-"
    return out


@dataclass(eq=False)
class User:
    id: int
    username: str
    name: str
    bot: bool
    created_at: datetime


@dataclass(eq=False)
class Commit:
    title: str
    author: User
    created_at: datetime


@dataclass(eq=False)
class Version:
    id: int
    head: str
    base: str
    start: str
    created_at: datetime
    commits: list[str]


@dataclass(eq=False)
class Project:
    id: int
    path: str
    created_at: datetime
    default_branch: str = "main"
    # "All threads must be resolved": an unresolved resolvable note blocks merging
    only_allow_merge_if_all_discussions_are_resolved: bool = False
    next_iid: int = 1
    branches: dict[str, str] = field(default_factory=dict)
    trees: dict[str, dict[str, str]] = field(default_factory=dict)  # commit sha -> files
    commits: dict[str, Commit] = field(default_factory=dict)
    mrs: dict[int, MergeRequest] = field(default_factory=dict)
    # Paths it had before a rename or transfer: GitLab keeps a redirect route for each and
    # its API answers them for the project (app/models/redirect_route.rb).
    redirects: list[str] = field(default_factory=list)


@dataclass(eq=False)
class MergeRequest:
    id: int
    iid: int
    project: Project
    title: str
    description: str
    author: User
    source_branch: str
    target_branch: str
    created_at: datetime
    updated_at: datetime
    base_sha: str
    commits: list[str]  # oldest first
    state: str = "opened"
    state_by: User | None = None
    merged_at: datetime | None = None
    closed_at: datetime | None = None
    versions: list[Version] = field(default_factory=list)
    discussions: list[Discussion] = field(default_factory=list)
    approved_by: list[User] = field(default_factory=list)
    reviewers: list[User] = field(default_factory=list)  # in the order requested

    @property
    def head_sha(self) -> str:
        return self.commits[-1]


@dataclass(eq=False)
class Discussion:
    id: str
    mr: MergeRequest
    individual: bool
    notes: list[Note] = field(default_factory=list)


@dataclass(eq=False)
class Note:
    id: int
    discussion: Discussion
    author: User
    body: str
    created_at: datetime
    updated_at: datetime
    system: bool
    type: str | None
    position: JSON | None
    resolved: bool = False
    resolved_by: User | None = None
    resolved_at: datetime | None = None
    awards: list[Award] = field(default_factory=list)

    @property
    def resolvable(self) -> bool:
        return self.type in {"DiffNote", "DiscussionNote"} and not self.system


@dataclass(eq=False)
class Award:
    id: int
    name: str
    user: User
    created_at: datetime
    note: Note


@dataclass(eq=False)
class Todo:
    id: int
    user: User
    author: User
    mr: MergeRequest
    note: Note | None  # None: a review request's to-do is about the MR, not a note
    action: str
    created_at: datetime
    updated_at: datetime
    state: str = "pending"


_MENTION = re.compile(r"(?<![\w@/])@([A-Za-z0-9_][A-Za-z0-9_.-]*)")
LEADING_MENTIONS = re.compile(r"\s*((?:@[A-Za-z0-9_][A-Za-z0-9_.-]*[\s,]*)+)")


def mentions(body: str) -> list[str]:
    """Usernames @-mentioned outside code spans and blocks (GitLab ignores those)."""
    text = re.sub(r"```.*?```|`[^`\n]*`", "", body, flags=re.DOTALL)
    return [m.rstrip(".") for m in _MENTION.findall(text)]


def sha1(*parts: object) -> str:
    return hashlib.sha1(":".join(map(str, parts)).encode(), usedforsecurity=False).hexdigest()
