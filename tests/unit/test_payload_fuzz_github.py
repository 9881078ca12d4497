"""Every GitHub adapter method that reads JSON (REST and GraphQL), fed mutated copies of
GitHub-shaped payloads: the result is a model object or a HostError, never any other
exception.

The seeds are the fake GitHub's own answers to the requests the adapter makes (its
payloads carry every key of GitHub's REST schemas, tests/sandbox/test_fake_github.py), on
a pull request with what a real one holds: a review thread with a reply, a review body, a
reacted comment, two commits, files in a folder, and a GitHub App's `[bot]` account
(`type: "Bot"`) among the commenters.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

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
from livereview.hosts.github.adapter import GitHub
from livereview.hosts.github.graphql import ADD_REACTION, REVIEW_THREADS, SET_RESOLVED
from livereview.hosts.github.poll import search_document
from livereview.sandbox.github.graphql import execute
from livereview.sandbox.github.server import FakeGitHubServer
from livereview.sandbox.github.state import FakeGitHub
from tests.unit.fuzz_payloads import (
    FUZZ,
    Host,
    Route,
    broken_routes,
    client,
    collect,
    outcome,
)

REPO = "acme/widgets"
R = r"^/repos/acme/widgets"
START = datetime(2024, 5, 2, 14, 34, 54, tzinfo=UTC)
OLD = {"js/app.js": "let a = 1;\nlet b = 2;\n", "js/lib/util.js": "export {};\n"}
NEW = {"js/app.js": "let a = 1;\nlet b = 20;\nlet c = 3;\n", "js/lib/util.js": "export {};\n"}


class Seeds:
    """Builds the pull request on a FakeGitHub and asks its server (not started: no socket)
    what it answers, as api.github.com would."""

    def __init__(self) -> None:
        # A clock that ticks a second per reading: seeds, hence examples, are reproducible.
        ticks = itertools.count()
        self.fake = FakeGitHub(clock=lambda: START + timedelta(seconds=next(ticks)))
        self.server = FakeGitHubServer(self.fake)
        fake = self.fake
        fake.add_user("alice")
        fake.add_user("ci-helper[bot]")  # a GitHub App's account
        self.number = fake.add_pr(REPO, title="Count c", body="Adds c.", author="alice", files={
            path: (OLD[path], NEW[path]) for path in OLD})
        fake.push(REPO, self.number, files={
            "js/app.js": (NEW["js/app.js"], NEW["js/app.js"] + "let d = 4;\n")})
        self.question = fake.add_issue_comment(REPO, self.number, author="alice",
                                               body="@livereview why 20?")
        # A reacted comment: its rollup's total_count > 0 makes the adapter read the list.
        fake.react(REPO, "issue", self.question["id"], user="alice", content="eyes")
        fake.add_issue_comment(REPO, self.number, author="ci-helper[bot]", body="Coverage 93 %.")
        self.root = fake.add_review_comment(REPO, self.number, author="alice", body="Why?",
                                            path="js/app.js", line=2)
        fake.reply_review_comment(REPO, self.number, self.root["id"], author="ci-helper[bot]",
                                  body="Lint passed.")
        self.review = fake.add_review(REPO, self.number, author="alice", body="Nearly there.")

    def get(self, path: str, *, accept: str = "") -> Any:
        return self.answer("GET", path, accept=accept)

    def answer(self, method: str, path: str, body: dict[str, Any] | None = None, *,
               accept: str = "") -> Any:
        """The body the fake answers (JSON, or text for a raw media type); it must succeed,
        or the seed would be an error payload."""
        status, data, headers = self.server.dispatch(
            method, path, {}, json.dumps(body).encode() if body else b"", {
                "user-agent": "seeds", "authorization": "Bearer ghp_fake-token",
                "accept": accept})
        assert status in (200, 201), (method, path, status, data[:200])
        return json.loads(data) if "json" in headers["Content-Type"] else data.decode()

    def graphql(self, query: str, variables: dict[str, Any]) -> Any:
        answer = execute(self.fake, self.fake.users["livereview"],
                         {"query": query, "variables": variables})
        assert "errors" not in answer, answer
        return answer


SEED = Seeds()
PULL = f"/repos/{REPO}/pulls/{SEED.number}"
ISSUE_COMMENTS = SEED.get(f"/repos/{REPO}/issues/{SEED.number}/comments")
REVIEW_COMMENTS = SEED.get(f"{PULL}/comments")
PR = SEED.get(PULL)
THREADS = SEED.graphql(REVIEW_THREADS % "fullDatabaseId", {
    "owner": "acme", "name": "widgets", "number": SEED.number, "after": None})
THREAD_NODE = THREADS["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"][0]["id"]
ROUTES = [
    Route("GET", r"^/user$", SEED.get("/user")),  # 0
    Route("GET", R + "$", SEED.get(f"/repos/{REPO}")),
    Route("GET", R + "/pulls$", SEED.get(f"/repos/{REPO}/pulls")),
    # Repo-wide lists: a PR's comments link to …/pull/<n>.
    Route("GET", R + "/issues/comments$", SEED.get(f"/repos/{REPO}/issues/comments")),
    Route("GET", R + "/pulls/comments$", SEED.get(f"/repos/{REPO}/pulls/comments")),
    Route("GET", R + r"/pulls/\d+$", PR),  # 5
    Route("GET", R + r"/issues/\d+/comments$", ISSUE_COMMENTS),
    Route("GET", R + r"/pulls/\d+/comments$", REVIEW_COMMENTS),
    Route("GET", R + r"/pulls/\d+/reviews$", SEED.get(f"{PULL}/reviews")),
    Route("GET", R + r"/pulls/\d+/commits$", SEED.get(f"{PULL}/commits")),
    Route("GET", R + r"/.+/comments/\d+/reactions$", SEED.get(  # 10
        f"/repos/{REPO}/issues/comments/{SEED.question['id']}/reactions")),
    Route("POST", r"^/graphql$", THREADS, asks="reviewThreads"),
    Route("POST", r"^/graphql$", SEED.graphql(SET_RESOLVED % "resolveReviewThread", {
        "threadId": THREAD_NODE}), asks="resolveReviewThread"),
    Route("POST", r"^/graphql$", SEED.graphql(ADD_REACTION, {
        "subjectId": SEED.review["node_id"], "content": "EYES"}), asks="addReaction"),
    Route("GET", R + r"/issues/comments/\d+$", SEED.get(
        f"/repos/{REPO}/issues/comments/{SEED.question['id']}")),
    Route("GET", R + r"/pulls/\d+/reviews/\d+$", SEED.get(  # 15
        f"{PULL}/reviews/{SEED.review['id']}")),
    Route("GET", R + r"/compare/", SEED.get(
        f"/repos/{REPO}/compare/{PR['base']['sha']}...{PR['head']['sha']}")),
    Route("GET", R + r"/pulls/\d+/files$", SEED.get(f"{PULL}/files")),
    Route("GET", R + r"/contents/js$", SEED.get(f"/repos/{REPO}/contents/js")),
    Route("POST", R + r"/issues/\d+/comments$", SEED.answer(
        "POST", f"/repos/{REPO}/issues/{SEED.number}/comments", {"body": "An answer."}), 201),
    Route("POST", R + r"/pulls/\d+/comments$", SEED.answer("POST", f"{PULL}/comments", {  # 20
        "body": "A remark.", "commit_id": PR["head"]["sha"], "path": "js/app.js", "line": 3,
        "side": "RIGHT"}), 201),
    Route("POST", R + r"/.+/replies$", SEED.answer(
        "POST", f"{PULL}/comments/{SEED.root['id']}/replies", {"body": "An answer."}), 201),
    Route("POST", R + r"/.+/reactions$", SEED.answer(
        "POST", f"/repos/{REPO}/issues/comments/{SEED.question['id']}/reactions",
        {"content": "rocket"}), 201),
    Route("GET", R + r"/contents/js/app\.js$", SEED.get(
        f"/repos/{REPO}/contents/js/app.js", accept="application/vnd.github.raw+json")),
]
REVIEW = SEED.answer("POST", f"{PULL}/reviews", {
    "event": "COMMENT", "body": "Summary.", "commit_id": PR["head"]["sha"],
    "comments": [{"path": "js/app.js", "line": 3, "side": "RIGHT", "body": "A finding."}]})
ROUTES += [
    Route("POST", R + r"/pulls/\d+/reviews$", REVIEW),  # 24
    Route("GET", R + r"/pulls/\d+/reviews/\d+/comments$",
          SEED.get(f"{PULL}/reviews/{REVIEW['id']}/comments")),
]
SEED.fake.request_review(REPO, SEED.number, reviewer="livereview")
ROUTES += [
    Route("POST", r"^/graphql$", SEED.graphql(search_document(1), {  # 26
        "q0": f"repo:{REPO} is:pr is:open updated:>=2000-01-01T00:00:00Z", "a0": None}),
        asks="search(type"),
    Route("GET", r"^/notifications$", SEED.get("/notifications")),
    Route("PATCH", r"^/notifications/threads/\d+$", None, 205),
]
KEY = MRKey("gh", REPO, SEED.number)
REFS = DiffRefs("", "", PR["head"]["sha"])
FINDING = InlineComment("js/app.js", 3, Side.NEW, "A finding.")
ISSUE = f"issuecomment-{SEED.question['id']}"
THREAD = f"discussion_r{SEED.root['id']}"
BODY = f"pullrequestreview-{SEED.review['id']}"
ANCHOR = Anchor("js/app.js", "js/app.js", 3, None, "", "", PR["head"]["sha"])
SINCE = datetime(2000, 1, 1, tzinfo=UTC)
Call = Callable[[GitHub], Awaitable[object]]
CALLS: dict[str, tuple[list[int], Call, type | tuple[type, ...]]] = {
    "whoami": ([0], lambda h: h.whoami(), Identity),
    "repo_exists": ([1], lambda h: h.repo_exists(REPO), bool),
    "list_changed_mrs_first": ([2], lambda h: h.list_changed_mrs((REPO,), None), list),
    "list_changed_mrs_since": ([26], lambda h: h.list_changed_mrs((REPO,), SINCE), list),
    "mention_inbox": ([27], lambda h: h.mention_inbox((REPO,)), dict),
    "clear_mentions": ([28], lambda h: h.clear_mentions(["1"]), type(None)),
    "fetch_mr": ([5, 6, 7, 8, 9, 10, 11],
                 lambda h: h.fetch_mr(REPO, SEED.number, frozenset({ISSUE})), Snapshot),
    "fetch_thread_issue": ([6], lambda h: h.fetch_thread(KEY, ISSUE), Thread),
    "fetch_thread_review": ([7], lambda h: h.fetch_thread(KEY, THREAD), Thread),
    "fetch_thread_review_body": ([6, 15], lambda h: h.fetch_thread(KEY, BODY), Thread),
    "diff_of_an_old_head": ([5, 16], lambda h: h.diff(KEY, "0" * 40), str),
    "diff": ([17], lambda h: h.diff(KEY), str),
    "file_content": ([23], lambda h: h.file_content(REPO, "main", "js/app.js"), str),
    "list_files": ([18], lambda h: h.list_files(REPO, "main", "js"), list),
    "reply_in_a_review_thread": ([21], lambda h: h.reply(KEY, THREAD, "An answer."), Message),
    "reply_to_an_issue_comment": ([14, 19], lambda h: h.reply(KEY, ISSUE, "An answer."),
                                  Message),
    "comment": ([19], lambda h: h.comment(KEY, "A remark."), Message),
    "comment_on_a_line": ([20], lambda h: h.comment(KEY, "A remark.", ANCHOR), Message),
    "react": ([22], lambda h: h.react(KEY, ISSUE, "eyes"), type(None)),
    "react_to_a_review_body": ([15, 13], lambda h: h.react(KEY, BODY, "eyes"), type(None)),
    "resolve": ([11, 12], lambda h: h.resolve(KEY, THREAD), type(None)),
    "diffstat": ([17], lambda h: h.diffstat(KEY), list),
    "diff_files": ([17], lambda h: collect(h.diff_files(KEY)), list),
    "post_review": ([24, 25], lambda h: h.post_review(KEY, REFS, [FINDING], "Summary.",
                                                      Verdict.COMMENTED), PostedReview),
    "request_changes": ([24], lambda h: h.request_changes(KEY, "Why."), Message),
    "reviews_posted": ([0, 8], lambda h: h.reviews_posted(KEY), list),
    "unapprove": ([0, 8], lambda h: h.unapprove(KEY), type(None)),
}


def run(name: str, broken: int = -1, body: bytes = b"") -> str:
    _, call, expected = CALLS[name]
    host = GitHub("gh", client("https://api.github.com", "github", Host(ROUTES, broken, body)),
                  graphql_url="https://api.github.com/graphql")
    return outcome(lambda: call(host), expected)


def test_the_seeds_hold_what_the_properties_aim_at() -> None:
    """A reacted comment, a reply, an App's account: without them, mutations of the fields
    that carry them would be read by no call."""
    question = next(c for c in ISSUE_COMMENTS if c["id"] == SEED.question["id"])
    assert question["reactions"]["total_count"] == len(ROUTES[10].payload) == 1
    assert any("in_reply_to_id" in c for c in REVIEW_COMMENTS)
    assert {(c["user"]["login"], c["user"]["type"]) for c in ISSUE_COMMENTS} == {
        ("alice", "User"), ("ci-helper[bot]", "Bot")}
    assert len(ROUTES[9].payload) == 2 and ROUTES[16].payload["files"]


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
