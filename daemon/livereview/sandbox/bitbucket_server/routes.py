"""The fake Bitbucket Data Center's REST routes: what each request does to the state.

Paths are matched after the `/rest` prefix; `api/1.0` and `api/latest` are the same API, as
on a real server. A handler returns JSON, a `Raw` text body, or `Status` (a body with a
status other than the route's own). Paged lists go through `page()`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from livereview.sandbox.bitbucket_server import reviews as bitbucket_server_reviews
from livereview.sandbox.bitbucket_server.model import (
    JSON,
    BitbucketError,
    PullRequest,
    Repo,
    User,
    no_such,
)
from livereview.sandbox.bitbucket_server.payloads import page, raw_diff
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.sandbox.loopback import Route as LoopRoute

_API = r"/api/(?:1\.0|latest)"
_REPO = r"/projects/(?P<project>[^/]+)/repos/(?P<slug>[^/]+)"
_PR = _REPO + r"/pull-requests/(?P<pr>\d+)"
_COMMENT = _PR + r"/comments/(?P<comment>\d+)"


@dataclass
class Request:
    user: User | None
    match: re.Match[str]
    body: dict[str, Any]
    query: dict[str, str]

    def num(self, group: str) -> int:
        return int(self.match[group])

    @property
    def who(self) -> User:
        if self.user is None:
            raise BitbucketError(401, "You are not permitted to access this resource",
                                 "com.atlassian.bitbucket.AuthorisationException")
        return self.user


@dataclass(frozen=True)
class Raw:
    text: str
    content_type: str = "text/plain;charset=UTF-8"


@dataclass(frozen=True)
class Status:
    status: int
    body: JSON | None


Action = Callable[[FakeBitbucketDC, Request], Any]
Route = LoopRoute[Action]


def _repo(fake: FakeBitbucketDC, req: Request) -> Repo:
    repo = fake.find_repo(unquote(req.match["project"]), unquote(req.match["slug"]))
    fake.check_access(req.user, repo)
    return repo


def _pr(fake: FakeBitbucketDC, req: Request) -> PullRequest:
    return fake.find_pr(_repo(fake, req), req.num("pr"))


def _list_prs(fake: FakeBitbucketDC, req: Request) -> JSON:
    state = req.query.get("state", "OPEN").upper()
    prs = [p for p in _repo(fake, req).prs.values() if state == "ALL" or p.state == state]
    # NEWEST (the default) lists the most recently updated first, OLDEST the reverse.
    newest = req.query.get("order", "NEWEST").upper() != "OLDEST"
    prs.sort(key=lambda p: (p.updated, p.id), reverse=newest)
    return page([fake.pr_json(p) for p in prs], req.query)


def _dashboard(fake: FakeBitbucketDC, req: Request) -> JSON:
    """`GET dashboard/pull-requests`: the caller's pull requests in every repository, by
    `role` (AUTHOR, REVIEWER or PARTICIPANT; any when absent) and `state` (any when absent),
    `order` NEWEST (the default: most recently updated first) or OLDEST."""
    role = req.query.get("role", "").upper() or None
    if role not in (None, "AUTHOR", "REVIEWER", "PARTICIPANT"):
        raise BitbucketError(400, f"{role} is not a valid participant role")
    prs = fake.involving(req.who, role, req.query.get("state", "ALL").upper())
    if req.query.get("order", "NEWEST").upper() == "OLDEST":
        prs.reverse()
    return page([fake.pr_json(p) for p in prs], req.query)


def _activities(fake: FakeBitbucketDC, req: Request) -> JSON:
    pr = _pr(fake, req)
    return page([fake.activity_json(a) for a in reversed(pr.activities)], req.query)


def _create_comment(fake: FakeBitbucketDC, req: Request) -> JSON:
    pr, body = _pr(fake, req), req.body
    text = body.get("text")
    if not isinstance(text, str):
        raise BitbucketError(400, "text: Please enter a non-empty value")
    parent = body.get("parent") or {}
    anchor = body.get("anchor") or {}
    if anchor and not isinstance(anchor.get("path"), str):
        raise BitbucketError(400, "anchor.path: Please enter a non-empty value")
    line = anchor.get("line")
    return fake.add_comment(pr.repo.path, pr.id, author=req.who.name, text=text,
                            parent=int(parent["id"]) if parent.get("id") is not None else None,
                            path=anchor.get("path"), line=int(line) if line else None,
                            line_type=str(anchor.get("lineType") or "CONTEXT"),
                            file_type=str(anchor.get("fileType") or "TO"),
                            multiline=anchor.get("multilineMarker"))


def _update_comment(fake: FakeBitbucketDC, req: Request) -> JSON:
    pr, body = _pr(fake, req), req.body
    comment = fake.find_comment(pr, req.num("comment"))
    if not isinstance(body.get("version"), int):
        raise BitbucketError(400, "version: the comment's current version is required")
    version = int(body["version"])
    if "threadResolved" in body:
        return fake.resolve_thread(pr.repo.path, pr.id, comment.id, bool(body["threadResolved"]),
                                   user=req.who.name, version=version)
    if comment.author is not req.who:
        raise BitbucketError(401, "You are not permitted to update this comment",
                             "com.atlassian.bitbucket.AuthorisationException")
    return fake.edit_comment(pr.repo.path, pr.id, comment.id, str(body.get("text") or ""),
                             version=version)


def _delete_comment(fake: FakeBitbucketDC, req: Request) -> Status:
    pr = _pr(fake, req)
    version = req.query.get("version")
    fake.delete_comment(pr.repo.path, pr.id, req.num("comment"),
                        version=int(version) if version and version.isdigit() else None)
    return Status(204, None)


def _react(fake: FakeBitbucketDC, req: Request) -> JSON:
    pr = _pr(fake, req)
    return fake.react(pr.repo.path, pr.id, req.num("comment"), user=req.who.name,
                      emoticon=unquote(req.match["emoticon"]))


def _unreact(fake: FakeBitbucketDC, req: Request) -> Status:
    pr = _pr(fake, req)
    fake.unreact(pr.repo.path, pr.id, req.num("comment"), user=req.who.name,
                 emoticon=unquote(req.match["emoticon"]))
    return Status(204, None)


def _participant(fake: FakeBitbucketDC, req: Request) -> JSON:
    pr = _pr(fake, req)
    if unquote(req.match["user"]) != req.who.slug:
        raise BitbucketError(400, "You can only change your own status.")
    return fake.set_status(pr.repo.path, pr.id, user=req.who.name,
                           status=str(req.body.get("status") or ""))


def _approve(status: str) -> Action:
    """The older `POST/DELETE …/approve` resource, kept for older clients."""
    def action(fake: FakeBitbucketDC, req: Request) -> JSON:
        pr = _pr(fake, req)
        return fake.set_status(pr.repo.path, pr.id, user=req.who.name, status=status)
    return action


def _raw(fake: FakeBitbucketDC, req: Request) -> Raw:
    repo, path = _repo(fake, req), unquote(req.match["path"])
    text = fake.tree_at(repo, req.query.get("at") or "main").get(path)
    if text is None:
        raise no_such("content.NoSuchPathException",
                      f"The path \"{path}\" does not exist at revision \"{req.query.get('at')}\"")
    return Raw(text)


def _browse(fake: FakeBitbucketDC, req: Request) -> JSON:
    repo, path = _repo(fake, req), unquote(req.match["path"] or "").strip("/")
    at = req.query.get("at") or "main"
    tree = fake.tree_at(repo, at)
    if path in tree:  # a file: its lines
        return page([{"text": line} for line in tree[path].splitlines()], req.query)
    folder = f"{path}/" if path else ""
    names: dict[str, str] = {}
    for p in tree:
        if p.startswith(folder):
            first, _, rest = p[len(folder):].partition("/")
            names[first] = "DIRECTORY" if rest else "FILE"
    if not names:
        raise no_such("content.NoSuchPathException",
                      f"The path \"{path}\" does not exist at revision \"{at}\"")
    children = [{"path": {"components": [n], "name": n, "toString": n}, "type": kind}
                for n, kind in sorted(names.items())]
    return {"path": {"components": path.split("/") if path else [], "toString": path},
            "revision": at, "children": page(children, req.query, 500)}


def _diff(fake: FakeBitbucketDC, req: Request) -> Raw:
    repo = _repo(fake, req)
    since, until = req.query.get("since"), req.query.get("until")
    if not until:
        raise BitbucketError(400, "until: a revision is required")
    return Raw(raw_diff(fake.tree_at(repo, since) if since else {}, fake.tree_at(repo, until)))


def _properties(fake: FakeBitbucketDC, req: Request) -> JSON:
    return {"version": fake.version, "buildNumber": fake.version.replace(".", "") + "000",
            "buildDate": "1700000000000", "displayName": "Bitbucket"}


def _user(fake: FakeBitbucketDC, req: Request) -> JSON:
    req.who  # noqa: B018 - anonymous callers are refused
    slug = unquote(req.match["user"])
    found = next((u for u in fake.users.values() if u.slug == slug), None)
    if found is None:
        raise no_such("user.NoSuchUserException", f"User {slug} does not exist.")
    return fake.user_json(found)


def routes(*, reactions: bool) -> list[Route]:
    """Every route the fake answers (without the comment-likes reactions on a server that
    has none: a request there is answered 404, as an unknown REST resource is)."""

    def r(method: str, path: str, action: Action, status: int = 200) -> Route:
        return Route(method, re.compile(path), action, status)

    table = [
        r("GET", _API + "/application-properties", _properties),
        r("GET", _API + r"/users/(?P<user>[^/]+)", _user),
        r("GET", _API + _REPO, lambda f, q: f.repo_json(_repo(f, q))),
        r("GET", _API + "/dashboard/pull-requests", _dashboard),
        r("GET", _API + _REPO + "/pull-requests", _list_prs),
        r("GET", _API + _PR, lambda f, q: f.pr_json(_pr(f, q))),
        r("GET", _API + _PR + r"\.diff", lambda f, q: Raw(f.pr_diff(_pr(f, q)))),
        r("GET", _API + _PR + "/activities", _activities),
        r("GET", _API + _PR + "/changes", lambda f, q: bitbucket_server_reviews.changes(
            _pr(f, q), q.query)),
        r("GET", _API + _PR + r"/diff/(?P<path>.+)", lambda f, q: bitbucket_server_reviews.
          file_diff(_pr(f, q), unquote(q.match["path"]), q.query)),
        r("GET", _API + _PR + "/commits", lambda f, q: page(
            [f.commit_json(_pr(f, q).repo.commits[s]) for s in reversed(_pr(f, q).commits)],
            q.query)),
        r("POST", _API + _PR + "/comments", _create_comment, 201),
        r("GET", _API + _COMMENT, lambda f, q: f.comment_json(
            f.find_comment(_pr(f, q), q.num("comment")))),
        r("PUT", _API + _COMMENT, _update_comment),
        r("DELETE", _API + _COMMENT, _delete_comment),
        r("PUT", _API + _PR + r"/participants/(?P<user>[^/]+)", _participant),
        r("POST", _API + _PR + "/approve", _approve("APPROVED")),
        r("DELETE", _API + _PR + "/approve", _approve("UNAPPROVED")),
        r("GET", _API + _REPO + r"/raw/(?P<path>.+)", _raw),
        r("GET", _API + _REPO + r"/browse(?:/(?P<path>.*))?", _browse),
        r("GET", _API + _REPO + "/diff", _diff),
    ]
    if reactions:
        likes = r"/comment-likes/latest" + _COMMENT + r"/reactions/(?P<emoticon>[^/]+)"
        table += [r("PUT", likes, _react), r("DELETE", likes, _unreact)]
    return table
