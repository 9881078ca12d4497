"""The fake Bitbucket Data Center answers as the real API does: checked with a client no one
on this project wrote (atlassian-python-api's `atlassian.Bitbucket`), and on the rules the
daemon relies on (paging, versions, 401s, the user header, servers without reactions)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from atlassian import Bitbucket

from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC

TOKEN = "BBDC-sandbox-SECRET-0042"
FILES = {"src/cache.py": ("cache = {}\n", "cache = {}\nlock = None\n")}


@pytest.fixture
def served() -> Iterator[tuple[FakeBitbucketDC, FakeBitbucketDCServer]]:
    fake = FakeBitbucketDC(token=TOKEN)
    fake.add_user("alice", "Alice")
    with FakeBitbucketDCServer(fake) as server:
        yield fake, server


def client(server: FakeBitbucketDCServer, token: str | None = TOKEN) -> httpx2.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.Client(base_url=f"{server.url}/rest/api/1.0", headers=headers)


def test_atlassian_python_api_lists_reads_replies_and_approves(
        served: tuple[FakeBitbucketDC, FakeBitbucketDCServer]) -> None:
    fake, server = served
    pr = fake.add_pr("ACME/widgets", title="Guard the cache", author="bob", files=FILES)
    question = fake.add_comment("ACME/widgets", pr, author="alice", text="@livereview why?",
                                path="src/cache.py", line=2)
    bitbucket = Bitbucket(url=server.url, token=TOKEN)

    [listed] = list(bitbucket.get_pull_requests("ACME", "widgets", state="OPEN"))
    assert (listed["id"], listed["title"], listed["state"]) == (pr, "Guard the cache", "OPEN")
    assert bitbucket.get_pull_request("ACME", "widgets", pr)["fromRef"]["displayId"] == "feature"

    activities = list(bitbucket.get_pull_requests_activities("ACME", "widgets", pr))
    commented = [a for a in activities if a["action"] == "COMMENTED"]
    assert [(a["commentAction"], a["comment"]["text"]) for a in commented] == [
        ("ADDED", "@livereview why?")]
    assert commented[0]["commentAnchor"]["path"] == "src/cache.py"

    reply = bitbucket.add_pull_request_comment("ACME", "widgets", pr, "Because.",
                                               parent_id=question["id"])
    assert reply["author"]["name"] == "livereview"
    root = bitbucket.get_pull_request_comment("ACME", "widgets", pr, question["id"])
    assert [c["text"] for c in root["comments"]] == ["Because."]

    status = bitbucket.change_reviewed_status("ACME", "widgets", pr, "APPROVED", "livereview")
    assert (status["status"], status["approved"]) == ("APPROVED", True)
    assert fake.status_of("ACME/widgets", pr, "livereview") == "APPROVED"


def test_pages_say_where_the_next_starts(
        served: tuple[FakeBitbucketDC, FakeBitbucketDCServer]) -> None:
    fake, server = served
    for i in range(5):
        fake.add_pr("ACME/widgets", title=f"PR {i}", author="bob")
    with client(server) as http:
        first = http.get("/projects/ACME/repos/widgets/pull-requests",
                         params={"limit": 2}).json()
        last = http.get("/projects/ACME/repos/widgets/pull-requests",
                        params={"limit": 2, "start": 4}).json()
    assert (first["size"], first["isLastPage"], first["nextPageStart"]) == (2, False, 2)
    assert [p["title"] for p in first["values"]] == ["PR 4", "PR 3"]  # newest first
    assert (last["size"], last["isLastPage"], "nextPageStart" in last) == (1, True, False)


def test_a_stale_version_and_a_comment_with_replies_are_conflicts(
        served: tuple[FakeBitbucketDC, FakeBitbucketDCServer]) -> None:
    fake, server = served
    pr = fake.add_pr("ACME/widgets", title="T", author="bob")
    root = fake.add_comment("ACME/widgets", pr, author="livereview", text="root")
    fake.add_comment("ACME/widgets", pr, author="alice", text="reply", parent=root["id"])
    path = f"/projects/ACME/repos/widgets/pull-requests/{pr}/comments/{root['id']}"
    with client(server) as http:
        stale = http.put(path, json={"version": 7, "text": "edited"})
        edited = http.put(path, json={"version": 0, "text": "edited"})
        delete = http.delete(path, params={"version": 1})
    assert stale.status_code == 409
    assert stale.json()["errors"][0]["exceptionName"].endswith("CommentOutOfDateException")
    assert (edited.status_code, edited.json()["version"]) == (200, 1)
    assert delete.status_code == 409


def test_tokens_the_user_header_and_permissions(
        served: tuple[FakeBitbucketDC, FakeBitbucketDCServer]) -> None:
    fake, server = served
    fake.add_repo("ACME/widgets")
    with client(server, None) as anonymous, client(server, "wrong") as wrong, \
            client(server) as bot:
        public = anonymous.get("/application-properties")
        refused = wrong.get("/projects/ACME/repos/widgets")
        mine = bot.get("/application-properties")
        fake.forbid("livereview", "ACME/widgets")
        forbidden = bot.get("/projects/ACME/repos/widgets")
    assert public.status_code == 200 and "X-AUSERNAME" not in public.headers
    assert mine.headers["X-AUSERNAME"] == "livereview" and mine.headers["X-AUSERID"]
    assert refused.status_code == 401
    assert "Authentication" in refused.json()["errors"][0]["exceptionName"]
    assert forbidden.status_code == 401  # Bitbucket's "forbidden" is a 401 …
    assert forbidden.json()["errors"][0]["exceptionName"].endswith(".AuthorisationException")


@pytest.mark.parametrize("reactions", [True, False])
def test_reactions_exist_only_on_servers_that_have_them(reactions: bool) -> None:
    fake = FakeBitbucketDC(token=TOKEN, reactions=reactions)
    pr = fake.add_pr("ACME/widgets", title="T", author="bob")
    comment = fake.add_comment("ACME/widgets", pr, author="alice", text="hi")
    path = (f"/rest/comment-likes/latest/projects/ACME/repos/widgets/pull-requests/{pr}"
            f"/comments/{comment['id']}/reactions/thinking_face")
    with FakeBitbucketDCServer(fake) as server, httpx2.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}) as http:
        version = http.get("/rest/api/1.0/application-properties").json()["version"]
        put = [http.put(path).status_code for _ in range(2)]
        read: Any = http.get(f"/rest/api/1.0/projects/ACME/repos/widgets/pull-requests/{pr}"
                             f"/comments/{comment['id']}").json()
    if reactions:
        assert put == [200, 200] and version.startswith("8.")
        [entry] = read["properties"]["reactions"]
        assert entry["emoticon"]["shortcut"] == "thinking_face"
        assert [u["name"] for u in entry["users"]] == ["livereview"]  # once, not twice
    else:
        assert put == [404, 404] and version.startswith("6.")
        assert "reactions" not in read["properties"]
