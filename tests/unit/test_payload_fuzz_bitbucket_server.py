"""Every Bitbucket Data Center adapter method that reads JSON, fed mutated copies of
Bitbucket-shaped payloads: the result is a model object or a HostError, never any other
exception.

The seeds are the fake Bitbucket's own answers to the requests the adapter makes, on a pull
request with what a real one holds: an inline thread with nested replies, an edited
comment, a reacted comment, a service account among the commenters, two commits, a folder.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import pytest
from hypothesis import given

from livereview.core.model import (
    Anchor,
    DiffRefs,
    Identity,
    InlineComment,
    Message,
    MRKey,
    PostedReview,
    Side,
    Snapshot,
    Thread,
    Verdict,
)
from livereview.hosts.bitbucket_server.adapter import BitbucketServer
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from tests.unit.fuzz_payloads import (
    FUZZ,
    Host,
    Route,
    broken_routes,
    client,
    collect,
    outcome,
)

REPO = "ACME/widgets"
A = r"^/rest/api/1\.0"
R = A + r"/projects/ACME/repos/widgets"
START = datetime(2024, 5, 2, 14, 34, 54, tzinfo=UTC)
OLD = {"js/app.js": "let a = 1;\nlet b = 2;\n", "js/lib/util.js": "export {};\n"}
NEW = {"js/app.js": "let a = 1;\nlet b = 20;\nlet c = 3;\n", "js/lib/util.js": "export {};\n"}


class Seeds:
    """Builds the pull request on a FakeBitbucketDC and asks its server (not started: no
    socket) what it answers."""

    def __init__(self) -> None:
        ticks = itertools.count()  # a second per reading: reproducible seeds and examples
        self.fake = fake = FakeBitbucketDC(clock=lambda: START + timedelta(seconds=next(ticks)))
        self.server = FakeBitbucketDCServer(fake)
        fake.add_user("alice")
        fake.add_user("ci-token", "CI", service=True)
        self.pr = fake.add_pr(REPO, title="Count c", description="Adds c.", author="alice",
                              files={path: (OLD[path], NEW[path]) for path in OLD})
        fake.push(REPO, self.pr, files={
            "js/app.js": (NEW["js/app.js"], NEW["js/app.js"] + "let d = 4;\n")})
        self.question = fake.add_comment(REPO, self.pr, author="alice", text="@livereview why?")
        fake.react(REPO, self.pr, self.question["id"], user="alice", emoticon="thumbsdown")
        self.root = fake.add_comment(REPO, self.pr, author="alice", text="Why 20?",
                                     path="js/app.js", line=2)
        reply = fake.add_comment(REPO, self.pr, author="ci-token", text="Lint passed.",
                                 parent=self.root["id"])
        fake.add_comment(REPO, self.pr, author="alice", text="Thanks.", parent=reply["id"])
        fake.edit_comment(REPO, self.pr, self.question["id"], "@livereview why 20?")

    def answer(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        """The body the fake answers (JSON, or text for a raw diff or file); it must
        succeed, or the seed would be an error payload."""
        route, _, query = path.partition("?")
        params = dict(p.split("=", 1) for p in query.split("&") if p)
        status, data, headers = self.server.dispatch(
            method, route, params, json.dumps(body).encode() if body else b"",
            {"authorization": "Bearer fake-http-access-token"})
        assert status in (200, 201), (method, path, status, data[:200])
        return json.loads(data) if "json" in headers["Content-Type"] else data.decode()


SEED = Seeds()
PULL = f"/rest/api/1.0/projects/ACME/repos/widgets/pull-requests/{SEED.pr}"
PR = SEED.answer("GET", PULL)
ROUTES = [
    Route("GET", A + "/application-properties$", SEED.answer(  # 0
        "GET", "/rest/api/1.0/application-properties")),
    Route("GET", A + "/users/livereview$", SEED.answer("GET", "/rest/api/1.0/users/livereview")),
    Route("GET", R + "$", SEED.answer("GET", "/rest/api/1.0/projects/ACME/repos/widgets")),
    Route("GET", R + "/pull-requests$", SEED.answer(
        "GET", "/rest/api/1.0/projects/ACME/repos/widgets/pull-requests?limit=100")),
    Route("GET", R + r"/pull-requests/\d+$", PR),
    Route("GET", R + r"/pull-requests/\d+/activities$", SEED.answer(  # 5
        "GET", f"{PULL}/activities?limit=100")),
    Route("GET", R + r"/pull-requests/\d+/commits$", SEED.answer(
        "GET", f"{PULL}/commits?limit=100")),
    Route("GET", R + r"/pull-requests/\d+/comments/\d+$", SEED.answer(
        "GET", f"{PULL}/comments/{SEED.root['id']}")),
    Route("GET", R + r"/pull-requests/\d+\.diff$", SEED.answer("GET", f"{PULL}.diff")),
    Route("GET", R + "/diff$", SEED.answer(
        "GET", "/rest/api/1.0/projects/ACME/repos/widgets/diff?since="
        f"{PR['toRef']['latestCommit']}&until={PR['fromRef']['latestCommit']}")),
    Route("GET", R + "/raw/js/app.js$", SEED.answer(  # 10
        "GET", "/rest/api/1.0/projects/ACME/repos/widgets/raw/js/app.js?at=feature")),
    Route("GET", R + "/browse/js$", SEED.answer(
        "GET", "/rest/api/1.0/projects/ACME/repos/widgets/browse/js?at=feature")),
    Route("POST", R + r"/pull-requests/\d+/comments$", SEED.answer(
        "POST", f"{PULL}/comments", {"text": "An answer.", "parent": {"id": SEED.root["id"]}}),
        201),
    Route("PUT", r"^/rest/comment-likes/latest/.+/reactions/thinking_face$", SEED.answer(
        "PUT", f"/rest/comment-likes/latest/projects/ACME/repos/widgets/pull-requests/{SEED.pr}"
        f"/comments/{SEED.question['id']}/reactions/thinking_face")),
    Route("PUT", R + r"/pull-requests/\d+/comments/\d+$", SEED.answer(
        "PUT", f"{PULL}/comments/{SEED.root['id']}", {"version": 0, "threadResolved": True})),
    Route("PUT", R + r"/pull-requests/\d+/participants/livereview$", SEED.answer(  # 15
        "PUT", f"{PULL}/participants/livereview", {"status": "APPROVED"})),
]
ROUTES += [
    Route("GET", R + r"/pull-requests/\d+/changes$", SEED.answer("GET", f"{PULL}/changes")),
    Route("GET", R + r"/pull-requests/\d+/diff/", SEED.answer(  # 17
        "GET", f"{PULL}/diff/js/app.js?contextLines=3")),
]
KEY = MRKey("bbs", REPO, SEED.pr)
REFS = DiffRefs(PR["toRef"]["latestCommit"], "", PR["fromRef"]["latestCommit"])
FINDING = InlineComment("js/app.js", 2, Side.OLD, "A finding.")
THREAD = str(SEED.root["id"])
ANCHOR = Anchor("js/app.js", "js/app.js", 3, None, "", "", PR["fromRef"]["latestCommit"])
SINCE = datetime(2000, 1, 1, tzinfo=UTC)
Call = Callable[[BitbucketServer], Awaitable[object]]
CALLS: dict[str, tuple[list[int], Call, type | tuple[type, ...]]] = {
    "whoami": ([0, 1], lambda h: h.whoami(), Identity),
    "repo_exists": ([2], lambda h: h.repo_exists(REPO), bool),
    "list_changed_mrs": ([0, 3], lambda h: h.list_changed_mrs((REPO,), SINCE), list),
    "fetch_mr": ([0, 4, 5, 6], lambda h: h.fetch_mr(
        REPO, SEED.pr, frozenset({str(SEED.question["id"])})), Snapshot),
    "fetch_thread": ([7], lambda h: h.fetch_thread(KEY, THREAD), Thread),
    "diff": ([8], lambda h: h.diff(KEY), str),
    "diff_of_an_old_head": ([4, 9], lambda h: h.diff(KEY, "0" * 40), str),
    "file_content": ([10], lambda h: h.file_content(REPO, "feature", "js/app.js"), str),
    "list_files": ([11], lambda h: h.list_files(REPO, "feature", "js"), list),
    "reply": ([12], lambda h: h.reply(KEY, THREAD, "An answer."), Message),
    "comment_on_a_line": ([12], lambda h: h.comment(KEY, "A remark.", ANCHOR), Message),
    "react": ([13], lambda h: h.react(KEY, str(SEED.question["id"]), "thinking_face"), type(None)),
    "resolve": ([7, 14], lambda h: h.resolve(KEY, THREAD), type(None)),
    "approve": ([0, 1, 15], lambda h: h.approve(KEY), type(None)),
    "diffstat": ([16, 17], lambda h: h.diffstat(KEY), list),
    "diff_files": ([16, 17], lambda h: collect(h.diff_files(KEY)), list),
    "post_review": ([0, 1, 12, 15], lambda h: h.post_review(
        KEY, REFS, [FINDING], "Summary.", Verdict.APPROVED), PostedReview),
    "reviews_posted": ([0, 1, 4, 5, 6], lambda h: h.reviews_posted(KEY), list),
}


class Bitbucket(Host):
    """Names the token's user on every answer, as Bitbucket does (X-AUSERNAME)."""

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        response = super().__call__(request)
        response.headers["X-AUSERNAME"] = "livereview"
        return response


def run(name: str, broken: int = -1, body: bytes = b"") -> str:
    _, call, expected = CALLS[name]
    host = BitbucketServer("bbs", client("https://bitbucket.example.com", "bitbucket-server",
                                         Bitbucket(ROUTES, broken, body)))
    return outcome(lambda: call(host), expected)


def test_the_seeds_hold_what_the_properties_aim_at() -> None:
    """Nested replies, an edit, a reaction, a service account, two commits: without them,
    mutations of the fields that carry them would be read by no call."""
    activities = ROUTES[5].payload["values"]
    commented = [a for a in activities if a["action"] == "COMMENTED"]
    assert {a["commentAction"] for a in commented} == {"ADDED", "REPLIED", "EDITED"}
    root = next(a["comment"] for a in commented if a["comment"]["id"] == SEED.root["id"])
    assert root["comments"][0]["comments"][0]["text"] == "Thanks."  # two levels deep
    assert root["comments"][0]["author"]["type"] == "SERVICE"
    assert any(a["comment"].get("properties", {}).get("reactions") for a in commented)
    assert len(ROUTES[6].payload["values"]) == 2


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_seeds_themselves_make_model_objects(name: str) -> None:
    assert run(name) == "result"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_mutated_payloads_end_in_a_model_object_or_a_host_error(name: str) -> None:
    used = CALLS[name][0]

    @FUZZ
    @given(broken_routes(ROUTES, used))
    def prop(broken: tuple[int, bytes]) -> None:
        run(name, *broken)

    prop()
