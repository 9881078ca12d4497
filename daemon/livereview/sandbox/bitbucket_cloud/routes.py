"""The fake Bitbucket Cloud's REST 2.0 routes: what each request does to the state.

A route maps a method and a path pattern (below `/2.0`) to an action, with the classic
scope the request needs (an API token needs its `…:bitbucket` equivalent) and, for lists,
the page length it allows at most. An action returns JSON, a list (paged by the server),
`Raw` text, a `Redirect`, or `Empty` (204).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from livereview.sandbox.bitbucket_cloud.model import (
    JSON,
    BitbucketError,
    Credential,
    PullRequest,
    Repo,
    git_diff,
)
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.sandbox.gitlab.model import unified_diff
from livereview.sandbox.loopback import Query

_REPO = r"/repositories/(?P<ws>[^/]+)/(?P<slug>[^/]+)"
_PR = _REPO + r"/pullrequests/(?P<id>\d+)"
_COMMENT = _PR + r"/comments/(?P<cid>\d+)"


@dataclass
class Request:
    credential: Credential
    match: re.Match[str]
    body: dict[str, Any]
    query: dict[str, str]

    def num(self, group: str) -> int:
        return int(self.match[group])

    @property
    def repo_name(self) -> str:
        return f"{unquote(self.match['ws'])}/{unquote(self.match['slug'])}"


@dataclass(frozen=True)
class Raw:
    text: str
    content_type: str = "text/plain"


@dataclass(frozen=True)
class Redirect:
    location: str


@dataclass(frozen=True)
class Empty:
    """204 No Content."""


Action = Callable[[FakeBitbucketCloud, Request], Any]


@dataclass(frozen=True)
class Route:
    method: str
    pattern: re.Pattern[str]
    action: Action
    scope: str  # classic scope needed
    status: int = 200
    max_pagelen: int = 0  # a list: its largest page


def _repo(fake: FakeBitbucketCloud, req: Request) -> Repo:
    allowed = req.credential.repos
    if allowed is not None and req.repo_name.lower() not in allowed:
        raise BitbucketError(404, f"Repository {req.repo_name} not found")
    return fake.find_repo(unquote(req.match["ws"]), unquote(req.match["slug"]))


def _pr(fake: FakeBitbucketCloud, req: Request) -> PullRequest:
    return fake.find_pr(_repo(fake, req), req.num("id"))


def _me(req: Request) -> str:
    return req.credential.account.name if req.credential.account.type == "user" else \
        req.credential.account.display_name


def _list_prs(fake: FakeBitbucketCloud, req: Request) -> list[JSON]:
    states = {s.upper() for s in req.query.get("state", "OPEN").split(",")}
    repo = _repo(fake, req)  # q and sort are applied by the server, over the JSON
    return [fake.pr_json(p) for p in sorted(repo.prs.values(), key=lambda p: p.id)
            if p.state in states]


def _post_comment(fake: FakeBitbucketCloud, req: Request) -> JSON:
    content = req.body.get("content")
    raw = content.get("raw") if isinstance(content, dict) else None
    if not isinstance(raw, str) or not raw.strip():
        raise BitbucketError(400, "content.raw: This field is required.")
    parent = req.body.get("parent")
    parent_id = parent.get("id") if isinstance(parent, dict) else None
    if parent is not None and not isinstance(parent_id, int):
        raise BitbucketError(400, "parent.id: A valid integer is required.")
    inline = req.body.get("inline")
    if inline is not None and not isinstance(inline, dict):
        raise BitbucketError(400, "inline: Invalid input.")
    pr = _pr(fake, req)
    return fake.add_comment(pr.repo.full_name, pr.id, author=_me(req), body=raw,
                            parent=parent_id, inline=inline)


def _edit_comment(fake: FakeBitbucketCloud, req: Request) -> JSON:
    pr = _pr(fake, req)
    comment = fake.find_comment(pr, req.num("cid"))
    if comment.user is not req.credential.account:
        raise BitbucketError(403, "You can only edit your own comments")
    content = req.body.get("content")
    raw = content.get("raw") if isinstance(content, dict) else None
    if not isinstance(raw, str):
        raise BitbucketError(400, "content.raw: This field is required.")
    return fake.edit_comment(pr.repo.full_name, pr.id, comment.id, raw)


def _delete_comment(fake: FakeBitbucketCloud, req: Request) -> Empty:
    pr = _pr(fake, req)
    fake.delete_comment(pr.repo.full_name, pr.id, req.num("cid"))
    return Empty()


def _resolve(resolved: bool) -> Action:
    def action(fake: FakeBitbucketCloud, req: Request) -> Any:
        pr = _pr(fake, req)
        found = fake.resolve_comment(pr.repo.full_name, pr.id, req.num("cid"),
                                     user=_me(req), resolved=resolved)
        return found if found is not None else Empty()
    return action


def _verdict(state: str | None, withdraw: str | None = None) -> Action:
    def action(fake: FakeBitbucketCloud, req: Request) -> Any:
        pr = _pr(fake, req)
        found = fake.verdict(pr.repo.full_name, pr.id, user=_me(req), state=state,
                             withdraw=withdraw)
        return found if state is not None else Empty()
    return action


def _to_diff(kind: str) -> Action:
    """GET …/pullrequests/{id}/diff (or diffstat) redirects to the repository's
    diff/{source}..{destination}?topic=true, as Bitbucket does (302)."""
    def action(fake: FakeBitbucketCloud, req: Request) -> Redirect:
        pr = _pr(fake, req)
        return Redirect(f"{fake.api_url}/repositories/{pr.repo.full_name}/{kind}/"
                        f"{pr.head[:12]}..{pr.destination[:12]}?topic=true")
    return action


def _spec(fake: FakeBitbucketCloud, req: Request) -> tuple[dict[str, str], dict[str, str]]:
    """The trees a diff spec `a..b` compares: with `topic` (default true), the merge base of
    a and b against a (three dots); without, b against a."""
    repo = _repo(fake, req)
    first, sep, second = unquote(req.match["spec"]).partition("..")
    head = repo.resolve(first)
    if head is None:
        raise BitbucketError(404, f"Commit not found: {first}")
    if not sep:
        base_sha = head.parents[0] if head.parents else head.hash
    else:
        other = repo.resolve(second)
        if other is None:
            raise BitbucketError(404, f"Commit not found: {second}")
        topic = req.query.get("topic", "true").lower() != "false"
        base_sha = repo.merge_base(head.hash, other.hash) if topic else other.hash
    return repo.commits[base_sha].tree, head.tree


def _diff(fake: FakeBitbucketCloud, req: Request) -> Raw:
    """`path` (it may repeat) limits the diff to those files."""
    old, new = _spec(fake, req)
    q = req.query
    paths = set(q.every("path") if isinstance(q, Query) else [q["path"]] if "path" in q else [])
    if paths:
        old, new = ({p: t[p] for p in paths if p in t} for t in (old, new))
    return Raw(git_diff(old, new))


def _diffstat(fake: FakeBitbucketCloud, req: Request) -> list[JSON]:
    """`path` (it may repeat) limits the diffstat to those files, as it does the diff."""
    old, new = _spec(fake, req)
    q = req.query
    paths = set(q.every("path") if isinstance(q, Query) else [q["path"]] if "path" in q else [])
    if paths:
        old, new = ({p: t[p] for p in paths if p in t} for t in (old, new))
    out = []
    for path in sorted(set(old) | set(new)):
        if old.get(path) == new.get(path):
            continue
        status = "added" if path not in old else "removed" if path not in new else "modified"
        lines = unified_diff(old.get(path, ""), new.get(path, ""), path).splitlines()
        added, removed = (sum(x.startswith(sign) for x in lines) for sign in "+-")
        out.append({"type": "diffstat", "status": status, "lines_added": added,
                    "lines_removed": removed,
                    "old": None if path not in old else {"path": path, "type": "commit_file"},
                    "new": None if path not in new else {"path": path, "type": "commit_file"}})
    return out


def _src(fake: FakeBitbucketCloud, req: Request) -> Any:
    repo = _repo(fake, req)
    commit = repo.resolve(unquote(req.match["ref"]))
    if commit is None:
        raise BitbucketError(404, "No such commit")
    path = unquote(req.match["path"] or "").strip("/")
    if path in commit.tree:
        return Raw(commit.tree[path])
    entries = fake.tree_json(repo, commit, path)
    if not entries:
        raise BitbucketError(404, f"No such file or directory: {path}")
    return entries


def routes() -> list[Route]:
    def r(method: str, path: str, action: Action, scope: str, status: int = 200,
          max_pagelen: int = 0) -> Route:
        return Route(method, re.compile(path), action, scope, status, max_pagelen)

    def user(f: FakeBitbucketCloud, q: Request) -> JSON:
        return f.account_json(q.credential.account, full=True)

    def visible(f: FakeBitbucketCloud, q: Request) -> list[JSON]:
        allowed = q.credential.repos
        return [f.repo_json(repo) for key, repo in sorted(f.repos.items())
                if allowed is None or key in allowed]

    def with_pr(build: Callable[[FakeBitbucketCloud, PullRequest], Any]) -> Action:
        return lambda f, q: build(f, _pr(f, q))

    return [
        r("GET", "/user", user, "account"),
        r("GET", "/repositories", visible, "repository", max_pagelen=100),
        r("GET", _REPO, lambda f, q: f.repo_json(_repo(f, q)), "repository"),
        r("GET", _REPO + "/pullrequests", _list_prs, "pullrequest", max_pagelen=50),
        r("GET", _REPO + "/pullrequests/activity", lambda f, q: [
            e for p in sorted(_repo(f, q).prs.values(), key=lambda p: -p.id)
            for e in f.activity(p)], "pullrequest", max_pagelen=50),
        r("GET", _PR, with_pr(lambda f, p: f.pr_json(p)), "pullrequest"),
        r("GET", _PR + "/comments", with_pr(lambda f, p: [
            f.comment_json(c) for c in sorted(p.comments, key=lambda c: c.id)]),
          "pullrequest", max_pagelen=100),
        r("POST", _PR + "/comments", _post_comment, "pullrequest:write", 201),
        r("GET", _COMMENT, lambda f, q: f.comment_json(f.find_comment(_pr(f, q), q.num("cid"))),
          "pullrequest"),
        r("PUT", _COMMENT, _edit_comment, "pullrequest:write"),
        r("DELETE", _COMMENT, _delete_comment, "pullrequest:write", 204),
        r("POST", _COMMENT + "/resolve", _resolve(True), "pullrequest:write"),
        r("DELETE", _COMMENT + "/resolve", _resolve(False), "pullrequest:write", 204),
        r("GET", _PR + "/commits", with_pr(lambda f, p: [
            f.commit_json(p.repo, p.repo.commits[s]) for s in reversed(p.commits)]),
          "pullrequest", max_pagelen=100),
        r("GET", _PR + "/activity", with_pr(lambda f, p: f.activity(p)), "pullrequest",
          max_pagelen=50),
        r("GET", _PR + "/diff", _to_diff("diff"), "pullrequest"),
        r("GET", _PR + "/diffstat", _to_diff("diffstat"), "pullrequest"),
        r("POST", _PR + "/approve", _verdict("approved"), "pullrequest:write"),
        r("DELETE", _PR + "/approve", _verdict(None, "approved"), "pullrequest:write", 204),
        r("POST", _PR + "/request-changes", _verdict("changes_requested"),
          "pullrequest:write"),
        r("DELETE", _PR + "/request-changes", _verdict(None, "changes_requested"),
          "pullrequest:write", 204),
        r("GET", _REPO + r"/diff/(?P<spec>[^/]+)", _diff, "repository"),
        r("GET", _REPO + r"/diffstat/(?P<spec>[^/]+)", _diffstat, "repository",
          max_pagelen=500),
        r("GET", _REPO + r"/src/(?P<ref>[^/]+)/?(?P<path>.*)", _src, "repository",
          max_pagelen=100),
    ]
