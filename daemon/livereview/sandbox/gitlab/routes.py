"""The fake GitLab's REST v4 routes: the request the handlers see and the handlers themselves.

Each route maps a method and a path pattern (under /api/v4) to an action on the FakeGitLab;
server.py matches requests against `routes()` and turns the results into responses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import unquote

from livereview.sandbox.gitlab.model import JSON, GitLabError, MergeRequest
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.sandbox.loopback import Route as LoopRoute

_PROJECT = r"/projects/(?P<project>[^/]+)"
_MR = _PROJECT + r"/merge_requests/(?P<iid>\d+)"
_DISC = _MR + r"/discussions/(?P<discussion>[0-9a-f]+)"
_NOTE = _MR + r"/notes/(?P<note>\d+)"


@dataclass
class Request:
    """One API call as the routes see it: the acting user, path groups and merged params."""

    user: str
    match: re.Match[str]
    params: dict[str, Any]
    query: dict[str, str]

    def __getitem__(self, group: str) -> str:
        value = self.match[group]
        return unquote(value) if group in {"project", "file"} else value

    def num(self, group: str) -> int:
        return int(self.match[group])

    def need(self, name: str) -> Any:
        value = self.params.get(name)
        if value in (None, ""):
            raise GitLabError(400, f"{name} is missing", "error")  # Grape's validation error
        return value


Action = Callable[[FakeGitLab, Request], Any]

Route = LoopRoute[Action]


def _time(req: Request, name: str) -> datetime | None:
    value = req.query.get(name)
    try:
        return datetime.fromisoformat(value) if value else None
    except ValueError:
        raise GitLabError(400, f"{name} is invalid", "error") from None


def _list_mrs(fake: FakeGitLab, req: Request) -> list[JSON]:
    """GET /merge_requests (default scope created_by_me) and /projects/:id/merge_requests."""
    q = req.query
    instance = "project" not in req.match.groupdict()
    scope = q.get("scope", "created_by_me" if instance else "all")
    state, after = q.get("state", "all"), _time(req, "updated_after")
    before, created_after = _time(req, "updated_before"), _time(req, "created_after")
    with fake.lock:
        # MergeRequestsFinder lists the MRs of projects the user may read only
        projects = ([p for p in fake.projects.values() if fake.can_read(req.user, p)]
                    if instance else [fake.find_project(req["project"])])
        mrs: list[MergeRequest] = [
            mr for p in projects for mr in p.mrs.values()
            if state in {"all", mr.state}
            and (scope == "all" or (scope == "created_by_me" and mr.author.username == req.user))
            and (after is None or mr.updated_at >= fake.now(after))  # "updated on or after"
            and (before is None or mr.updated_at <= fake.now(before))
            and (created_after is None or mr.created_at >= fake.now(created_after))
            and q.get("source_branch", mr.source_branch) == mr.source_branch
            and q.get("author_username", mr.author.username) == mr.author.username]
        key = "updated_at" if q.get("order_by") == "updated_at" else "created_at"
        mrs.sort(key=lambda mr: (getattr(mr, key), mr.id), reverse=q.get("sort", "desc") != "asc")
        return [fake.mr_json(mr) for mr in mrs]


def _notes(fake: FakeGitLab, req: Request) -> list[JSON]:
    with fake.lock:
        mr = fake.find_mr(req["project"], req.num("iid"))
        notes = [n for d in mr.discussions for n in d.notes]
        key = "updated_at" if req.query.get("order_by") == "updated_at" else "created_at"
        notes.sort(key=lambda n: (getattr(n, key), n.id), reverse=req.query.get("sort") != "asc")
        return [fake.note_json(n) for n in notes]


def _with_mr(build: Callable[[FakeGitLab, MergeRequest, Request], Any]) -> Action:
    def action(fake: FakeGitLab, req: Request) -> Any:
        with fake.lock:
            return build(fake, fake.find_mr(req["project"], req.num("iid")), req)

    return action


def _version(fake: FakeGitLab, mr: MergeRequest, req: Request) -> JSON:
    v = next((v for v in mr.versions if v.id == req.num("version")), None)
    if v is None:
        raise GitLabError(404, "404 Not found")
    return fake.version_json(mr, v, full=True)


def _todos(fake: FakeGitLab, req: Request) -> list[JSON]:
    q = req.query
    with fake.lock:
        return [fake.todo_json(t) for t in fake.todos(req.user)
                if t.state == q.get("state", "pending") and q.get("type", "MergeRequest")
                == "MergeRequest" and q.get("action", t.action) == t.action
                and q.get("project_id", str(t.mr.project.id)) == str(t.mr.project.id)]


def _discussion_note(fake: FakeGitLab, req: Request) -> JSON:
    """PUT .../discussions/:id/notes/:note_id takes either `body` or `resolved`."""
    if "resolved" in req.params:
        fake.resolve(req["project"], req.num("iid"), req["discussion"],
                     str(req.params["resolved"]).lower() == "true", user=req.user,
                     note_id=req.num("note"))
        with fake.lock:
            return fake.note_json(fake.find_note(fake.find_mr(req["project"], req.num("iid")),
                                                 req.num("note")))
    return fake.edit_note(req["project"], req.num("iid"), req.num("note"), req.need("body"),
                          user=req.user)


def _reply(fake: FakeGitLab, req: Request) -> JSON:
    return fake.add_note(req["project"], req.num("iid"), author=req.user, body=req.need("body"),
                         reply_to_discussion=req["discussion"], api=True)


def routes() -> list[Route]:
    """Every REST v4 route the fake answers, matched in order against the request path."""

    def r(method: str, path: str, action: Action, status: int = 200, paged: bool = False) -> Route:
        return Route(method, re.compile("/api/v4" + path), action, status, paged)

    def project(f: FakeGitLab, q: Request) -> JSON:
        with f.lock:
            return f.project_json(f.find_project(q["project"]))

    return [
        r("GET", "/user", lambda f, q: f.user_json(f.users[q.user], full=True)),
        r("GET", "/version", lambda f, q: {"version": "17.5.0", "revision": "abc",
                                            "kas": {"enabled": False}, "enterprise": False}),
        r("GET", "/merge_requests", _list_mrs, paged=True),
        r("GET", _PROJECT, project),
        r("PUT", _PROJECT, lambda f, q: f.edit_project(q["project"], q.params)),
        r("GET", _PROJECT + "/merge_requests", _list_mrs, paged=True),
        r("GET", _PROJECT + "/repository/tree",
          lambda f, q: f.tree(q["project"], q.query.get("path", ""), q.query.get("ref")),
          paged=True),
        r("GET", _PROJECT + r"/repository/files/(?P<file>[^/]+)/raw",
          lambda f, q: f.raw_file(q["project"], q["file"], q.query.get("ref"))),
        r("GET", _MR, _with_mr(lambda f, mr, q: f.mr_json(mr, full=True))),
        r("GET", _MR + "/commits", _with_mr(lambda f, mr, q: [
            f.commit_json(mr.project, sha) for sha in reversed(mr.commits)]), paged=True),
        r("GET", _MR + "/diffs", _with_mr(lambda f, mr, q: f.version_json(
            mr, mr.versions[-1], full=True)["diffs"]), paged=True),
        r("GET", _MR + "/versions", _with_mr(lambda f, mr, q: [
            f.version_json(mr, v) for v in reversed(mr.versions)]), paged=True),
        r("GET", _MR + r"/versions/(?P<version>\d+)", _with_mr(_version)),
        r("GET", _MR + "/discussions", lambda f, q: f.discussions(q["project"], q.num("iid")),
          paged=True),
        r("POST", _MR + "/discussions", lambda f, q: f.create_discussion(
            q["project"], q.num("iid"), author=q.user, body=q.need("body"),
            position=q.params.get("position")), 201),
        r("GET", _DISC, _with_mr(lambda f, mr, q: f.discussion_json(
            f.find_discussion(mr, q["discussion"])))),
        r("PUT", _DISC, lambda f, q: f.resolve(q["project"], q.num("iid"), q["discussion"],
                                                str(q.need("resolved")).lower() == "true",
                                                user=q.user)),
        r("POST", _DISC + "/notes", _reply, 201),
        r("PUT", _DISC + r"/notes/(?P<note>\d+)", _discussion_note),
        r("DELETE", _DISC + r"/notes/(?P<note>\d+)", lambda f, q: f.delete_note(
            q["project"], q.num("iid"), q.num("note"), user=q.user), 204),
        r("GET", _MR + "/notes", _notes, paged=True),
        r("POST", _MR + "/notes", lambda f, q: f.add_note(
            q["project"], q.num("iid"), author=q.user, body=q.need("body"), api=True), 201),
        r("GET", _NOTE, _with_mr(lambda f, mr, q: f.note_json(f.find_note(mr, q.num("note"))))),
        r("PUT", _NOTE, lambda f, q: f.edit_note(q["project"], q.num("iid"), q.num("note"),
                                                  q.need("body"), user=q.user)),
        r("DELETE", _NOTE, lambda f, q: f.delete_note(q["project"], q.num("iid"), q.num("note"),
                                                       user=q.user), 204),
        r("GET", _NOTE + "/award_emoji", lambda f, q: f.awards_on(
            q["project"], q.num("iid"), q.num("note")), paged=True),
        r("POST", _NOTE + "/award_emoji", lambda f, q: f.award(
            q["project"], q.num("iid"), q.num("note"), user=q.user, name=q.need("name")), 201),
        r("GET", _NOTE + r"/award_emoji/(?P<award>\d+)", lambda f, q: next(
            a for a in f.awards_on(q["project"], q.num("iid"), q.num("note"))
            if a["id"] == q.num("award"))),
        r("DELETE", _NOTE + r"/award_emoji/(?P<award>\d+)", lambda f, q: f.delete_award(
            q["project"], q.num("iid"), q.num("note"), q.num("award"), user=q.user), 204),
        r("POST", _MR + "/approve", lambda f, q: f.approve(
            q["project"], q.num("iid"), user=q.user, sha=q.params.get("sha")), 201),
        r("POST", _MR + "/unapprove", lambda f, q: f.unapprove(
            q["project"], q.num("iid"), user=q.user), 201),
        r("GET", _MR + "/approvals", lambda f, q: f.approvals(q["project"], q.num("iid"))),
        r("GET", "/todos", _todos, paged=True),
        r("POST", r"/todos/(?P<todo>\d+)/mark_as_done",
          lambda f, q: f.mark_todo_done(q.user, q.num("todo")), 201),
        r("POST", "/todos/mark_as_done", lambda f, q: f.mark_todo_done(q.user), 204),
    ]
