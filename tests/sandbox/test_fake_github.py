"""The fake GitHub itself, exercised over HTTP the way a client talks to api.github.com.

Payload keys are checked against the `required` lists of GitHub's REST schemas
(github/rest-api-description: simple-user, pull-request, issue-comment,
pull-request-review-comment, pull-request-review, commit, diff-entry, reaction).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import pytest

from livereview.sandbox.github.server import FakeGitHubServer
from livereview.sandbox.github.state import FakeGitHub

TOKEN = "ghp_fake-token"
REPO = "acme/widgets"
OLD = "a = 1\nb = 2\nc = 3\n"
NEW = "a = 1\nb = 20\nc = 3\nd = 4\n"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
REQUIRED = {
    "user": {"login", "id", "node_id", "avatar_url", "gravatar_id", "url", "html_url",
             "followers_url", "following_url", "gists_url", "starred_url",
             "subscriptions_url", "organizations_url", "repos_url", "events_url",
             "received_events_url", "type", "site_admin"},
    "pull": {"url", "id", "node_id", "html_url", "diff_url", "patch_url", "issue_url",
             "commits_url", "review_comments_url", "review_comment_url", "comments_url",
             "statuses_url", "number", "state", "locked", "title", "user", "body", "labels",
             "milestone", "created_at", "updated_at", "closed_at", "merged_at",
             "merge_commit_sha", "assignee", "head", "base", "_links", "author_association",
             "auto_merge", "merged", "mergeable", "rebaseable", "mergeable_state", "merged_by",
             "comments", "review_comments", "maintainer_can_modify", "commits", "additions",
             "deletions", "changed_files"},
    "issue_comment": {"id", "node_id", "html_url", "issue_url", "url", "user", "created_at",
                      "updated_at", "author_association", "body"},
    "review_comment": {"url", "id", "node_id", "pull_request_review_id", "diff_hunk", "path",
                       "commit_id", "original_commit_id", "user", "body", "created_at",
                       "updated_at", "html_url", "pull_request_url", "author_association",
                       "_links", "line", "original_line", "side"},
    "review": {"id", "node_id", "user", "body", "state", "commit_id", "html_url",
               "pull_request_url", "_links", "author_association"},
    "commit": {"url", "sha", "node_id", "html_url", "comments_url", "commit", "author",
               "committer", "parents"},
    "file": {"sha", "filename", "status", "additions", "deletions", "changes", "blob_url",
             "raw_url", "contents_url"},
    "reaction": {"id", "node_id", "user", "content", "created_at"},
}


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2024, 5, 2, 14, 34, 54, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fake(clock: Clock) -> FakeGitHub:
    fake = FakeGitHub(token=TOKEN, clock=clock)
    fake.add_user("alice")
    fake.add_pr(REPO, title="Change b", body="Why not.", author="alice",
                files={"app.py": (OLD, NEW)})
    return fake


@pytest.fixture
def server(fake: FakeGitHub) -> Iterator[FakeGitHubServer]:
    with FakeGitHubServer(fake) as server:
        yield server


@pytest.fixture
def api(server: FakeGitHubServer) -> Iterator[httpx2.Client]:
    with httpx2.Client(base_url=server.url, headers={
            "Authorization": f"Bearer {TOKEN}", "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28"}) as client:
        yield client


def has(kind: str, payload: dict[str, Any]) -> None:
    missing = REQUIRED[kind] - set(payload)
    assert not missing, f"{kind} lacks {sorted(missing)}"


def test_auth_schemes_and_errors(server: FakeGitHubServer, api: httpx2.Client) -> None:
    assert api.get("/user").json()["login"] == "livereview"
    legacy = httpx2.get(server.url + "/user", headers={"Authorization": f"token {TOKEN}"})
    assert legacy.json()["login"] == "livereview"
    bad = httpx2.get(server.url + "/user", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401
    assert bad.json() == {"message": "Bad credentials",
                          "documentation_url": "https://docs.github.com/rest", "status": "401"}
    assert httpx2.get(server.url + "/user").json()["message"] == "Requires authentication"
    missing = api.get("/repos/acme/nope")
    assert missing.status_code == 404 and missing.json()["message"] == "Not Found"
    assert api.get("/user", headers={"X-GitHub-Api-Version": "1999-01-01"}).status_code == 400


def test_payload_shapes(fake: FakeGitHub, api: httpx2.Client) -> None:
    user = api.get("/user").json()
    has("user", user)
    assert {"name", "created_at", "public_repos"} <= set(user)
    pull = api.get(f"/repos/{REPO}/pulls/1").json()
    has("pull", pull)
    has("user", pull["user"])
    assert (pull["state"], pull["head"]["ref"], pull["base"]["ref"]) == ("open", "feature",
                                                                        "main")
    assert STAMP.match(pull["created_at"]) and pull["body"] == "Why not."
    listed = api.get(f"/repos/{REPO}/pulls").json()[0]
    assert "merged" not in listed and listed["number"] == 1  # the list has the simple form
    has("commit", api.get(f"/repos/{REPO}/pulls/1/commits").json()[0])
    [changed] = api.get(f"/repos/{REPO}/pulls/1/files").json()
    has("file", changed)
    assert changed["patch"].startswith("@@ -1,3 +1,4 @@")
    comment = api.post(f"/repos/{REPO}/issues/1/comments", json={"body": "hi"})
    assert comment.status_code == 201
    has("issue_comment", comment.json())
    assert comment.json()["html_url"].endswith(f"/pull/1#issuecomment-{comment.json()['id']}")
    review_comment = fake.add_review_comment(REPO, 1, author="alice", body="b?",
                                             path="app.py", line=2)
    has("review_comment", review_comment)
    assert "in_reply_to_id" not in review_comment  # absent on a thread's first comment
    assert (review_comment["line"], review_comment["side"]) == (2, "RIGHT")
    assert review_comment["diff_hunk"] == "@@ -1,3 +1,4 @@\n a = 1\n-b = 2\n+b = 20"
    assert review_comment["position"] == 3
    has("review", api.get(f"/repos/{REPO}/pulls/1/reviews").json()[0])


def test_replies_go_to_the_first_comment_only(fake: FakeGitHub, api: httpx2.Client) -> None:
    root = fake.add_review_comment(REPO, 1, author="alice", body="b?", path="app.py", line=2)
    reply = api.post(f"/repos/{REPO}/pulls/1/comments/{root['id']}/replies",
                     json={"body": "because"})
    assert reply.status_code == 201
    assert reply.json()["in_reply_to_id"] == root["id"]
    assert (reply.json()["path"], reply.json()["line"]) == ("app.py", 2)
    nested = api.post(f"/repos/{REPO}/pulls/1/comments/{reply.json()['id']}/replies",
                      json={"body": "to a reply"})
    assert nested.status_code == 404  # "Replies to replies are not supported"
    off_diff = api.post(f"/repos/{REPO}/pulls/1/comments", json={
        "body": "x", "commit_id": fake.find_issue(REPO, 1).head_sha, "path": "app.py",
        "line": 99, "side": "RIGHT"})
    assert off_diff.status_code == 422
    assert off_diff.json()["errors"][0]["field"] == "pull_request_review_thread.line"


def test_reactions_created_then_existing(fake: FakeGitHub, api: httpx2.Client) -> None:
    comment = fake.add_issue_comment(REPO, 1, author="alice", body="hi")
    url = f"/repos/{REPO}/issues/comments/{comment['id']}/reactions"
    first = api.post(url, json={"content": "eyes"})
    again = api.post(url, json={"content": "eyes"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    has("reaction", first.json())
    assert api.post(url, json={"content": "thumbsup"}).status_code == 422
    rollup = api.get(f"/repos/{REPO}/issues/comments/{comment['id']}").json()["reactions"]
    assert (rollup["eyes"], rollup["total_count"]) == (1, 1)


def test_etag_revalidation_costs_no_rate_limit(api: httpx2.Client) -> None:
    first = api.get(f"/repos/{REPO}/pulls", params={"state": "open"})
    used = int(first.headers["X-RateLimit-Used"])
    again = api.get(f"/repos/{REPO}/pulls", params={"state": "open"},
                    headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.content == b""
    assert int(again.headers["X-RateLimit-Used"]) == used
    assert again.headers["X-RateLimit-Resource"] == "core"
    assert int(api.get("/user").headers["X-RateLimit-Used"]) == used + 1


def test_link_pagination_and_repository_id_urls(fake: FakeGitHub, api: httpx2.Client) -> None:
    for i in range(45):
        fake.add_issue_comment(REPO, 1, author="alice", body=f"c{i}")
    first = api.get(f"/repos/{REPO}/issues/1/comments")
    assert len(first.json()) == 30  # GitHub's default per_page
    assert set(first.links) == {"next", "last"}
    second = api.get(first.links["next"]["url"])  # /repositories/{id}/… as GitHub links
    assert [c["body"] for c in second.json()] == [f"c{i}" for i in range(30, 45)]
    assert set(second.links) == {"prev", "first"}
    big = api.get(f"/repos/{REPO}/issues/1/comments", params={"per_page": 500})
    assert len(big.json()) == 45


def test_repo_wide_lists_since_and_what_bumps_a_pull(fake: FakeGitHub, api: httpx2.Client,
                                                      clock: Clock) -> None:
    issue = fake.add_issue(REPO, title="Not a PR", author="alice")
    old = fake.add_issue_comment(REPO, 1, author="alice", body="old")
    clock.tick(60)
    since = clock.now.strftime("%Y-%m-%dT%H:%M:%SZ")
    on_issue = fake.add_issue_comment(REPO, issue, author="alice", body="on an issue")
    assert "/issues/" in on_issue["html_url"]
    listed = api.get(f"/repos/{REPO}/issues/comments", params={"since": since}).json()
    assert [c["body"] for c in listed] == ["on an issue"]
    assert [p["number"] for p in api.get(f"/repos/{REPO}/pulls").json()] == [1]
    before = api.get(f"/repos/{REPO}/pulls/1").json()["updated_at"]
    clock.tick(60)
    fake.edit_comment(REPO, "issue", old["id"], "edited")
    assert api.get(f"/repos/{REPO}/pulls/1").json()["updated_at"] == before  # not bumped
    edited = api.get(f"/repos/{REPO}/issues/comments",
                     params={"since": since, "sort": "updated", "direction": "desc"}).json()
    assert [c["body"] for c in edited] == ["edited", "on an issue"]
    fake.add_review_comment(REPO, 1, author="alice", body="b?", path="app.py", line=2)
    assert api.get(f"/repos/{REPO}/pulls/1").json()["updated_at"] > before  # bumped
    assert len(api.get(f"/repos/{REPO}/pulls/comments", params={"since": since}).json()) == 1


def test_a_push_outdates_a_comment_whose_hunk_changed(fake: FakeGitHub,
                                                      api: httpx2.Client) -> None:
    fake.push(REPO, 1, files={"other.py": ("", "x = 1\n")})
    kept = fake.add_review_comment(REPO, 1, author="alice", body="b?", path="app.py", line=2)
    first_head = fake.find_issue(REPO, 1).head_sha
    fake.push(REPO, 1, files={"other.py": ("", "x = 2\n")})  # app.py untouched: carried
    carried = api.get(f"/repos/{REPO}/pulls/comments/{kept['id']}").json()
    assert carried["line"] == 2 and carried["commit_id"] != first_head
    assert carried["original_commit_id"] == first_head
    fake.push(REPO, 1, files={"app.py": (OLD, "a = 1\nb = 200\nc = 3\n")}, force=True)
    outdated = api.get(f"/repos/{REPO}/pulls/comments/{kept['id']}").json()
    assert (outdated["line"], outdated["position"], outdated["original_line"]) == (None, None, 2)
    compare = api.get(f"/repos/{REPO}/compare/main...{first_head}").json()
    assert {f["filename"] for f in compare["files"]} == {"app.py", "other.py"}
    assert api.get(f"/repos/{REPO}/contents/app.py", params={"ref": first_head}, headers={
        "Accept": "application/vnd.github.raw+json"}).text == NEW


def test_graphql_threads_resolve_and_react(fake: FakeGitHub, server: FakeGitHubServer) -> None:
    root = fake.add_review_comment(REPO, 1, author="alice", body="b?", path="app.py", line=2)
    review = fake.add_review(REPO, 1, author="alice", body="Looks odd", state="COMMENTED")
    headers = {"Authorization": f"bearer {TOKEN}"}

    def gql(query: str, **variables: Any) -> Any:
        return httpx2.post(server.url + "/api/graphql", headers=headers,
                           json={"query": query, "variables": variables}).json()

    threads = gql("query($o: String!, $n: String!) { repository(owner: $o, name: $n) { "
                  "pullRequest(number: 1) { reviewThreads(first: 10) { totalCount nodes { "
                  "id isResolved comments(first: 1) { nodes { databaseId } } } } } } }",
                  o="acme", n="widgets")["data"]["repository"]["pullRequest"]["reviewThreads"]
    [thread] = threads["nodes"]
    assert thread["comments"]["nodes"] == [{"databaseId": root["id"]}]
    done = gql("mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) { "
               "thread { isResolved } } }", id=thread["id"])
    assert done == {"data": {"resolveReviewThread": {"thread": {"isResolved": True}}}}
    assert fake.thread_of_comment(REPO, root["id"]).resolved
    gql("mutation($s: ID!) { addReaction(input: {subjectId: $s, content: EYES}) { "
        "reaction { content } } }", s=review["node_id"])
    assert fake.reactions_on(REPO, "review-body", review["id"]) == [("eyes", "livereview")]
    missing = gql("mutation { resolveReviewThread(input: {threadId: \"nope\"}) { "
                  "thread { id } } }")
    assert missing["data"] == {"resolveReviewThread": None}
    assert missing["errors"][0]["type"] == "NOT_FOUND"
    assert "doesn't exist" in gql("{ viewer { login shoeSize } }")["errors"][0]["message"]
    unbounded = gql("{ repository(owner: \"acme\", name: \"widgets\") { pullRequest(number: 1)"
                    " { reviewThreads { totalCount } } } }")
    assert unbounded["errors"][0]["type"] == "MISSING_PAGINATION_BOUNDARIES"


def test_rate_limits_primary_and_secondary(fake: FakeGitHub, api: httpx2.Client) -> None:
    fake.secondary_rate_limit("POST", r"/comments$", retry_after=7)
    refused = api.post(f"/repos/{REPO}/issues/1/comments", json={"body": "x"})
    assert (refused.status_code, refused.headers["Retry-After"]) == (403, "7")
    assert "secondary rate limit" in refused.json()["message"]
    assert fake.find_issue(REPO, 1).comments == []
    fake.spend_rate_limit("core", remaining=0)
    spent = api.get("/user")
    assert spent.status_code == 403 and spent.headers["X-RateLimit-Remaining"] == "0"
    assert int(spent.headers["X-RateLimit-Reset"]) > 0


def test_a_dropped_response_after_the_work_is_done(fake: FakeGitHub,
                                                  api: httpx2.Client) -> None:
    fake.inject_fault("POST", r"/issues/1/comments$", status=0, after_handling=True)
    with pytest.raises(httpx2.TransportError):
        api.post(f"/repos/{REPO}/issues/1/comments", json={"body": "lost answer"})
    assert [c["body"] for c in fake.comments_by("livereview")] == ["lost answer"]


def test_enterprise_server_paths(server: FakeGitHubServer) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx2.get(server.enterprise_url + "/user", headers=headers).json()["login"] == (
        "livereview")
    page = httpx2.get(server.enterprise_url + f"/repos/{REPO}/pulls",
                      params={"per_page": 1, "state": "all"}, headers=headers)
    assert page.status_code == 200 and "Link" not in page.headers  # one PR: one page
