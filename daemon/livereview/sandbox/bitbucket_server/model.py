"""The fake Bitbucket Data Center's data model: records, errors and timestamps.

Shapes and behaviour follow Atlassian's Bitbucket Data Center REST reference
(developer.atlassian.com/server/bitbucket/rest/v906/: api-group-pull-requests,
api-group-repository, api-group-system-maintenance) and the comment-likes module
(…/rest/v803/api-group-comment-likes). Errors are `{"errors": [{"context", "message",
"exceptionName"}]}` (RestErrorMessage); timestamps are epoch milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

JSON = dict[str, Any]
Tree = dict[str, str]  # path -> file text
Files = dict[str, tuple[str, str]]  # path -> (old text, new text); "" means absent
EXCEPTIONS = "com.atlassian.bitbucket"


class BitbucketError(Exception):
    """An API error as Bitbucket sends it: a list of `errors`, each naming its exception."""

    def __init__(self, status: int, message: str, exception: str = "",
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}
        self.body: JSON = {"errors": [{"context": None, "message": message,
                                       "exceptionName": exception or None}]}


def no_such(what: str, message: str) -> BitbucketError:
    """404 with the exception Bitbucket names for a missing thing (NoSuchPullRequest…)."""
    return BitbucketError(404, message, f"{EXCEPTIONS}.{what}")


def not_permitted() -> BitbucketError:
    """Bitbucket answers a missing permission with 401 (not 403) and this exception."""
    return BitbucketError(401, "You are not permitted to access this resource",
                          f"{EXCEPTIONS}.AuthorisationException")


def millis(dt: datetime) -> int:
    return int(dt.timestamp() * 1000)


@dataclass(eq=False)
class User:
    id: int
    name: str
    display_name: str
    kind: str = "NORMAL"  # NORMAL | SERVICE (the user of a project/repository access token)

    @property
    def slug(self) -> str:
        return self.name.lower()


@dataclass(eq=False)
class Commit:
    sha: str
    tree: Tree
    message: str
    author: User
    date: datetime
    parents: list[str]


@dataclass(eq=False)
class Repo:
    id: int
    project: str  # the project key
    slug: str
    branches: dict[str, str] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)
    prs: dict[int, PullRequest] = field(default_factory=dict)
    next_pr: int = 1

    @property
    def path(self) -> str:
        return f"{self.project}/{self.slug}"


@dataclass(eq=False)
class Comment:
    id: int
    pr: PullRequest
    author: User
    text: str
    created: datetime
    updated: datetime
    parent: Comment | None = None
    anchor: JSON | None = None  # RestCommentThreadDiffAnchor, on a root comment only
    version: int = 0
    replies: list[Comment] = field(default_factory=list)
    reactions: dict[str, list[User]] = field(default_factory=dict)  # shortcut -> users
    thread_resolved: bool = False
    thread_resolver: User | None = None
    thread_resolved_at: datetime | None = None

    @property
    def root(self) -> Comment:
        return self.parent.root if self.parent is not None else self


@dataclass(eq=False)
class Activity:
    id: int
    created: datetime
    user: User
    action: str  # OPENED | COMMENTED | RESCOPED | APPROVED | UNAPPROVED | REVIEWED | …
    comment: Comment | None = None
    comment_action: str = ""  # ADDED | REPLIED | EDITED | DELETED
    deleted_copy: JSON | None = None  # a deleted comment as it was


@dataclass(eq=False)
class PullRequest:
    id: int
    repo: Repo
    title: str
    description: str
    author: User
    created: datetime
    updated: datetime
    source: str  # branch names
    target: str
    base_sha: str
    commits: list[str] = field(default_factory=list)  # oldest first
    state: str = "OPEN"  # OPEN | MERGED | DECLINED
    version: int = 0
    statuses: dict[str, str] = field(default_factory=dict)  # user name -> participant status
    reviewers: list[str] = field(default_factory=list)  # user names, in the order added
    comments: list[Comment] = field(default_factory=list)  # root comments
    activities: list[Activity] = field(default_factory=list)

    @property
    def head_sha(self) -> str:
        return self.commits[-1] if self.commits else ""

    def all_comments(self) -> list[Comment]:
        out: list[Comment] = []
        stack = list(reversed(self.comments))
        while stack:
            c = stack.pop()
            out.append(c)
            stack += reversed(c.replies)
        return out
