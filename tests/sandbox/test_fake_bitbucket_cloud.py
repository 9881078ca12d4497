"""The fake Bitbucket Cloud itself, over HTTP as a client talks to api.bitbucket.org — and
cross-checked with a client no one on this project wrote (atlassian-python-api's
`atlassian.bitbucket.Cloud`): it lists pull requests, reads comments, posts a reply and
approves against the fake as it would against Bitbucket.

Payload keys are checked against the payloads in tests/fixtures/bitbucket_cloud, written
from Atlassian's REST reference (their SOURCES.md)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from atlassian.bitbucket.cloud import Cloud

from livereview.app.hosts import connect
from livereview.core.model import MRKey
from livereview.hosts.bitbucket_cloud.adapter import BitbucketCloud
from livereview.metrics import Metrics
from livereview.sandbox.bitbucket_cloud.server import FakeBitbucketCloudServer
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.settings import HostSettings, Secret

SECRET = "bbcloud-api-token-0042"
ACCESS = "bbcloud-access-token-0042"
REPO = "acme/widgets"
OLD = "a = 1\nb = 2\nc = 3\n"
NEW = "a = 1\nb = 20\nc = 3\nd = 4\n"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bitbucket_cloud"


@pytest.fixture
def bb() -> Iterator[tuple[FakeBitbucketCloud, FakeBitbucketCloudServer, int]]:
    fake = FakeBitbucketCloud(token=SECRET)
    fake.add_user("alice", "Alice Example")
    fake.add_access_token(ACCESS, "review-token", kind="repo_access_token",
                          scopes=("pullrequest",), repos=(REPO,))
    number = fake.add_pr(REPO, title="Count d", description="Adds d.", author="alice",
                         files={"x.py": (OLD, NEW)})
    with FakeBitbucketCloudServer(fake) as server:
        yield fake, server, number


def api(server: FakeBitbucketCloudServer, secret: str = SECRET) -> httpx2.Client:
    auth: httpx2.Auth | None = None
    headers = {}
    if secret == SECRET:
        auth = httpx2.BasicAuth("livereview", secret)
    else:
        headers["Authorization"] = f"Bearer {secret}"
    return httpx2.Client(base_url=server.api_url, auth=auth, headers=headers)


def keys(fixture: str) -> Any:
    return json.loads((FIXTURES / fixture).read_text(encoding="utf-8"))


def test_answers_carry_every_documented_key(bb: Any) -> None:
    fake, server, number = bb
    root = fake.add_comment(REPO, number, author="alice", body="why?",
                            inline={"path": "x.py", "to": 2})
    fake.add_comment(REPO, number, author="livereview", body="because", parent=root["id"])
    fake.resolve_comment(REPO, number, root["id"], user="alice")
    pull = f"/repositories/{REPO}/pullrequests/{number}"
    with api(server) as client:
        me = client.get("/user").json()
        pr = client.get(pull).json()
        comments = client.get(f"{pull}/comments").json()
        approval = client.post(f"{pull}/approve").json()
    assert set(keys("user.json")) <= set(me)
    assert set(keys("pullrequest.json")) <= set(pr)
    assert set(keys("pullrequest.json")["source"]) <= set(pr["source"])
    assert set(keys("participant.json")) <= set(approval)
    documented = keys("comments.json")
    assert set(documented) - {"next"} <= set(comments)
    inline, reply = comments["values"]
    assert set(documented["values"][0]) <= set(inline)
    assert set(documented["values"][0]["inline"]) <= set(inline["inline"])
    assert set(documented["values"][1]) <= set(reply)
    assert reply["parent"]["id"] == root["id"] and inline["resolution"]["type"] == \
        "comment_resolution"
    assert len(pr["source"]["commit"]["hash"]) == 12  # as in Atlassian's examples
    for stamp in (pr["created_on"], pr["updated_on"], inline["created_on"]):
        assert STAMP.match(stamp), stamp


def test_pages_link_to_the_next_by_full_url_and_honour_q_and_sort(bb: Any) -> None:
    fake, server, _ = bb
    for i in range(12):
        fake.add_pr(REPO, title=f"PR {i}", author="alice", files={f"f{i}.py": ("", "x\n")})
    with api(server) as client:
        first = client.get(f"/repositories/{REPO}/pullrequests",
                           params={"sort": "-updated_on", "pagelen": 5}).json()
        assert (first["pagelen"], first["size"], first["page"]) == (5, 13, 1)
        assert first["next"].startswith(f"{server.api_url}/repositories/{REPO}/pullrequests?")
        second = client.get(first["next"]).json()
        ids = [p["id"] for p in first["values"] + second["values"]]
        assert ids == sorted(ids, reverse=True)  # updated last, listed first
        cutoff = first["values"][2]["updated_on"]
        recent = client.get(f"/repositories/{REPO}/pullrequests",
                            params={"q": f"updated_on >= {cutoff}", "pagelen": 50}).json()
        assert {p["id"] for p in recent["values"]} == {p["id"] for p in first["values"][:3]}
        bad = client.get(f"/repositories/{REPO}/pullrequests", params={"q": "updated_on ~~"})
        assert bad.status_code == 400 and bad.json()["type"] == "error"


def test_etags_revalidate_and_a_pull_requests_diff_redirects(bb: Any) -> None:
    _, server, number = bb
    pull = f"/repositories/{REPO}/pullrequests/{number}"
    with api(server) as client:
        first = client.get(pull)
        again = client.get(pull, headers={"If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304
        moved = client.get(f"{pull}/diff")
        assert moved.status_code == 302 and "topic=true" in moved.headers["Location"]
        diff = client.get(moved.headers["Location"])
        assert diff.headers["Content-Type"] == "text/plain"
        assert diff.text.startswith("diff --git a/x.py b/x.py\n")
        assert "-b = 2\n+b = 20\n" in diff.text


def test_credentials_say_what_they_are_and_scopes_are_enforced(bb: Any) -> None:
    _, server, number = bb
    pull = f"/repositories/{REPO}/pullrequests/{number}"
    with api(server, ACCESS) as token:
        read = token.get(pull)
        assert read.headers["X-Credential-Type"] == "repo_access_token"
        assert read.headers["X-OAuth-Scopes"] == "pullrequest"
        assert read.headers["X-RateLimit-Limit"] == "1000"  # access tokens only
        refused = token.post(f"{pull}/comments", json={"content": {"raw": "hi"}})
        assert refused.status_code == 403
        assert refused.json()["error"]["detail"] == {"granted": ["pullrequest"],
                                                     "required": ["pullrequest:write"]}
        assert token.get(f"/repositories/{REPO.replace('widgets', 'other')}").status_code == 404
        assert token.get("/user").status_code == 401  # an access token has no account
    with api(server) as account:
        answer = account.get(pull)
        assert answer.headers["X-Credential-Type"] == "api_token"
        assert "X-RateLimit-Limit" not in answer.headers
    with httpx2.Client(base_url=server.api_url, auth=httpx2.BasicAuth("alice", SECRET)) as c:
        assert c.get(pull).status_code == 401  # the secret goes with its own login


def test_the_hourly_quota_answers_429_once_spent(bb: Any) -> None:
    fake, server, _ = bb
    fake.spend_rate_limit(ACCESS, remaining=1)
    with api(server, ACCESS) as token:
        last = token.get(f"/repositories/{REPO}")
        assert last.status_code == 200 and last.headers["X-RateLimit-NearLimit"] == "true"
        refused = token.get(f"/repositories/{REPO}")
        assert refused.status_code == 429
        assert refused.json()["error"]["message"] == \
            "Rate limit for this resource has been exceeded"


def test_comments_reply_resolve_delete_and_outdated_after_a_push(bb: Any) -> None:
    fake, server, number = bb
    root = fake.add_comment(REPO, number, author="alice", body="why 20?",
                            inline={"path": "x.py", "to": 2})
    other = fake.add_comment(REPO, number, author="alice", body="and d?",
                             inline={"path": "x.py", "to": 4})
    pull = f"/repositories/{REPO}/pullrequests/{number}"
    with api(server) as client:
        reply = client.post(f"{pull}/comments", json={"content": {"raw": "Because."},
                                                      "parent": {"id": root["id"]}})
        assert reply.status_code == 201 and reply.json()["parent"]["id"] == root["id"]
        assert client.post(f"{pull}/comments/{root['id']}/resolve").status_code == 200
        assert client.post(f"{pull}/comments/{root['id']}/resolve").status_code == 409
        assert client.delete(f"{pull}/comments/{root['id']}/resolve").status_code == 204
        assert client.delete(f"{pull}/comments/{root['id']}/resolve").status_code == 404
        top = client.post(f"{pull}/comments", json={"content": {"raw": "general"}}).json()
        assert client.post(f"{pull}/comments/{top['id']}/resolve").status_code == 403
        fake.push(REPO, number, files={"x.py": (OLD, "a = 1\nb = 20\nc = 30\nd = 4\n")})
        fake.delete_comment(REPO, number, reply.json()["id"])
        listed = {c["id"]: c for c in client.get(f"{pull}/comments").json()["values"]}
    assert listed[root["id"]]["inline"]["outdated"] is False  # line 2 reads the same
    assert listed[other["id"]]["inline"]["outdated"] is False
    gone = listed[reply.json()["id"]]
    assert gone["deleted"] is True and gone["content"]["raw"] == ""


def test_an_unplaceable_inline_comment_is_refused(bb: Any) -> None:
    _, server, number = bb
    with api(server) as client:
        answer = client.post(f"/repositories/{REPO}/pullrequests/{number}/comments",
                             json={"content": {"raw": "x"}, "inline": {"path": "x.py",
                                                                       "to": 99}})
    assert answer.status_code == 400 and answer.json()["type"] == "error"


def test_atlassian_python_api_lists_reads_replies_and_approves(bb: Any) -> None:
    """An independent client (atlassian-python-api) against the fake."""
    fake, server, number = bb
    root = fake.add_comment(REPO, number, author="alice", body="@livereview why 20?")
    cloud = Cloud(url=server.url, username="livereview", password=SECRET, cloud=True)
    repo = cloud.repositories.get("acme", "widgets")
    [pr] = [p for p in repo.pullrequests.each() if p.id == number]
    assert (pr.title, pr.is_open, pr.author.display_name) == ("Count d", True, "Alice Example")
    assert [c.raw for c in pr.comments()] == ["@livereview why 20?"]
    pr.post("comments", data={"content": {"raw": "Because b doubled."},
                              "parent": {"id": root["id"]}})
    pr.approve()
    replies = [c for c in fake.comments_by("livereview") if c.get("parent")]
    assert [(c["content"]["raw"], c["parent"]["id"]) for c in replies] == [
        ("Because b doubled.", root["id"])]
    assert fake.participant_state(REPO, number, "livereview") == "approved"
    assert "diff --git a/x.py b/x.py" in pr.diff()  # follows the 302 to the repository diff


def test_the_adapter_approves_withdraws_and_requests_changes(bb: Any) -> None:
    """Approve, un-approve and request changes: adapter methods (the Host protocol does not
    list them yet), against the fake."""
    fake, server, number = bb
    host = connect(HostSettings(name="bb", type="bitbucket-cloud", url=server.api_url,
                                token=Secret(SECRET), login="livereview"), Metrics())
    assert isinstance(host, BitbucketCloud)
    key = MRKey("bb", REPO, number)

    async def verdicts() -> list[str | None]:
        seen = []
        try:
            for step in (host.approve, host.unapprove, host.request_changes):
                await step(key)
                seen.append(fake.participant_state(REPO, number, "livereview"))
        finally:
            await host.close()
        return seen

    assert asyncio.run(verdicts()) == ["approved", None, "changes_requested"]
