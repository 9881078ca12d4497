"""The fake Bitbucket Cloud's data model: accounts, credentials, repos, commits, pull requests,
comments, errors and a small git.

Shapes and behaviour follow Bitbucket Cloud's REST 2.0 reference
(https://developer.atlassian.com/cloud/bitbucket/rest/ — the `account`, `user`, `app_user`,
`repository`, `pullrequest`, `pullrequest_comment`, `participant`, `commit` and `error`
schemas; tests/fixtures/bitbucket_cloud/SOURCES.md lists the pages).
"""

from __future__ import annotations

import hashlib
import uuid as uuid_module
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from livereview.sandbox.gitlab.model import unified_diff

JSON = dict[str, Any]
Tree = dict[str, str]  # path -> file text
Files = dict[str, tuple[str, str]]  # path -> (old text, new text); "" means absent
DOCS = "https://developer.atlassian.com/cloud/bitbucket/rest/intro/#standardized-error-responses"
# Classic scopes (access tokens, app passwords) and what each implies; an API token's
# scopes are `read:…:bitbucket` / `write:…:bitbucket`, each standing alone.
IMPLIES = {"pullrequest:write": ("pullrequest", "repository:write"),
           "pullrequest": ("repository",), "repository:write": ("repository",)}
SCOPED = {"pullrequest": "read:pullrequest:bitbucket",
          "pullrequest:write": "write:pullrequest:bitbucket",
          "repository": "read:repository:bitbucket", "account": "read:user:bitbucket"}
ALL_CLASSIC = ("pullrequest:write", "account")
ALL_SCOPED = tuple(SCOPED.values())


class BitbucketError(Exception):
    """An API error as Bitbucket sends it: `{"type": "error", "error": {"message", …}}`."""

    def __init__(self, status: int, message: str, *, detail: object = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}
        error: JSON = {"message": message}
        if detail is not None:
            error["detail"] = detail
        self.body: JSON = {"type": "error", "error": error}


def not_found(what: str = "Resource not found") -> BitbucketError:
    return BitbucketError(404, what)


def iso(dt: datetime) -> str:
    """Bitbucket's timestamps: UTC with microseconds and an offset
    (e.g. 2019-09-27T00:33:46.039178+00:00)."""
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


def braced(seed: str) -> str:
    return "{" + str(uuid_module.uuid5(uuid_module.NAMESPACE_URL, seed)) + "}"


@dataclass(eq=False)
class Account:
    uuid: str
    account_id: str
    name: str  # nickname of a user; an app user's display name is its token's name
    display_name: str
    type: str  # "user" | "app_user"
    created_on: datetime
    kind: str = ""  # an app user's kind, e.g. "repository_access_token"


@dataclass(eq=False)
class Credential:
    """A secret and what it is: an account's API token (Basic with its `login`) or an access
    token (Bearer) acting as its own app user, limited to `repos` (None: all)."""

    secret: str
    account: Account
    kind: str  # X-Credential-Type: api_token | repo_access_token | workspace_access_token …
    scopes: tuple[str, ...]
    login: str | None = None
    repos: frozenset[str] | None = None

    @property
    def granted(self) -> set[str]:
        found = set(self.scopes)
        todo = list(found)
        while todo:
            implied = set(IMPLIES.get(todo.pop(), ())) - found
            found |= implied
            todo += implied
        return found

    def allows(self, scope: str) -> bool:
        return scope in self.granted or SCOPED.get(scope, "") in self.granted


@dataclass(eq=False)
class Commit:
    hash: str
    tree: Tree
    message: str
    author: Account
    date: datetime
    parents: list[str]


@dataclass(eq=False)
class Repo:
    workspace: str
    slug: str
    uuid: str
    created_on: datetime
    main: str = "main"
    branches: dict[str, str] = field(default_factory=dict)
    commits: dict[str, Commit] = field(default_factory=dict)
    prs: dict[int, PullRequest] = field(default_factory=dict)
    next_pr: int = 1

    @property
    def full_name(self) -> str:
        return f"{self.workspace}/{self.slug}"

    def resolve(self, ref: str) -> Commit | None:
        """A branch name, a full hash or an unambiguous prefix (Bitbucket takes all three)."""
        if ref in self.branches:
            return self.commits[self.branches[ref]]
        found = [c for h, c in self.commits.items() if len(ref) >= 7 and h.startswith(ref)]
        return found[0] if len(found) == 1 else None

    def ancestors(self, sha: str) -> list[str]:
        seen, todo = [], [sha]
        while todo:
            current = todo.pop(0)
            if current in seen or current not in self.commits:
                continue
            seen.append(current)
            todo += self.commits[current].parents
        return seen

    def merge_base(self, a: str, b: str) -> str:
        theirs = set(self.ancestors(b))
        return next((s for s in self.ancestors(a) if s in theirs), b)


@dataclass(eq=False)
class Participant:
    user: Account
    role: str  # PARTICIPANT | REVIEWER
    state: str | None = None  # approved | changes_requested | None
    participated_on: datetime | None = None


@dataclass(eq=False)
class Update:
    """An entry of the activity log: the PR as it was after a push (or when opened)."""

    date: datetime
    source: str
    destination: str
    author: Account
    state: str
    seq: int = 0  # the order of events, for entries of the same instant


@dataclass(eq=False)
class Inline:
    path: str
    to: int | None
    from_: int | None
    line_text: str  # the anchored line as it read when written (for `outdated`)
    outdated: bool = False


@dataclass(eq=False)
class Comment:
    id: int
    pr: PullRequest
    user: Account
    raw: str
    created_on: datetime
    updated_on: datetime
    parent: Comment | None = None
    inline: Inline | None = None
    deleted: bool = False
    resolution: tuple[Account, datetime] | None = None
    seq: int = 0


@dataclass(eq=False)
class PullRequest:
    id: int
    repo: Repo
    title: str
    description: str
    author: Account
    created_on: datetime
    updated_on: datetime
    source_branch: str
    destination_branch: str
    commits: list[str]  # oldest first
    state: str = "OPEN"  # OPEN | MERGED | DECLINED | SUPERSEDED
    participants: list[Participant] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)

    @property
    def head(self) -> str:
        return self.commits[-1]

    @property
    def destination(self) -> str:
        return self.repo.branches[self.destination_branch]


def git_diff(old: Tree, new: Tree) -> str:
    """A git-style diff (`diff --git`, `index`, `---`/`+++`, hunks) as /diff/{spec} answers."""
    out = []
    for path in sorted(set(old) | set(new)):
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        blob = {side: hashlib.sha1((text or "").encode(), usedforsecurity=False).hexdigest()[:7]
                for side, text in (("a", before), ("b", after))}
        head = f"diff --git a/{path} b/{path}\n"
        if before is None:
            head += f"new file mode 100644\nindex 0000000..{blob['b']}\n--- /dev/null\n"
        elif after is None:
            head += f"deleted file mode 100644\nindex {blob['a']}..0000000\n--- a/{path}\n"
        else:
            head += f"index {blob['a']}..{blob['b']} 100644\n--- a/{path}\n"
        head += "+++ /dev/null\n" if after is None else f"+++ b/{path}\n"
        out.append(head + unified_diff(before or "", after or "", path))
    return "".join(out)


def line_of(tree: Tree, path: str, to: int | None, from_: int | None, old: Tree) -> str | None:
    """The text of an anchored line (`to` in `tree`, `from` in `old`), None if out of range."""
    text, number = (tree.get(path), to) if to is not None else (old.get(path), from_)
    lines = (text or "").splitlines()
    if number is None or not 1 <= number <= len(lines):
        return None
    return lines[number - 1]
