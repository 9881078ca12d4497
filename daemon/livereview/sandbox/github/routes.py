"""The fake GitHub's REST routes: the request the handlers see and the handlers themselves.

Each route maps a method and a path pattern to an action on the FakeGitHub; server.py
matches requests against `routes()` (after stripping GHES's `/api/v3` prefix) and turns the
results into responses. A handler returns JSON, a `Raw` body (media types), or a `Created`
pair when the status depends on the outcome (reactions: 201 new, 200 existing).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from livereview.sandbox.github import reviews as github_reviews
from livereview.sandbox.github.model import (
    JSON,
    GitHubError,
    IssueComment,
    PullRequest,
    ReviewComment,
    not_found,
)
from livereview.sandbox.github.notifications import Listing, NotModified
from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.loopback import Route as LoopRoute

_REPO = r"/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"
_PULL = _REPO + r"/pulls/(?P<number>\d+)"
_ISSUE = _REPO + r"/issues/(?P<number>\d+)"


@dataclass
class Request:
    """One API call as the routes see it: the acting user, path groups, body and query."""

    user: str
    match: re.Match[str]
    body: dict[str, Any]
    query: dict[str, str]
    accept: str
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def repo(self) -> str:
        return f"{self.match['owner']}/{self.match['name']}"

    def num(self, group: str) -> int:
        return int(self.match[group])

    def need(self, name: str) -> Any:
        value = self.body.get(name)
        if value in (None, ""):
            raise GitHubError(422, "Invalid request.\n\n\"" + name + "\" wasn't supplied.",
                              "https://docs.github.com/rest")
        return value


@dataclass(frozen=True)
class Raw:
    text: str
    content_type: str


@dataclass(frozen=True)
class Created:
    body: JSON
    created: bool  # 201 if True, else 200


Action = Callable[[FakeGitHub, Request], Any]

Route = LoopRoute[Action]


def _sorted(items: list[Any], req: Request, default_desc: bool = False) -> list[Any]:
    """`sort` (created | updated) and `direction`, else ascending by id (GitHub's default)."""
    sort = req.query.get("sort", "")
    key: Callable[[Any], Any] = (lambda c: (c.updated_at, c.id)) if sort == "updated" else (
        lambda c: (c.created_at, c.id)) if sort in ("created", "created_at") else (lambda c: c.id)
    default = "desc" if default_desc else "asc"
    return sorted(items, key=key, reverse=req.query.get("direction", default) == "desc")


def _since(fake: FakeGitHub, req: Request, items: list[Any]) -> list[Any]:
    """`since`: only results last updated at or after the given time."""
    since = fake.since(req.query.get("since"))
    return [c for c in items if since is None or c.updated_at >= since]


def _list_pulls(fake: FakeGitHub, req: Request) -> list[JSON]:
    q = req.query
    state = q.get("state", "open")
    with fake.lock:
        repo = fake.find_repo(req.repo)
        pulls = [p for p in repo.issues.values() if p.is_pull
                 and state in ("all", p.state)
                 and q.get("base", p.base_ref) == p.base_ref
                 and q.get("head", f"{repo.owner.login}:{p.head_ref}")
                 == f"{repo.owner.login}:{p.head_ref}"]
        sort = q.get("sort", "created")
        key: Callable[[PullRequest], Any] = (
            (lambda p: (p.updated_at, p.id)) if sort == "updated" else
            (lambda p: (p.created_at, p.id)))
        # "Default: desc when sort is created or sort is not specified, otherwise asc."
        default = "desc" if sort == "created" else "asc"
        pulls.sort(key=key, reverse=q.get("direction", default) == "desc")
        return [fake.pull_json(p) for p in pulls]


def _get_pull(fake: FakeGitHub, req: Request) -> Any:
    with fake.lock:
        pr = fake.find_issue(req.repo, req.num("number"), pull=True)
        if "diff" in req.accept:
            return Raw(fake.diff_text(pr.repo, pr.base_sha, pr.head_sha),
                       "application/vnd.github.diff; charset=utf-8")
        return fake.pull_json(pr, full=True)


def _with_pull(build: Callable[[FakeGitHub, PullRequest, Request], Any]) -> Action:
    def action(fake: FakeGitHub, req: Request) -> Any:
        with fake.lock:
            return build(fake, fake.find_issue(req.repo, req.num("number"), pull=True), req)

    return action


def _pull_files(fake: FakeGitHub, pr: PullRequest, req: Request) -> list[JSON]:
    files = fake.compare(pr.repo, pr.base_sha, pr.head_sha)[1]
    return [fake.file_json(pr.repo, pr.head_sha, f) for f in files][:3000]


def _repo_issue_comments(fake: FakeGitHub, req: Request) -> list[JSON]:
    with fake.lock:
        comments = [c for i in fake.find_repo(req.repo).issues.values() for c in i.comments]
        return [fake.issue_comment_json(c) for c in _sorted(_since(fake, req, comments), req)]


def _repo_review_comments(fake: FakeGitHub, req: Request) -> list[JSON]:
    with fake.lock:
        comments = [c for p in fake.find_repo(req.repo).issues.values()
                    for c in p.review_comments]
        return [fake.review_comment_json(c)
                for c in _sorted(_since(fake, req, comments), req)]


def _issue_comments(fake: FakeGitHub, req: Request) -> list[JSON]:
    with fake.lock:
        issue = fake.find_issue(req.repo, req.num("number"))
        return [fake.issue_comment_json(c) for c in _since(fake, req, issue.comments)]


def _create_issue_comment(fake: FakeGitHub, req: Request) -> JSON:
    return fake.add_issue_comment(req.repo, req.num("number"), author=req.user,
                                  body=str(req.need("body")))


def _create_review_comment(fake: FakeGitHub, req: Request) -> JSON:
    b = req.body
    if b.get("in_reply_to"):
        return fake.reply_review_comment(req.repo, req.num("number"), int(b["in_reply_to"]),
                                         author=req.user, body=str(req.need("body")))
    if b.get("subject_type") == "file":  # on the whole file: no line
        for name in ("commit_id", "path"):
            req.need(name)
        return fake.add_file_comment(req.repo, req.num("number"), author=req.user,
                                     body=str(req.need("body")), path=str(b["path"]),
                                     commit_id=str(b["commit_id"]))
    for name in ("commit_id", "path", "line"):
        req.need(name)
    start = b.get("start_line")
    return fake.add_review_comment(req.repo, req.num("number"), author=req.user,
                                   body=str(req.need("body")), path=str(b["path"]),
                                   line=int(b["line"]), side=str(b.get("side") or "RIGHT"),
                                   commit_id=str(b["commit_id"]),
                                   start_line=None if start is None else int(start),
                                   start_side=str(b.get("start_side") or b.get("side")
                                                  or "RIGHT"))


def _comment(fake: FakeGitHub, req: Request, kind: str) -> IssueComment | ReviewComment:
    if kind == "issue":
        return fake.find_issue_comment(req.repo, req.num("comment"))
    return fake.find_review_comment(req.repo, req.num("comment"))


def _reactions(kind: str) -> Action:
    def action(fake: FakeGitHub, req: Request) -> Any:
        with fake.lock:
            comment = _comment(fake, req, kind)
            return [fake.reaction_json(r) for r in comment.reactions
                    if req.query.get("content", r.content) == r.content]

    return action


def _react(kind: str) -> Action:
    def action(fake: FakeGitHub, req: Request) -> Created:
        body, created = fake.react(req.repo, kind, req.num("comment"), user=req.user,
                                   content=str(req.need("content")))
        return Created(body, created)

    return action


def _compare(fake: FakeGitHub, req: Request) -> JSON:
    base, sep, head = req.match["basehead"].partition("...")
    if not sep:
        raise not_found("https://docs.github.com/rest/commits/commits#compare-two-commits")
    with fake.lock:
        return fake.compare_json(fake.find_repo(req.repo), unquote(base), unquote(head))


def _entry(tree: dict[str, str], path: str) -> JSON:
    digest = hashlib.sha1(path.encode(), usedforsecurity=False).hexdigest()
    kind = "file" if path in tree else "dir"
    return {"type": kind, "name": path.rsplit("/", 1)[-1], "path": path, "sha": digest,
            "size": len(tree.get(path, ""))}


def _contents(fake: FakeGitHub, req: Request) -> Any:
    path = unquote(req.match["path"])
    with fake.lock:
        repo = fake.find_repo(req.repo)
        ref = req.query.get("ref") or repo.default_branch
        tree = fake.tree_at(repo, ref)
        text = tree.get(path)
        if text is None:
            folder = path.strip("/") + "/"
            names = sorted({p[len(folder):].split("/")[0] for p in tree if p.startswith(folder)})
            if names:  # a directory: its entries, as GitHub lists them
                return [_entry(tree, f"{folder}{name}") for name in names]
            raise not_found("https://docs.github.com/rest/repos/contents#get-repository-content")
        if "raw" in req.accept:
            return Raw(text, "application/vnd.github.raw; charset=utf-8")
        return fake.content_json(repo, ref, path, text)


def _reply(fake: FakeGitHub, req: Request) -> JSON:
    return fake.reply_review_comment(req.repo, req.num("number"), req.num("comment"),
                                     author=req.user, body=str(req.need("body")))


def _review(fake: FakeGitHub, req: Request) -> JSON:
    with fake.lock:
        pr = fake.find_issue(req.repo, req.num("number"), pull=True)
        return fake.review_json(fake.find_review(pr, req.num("review")))


def _notifications(fake: FakeGitHub, req: Request) -> Listing | NotModified:
    return fake.list_notifications(req.user, req.query,
                                   req.headers.get("if-modified-since") or "")


def _mark_read(fake: FakeGitHub, req: Request) -> None:
    fake.mark_thread_read(req.user, req.num("thread"))


def _mark_all_read(fake: FakeGitHub, req: Request) -> JSON:
    last = req.body.get("last_read_at")
    fake.mark_all_read(req.user, str(last) if last else None)
    return {"message": "Unread notifications couldn't be marked in a single request. "
                       "Notifications are being marked as read in the background."}


def routes() -> list[Route]:
    """Every REST route the fake answers, matched in order against the request path."""

    def r(method: str, path: str, action: Action, status: int = 200,
          paged: bool = False) -> Route:
        return Route(method, re.compile(path), action, status, paged)

    def get_repo(f: FakeGitHub, q: Request) -> JSON:
        with f.lock:
            return f.repo_json(f.find_repo(q.repo))

    def get_comment(kind: str) -> Action:
        def action(f: FakeGitHub, q: Request) -> JSON:
            with f.lock:
                c = _comment(f, q, kind)
                if isinstance(c, IssueComment):
                    return f.issue_comment_json(c)
                return f.review_comment_json(c)
        return action

    issue_comment = _REPO + r"/issues/comments/(?P<comment>\d+)"
    review_comment = _REPO + r"/pulls/comments/(?P<comment>\d+)"
    return [
        r("GET", "/user", lambda f, q: f.add_user(q.user)),
        r("GET", "/notifications", _notifications),
        r("PUT", "/notifications", _mark_all_read, 202),
        r("PATCH", r"/notifications/threads/(?P<thread>\d+)", _mark_read, 205),
        r("GET", _REPO, get_repo),
        r("GET", _REPO + "/pulls", _list_pulls, paged=True),
        r("GET", _REPO + "/pulls/comments", _repo_review_comments, paged=True),
        r("GET", review_comment, get_comment("review")),
        r("GET", review_comment + "/reactions", _reactions("review"), paged=True),
        r("POST", review_comment + "/reactions", _react("review"), 201),
        r("GET", _PULL, _get_pull),
        r("GET", _PULL + "/commits", _with_pull(lambda f, pr, q: [
            f.commit_json(pr.repo, pr.repo.commits[s]) for s in pr.commits][:250]), paged=True),
        r("GET", _PULL + "/files", _with_pull(_pull_files), paged=True),
        r("GET", _PULL + "/comments", _with_pull(lambda f, pr, q: [
            f.review_comment_json(c) for c in _sorted(_since(f, q, pr.review_comments), q)]),
          paged=True),
        r("POST", _PULL + "/comments", _create_review_comment, 201),
        r("POST", _PULL + r"/comments/(?P<comment>\d+)/replies", _reply, 201),
        r("GET", _PULL + "/reviews", _with_pull(lambda f, pr, q: [
            f.review_json(v) for v in pr.reviews if v.state != "PENDING"]), paged=True),
        r("GET", _PULL + r"/reviews/(?P<review>\d+)", _review),
        r("POST", _PULL + "/reviews", lambda f, q: github_reviews.create_review(
            f, q.repo, q.num("number"), user=q.user, payload=q.body)),
        r("GET", _PULL + r"/reviews/(?P<review>\d+)/comments", _with_pull(
            lambda f, pr, q: github_reviews.review_comments(f, pr, q.num("review"))), paged=True),
        r("PUT", _PULL + r"/reviews/(?P<review>\d+)/dismissals", _with_pull(
            lambda f, pr, q: github_reviews.dismiss(f, pr, q.num("review"),
                                                    str(q.body.get("message") or "")))),
        r("GET", _REPO + "/issues/comments", _repo_issue_comments, paged=True),
        r("GET", issue_comment, get_comment("issue")),
        r("GET", issue_comment + "/reactions", _reactions("issue"), paged=True),
        r("POST", issue_comment + "/reactions", _react("issue"), 201),
        r("GET", _ISSUE + "/comments", _issue_comments, paged=True),
        r("POST", _ISSUE + "/comments", _create_issue_comment, 201),
        r("GET", _REPO + r"/compare/(?P<basehead>[^/]+)", _compare),
        r("GET", _REPO + r"/contents/(?P<path>.+)", _contents),
    ]
