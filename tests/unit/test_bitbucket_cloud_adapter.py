"""The Bitbucket Cloud adapter over httpx2.MockTransport, answering with the payloads in
tests/fixtures/bitbucket_cloud (written to Atlassian's documented shapes): what it reads,
what it sends, and what it refuses to follow."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
from structlog.testing import capture_logs

from livereview.core.model import MRKey
from livereview.hosts.base import BadResponse, Forbidden
from livereview.hosts.bitbucket_cloud.adapter import BitbucketCloud
from livereview.hosts.bitbucket_cloud.budget import Budget
from livereview.hosts.http import HttpClient, RetryPolicy
from livereview.metrics import Metrics

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "bitbucket_cloud"
BASE = "https://api.bitbucket.org/2.0"
PR = "/2.0/repositories/acme/widgets/pullrequests/42"
KEY = MRKey("bb", "acme/widgets", 42)


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


Answer = dict[str, Any] | list[Any] | str | httpx2.Response


class Bitbucket:
    """Answers from a table of (method, path regex) → payload; keeps every request."""

    def __init__(self, table: dict[tuple[str, str], Answer]) -> None:
        self.table = table
        self.seen: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(request)
        path = request.url.path
        for (method, pattern), answer in self.table.items():
            if method == request.method and re.fullmatch(pattern, path):
                if isinstance(answer, httpx2.Response):
                    return answer
                if isinstance(answer, str):
                    return httpx2.Response(200, text=answer)
                return httpx2.Response(200, json=answer, headers={
                    "X-Credential-Type": "api_token", "X-OAuth-Scopes":
                    "read:pullrequest:bitbucket, write:pullrequest:bitbucket, "
                    "read:repository:bitbucket, read:user:bitbucket"})
        return httpx2.Response(404, json={"type": "error", "error": {"message": "Not found"}})

    def queries(self, pattern: str) -> list[dict[str, str]]:
        return [dict(r.url.params) for r in self.seen if re.fullmatch(pattern, r.url.path)]


def adapter(host: Bitbucket, *, login: str | None = "livereview-bot",
            username: str | None = None) -> BitbucketCloud:
    http = HttpClient(base_url=BASE, headers={}, host_type="bitbucket-cloud",
                      metrics=Metrics(), retry=RetryPolicy(attempts=1),
                      transport=httpx2.MockTransport(host))
    return BitbucketCloud("bb", http, login=login, username=username)


def conversation(**changes: Answer) -> Bitbucket:
    table: dict[tuple[str, str], Answer] = {
        ("GET", "/2.0/user"): fixture("user.json"),
        ("GET", PR): fixture("pullrequest.json"),
        ("GET", PR + "/comments"): fixture("comments.json"),
        ("GET", PR + "/commits"): fixture("commits.json"),
        ("GET", PR + "/activity"): fixture("activity.json"),
    }
    table.update({("GET", path): answer for path, answer in changes.items()})
    return Bitbucket(table)


def run(call: Callable[[], Any]) -> Any:
    return asyncio.run(call())


def test_a_pull_request_and_its_reply_trees_read_into_the_model() -> None:
    host = adapter(conversation())

    async def read() -> Any:
        await host.whoami()
        return await host.fetch_mr("acme/widgets", 42)

    snap = run(read)
    assert snap.mr.head_sha == "9c1e5f0a7b3d8e2f4a6c1b0d9e8f7a6b5c4d3e2f"  # 12 chars → full
    assert snap.mr.description == "Concurrent readers saw torn writes. @alice please look."
    assert snap.commits[0].sha == snap.mr.head_sha
    inline, app, general = snap.threads
    # A reply to a reply of a deleted reply is still in the thread, in the order written.
    assert [m.id for m in inline.messages] == ["481516001", "481516002", "481516004"]
    assert all(m.thread_id == "481516001" for m in inline.messages)
    assert inline.messages[0].body == "@livereview why hold the lock for a read?"
    assert inline.resolvable and inline.resolved
    # Outdated: anchored at the head it was written on (the activity log says which).
    assert inline.anchor is not None
    assert (inline.anchor.new_path, inline.anchor.new_line) == ("src/cache.py", 9)
    assert inline.anchor.head_sha == "5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b"
    # An access token's bot user named like our bot, which is an account here: automated,
    # and told apart by its id.
    assert app.messages[0].author.bot
    assert app.messages[0].author.username == "livereview~9a1f3c7e"
    assert not general.resolvable and general.anchor is None
    assert not general.messages[0].author.bot


def test_an_unchanged_hot_pull_request_costs_one_request() -> None:
    bitbucket = conversation()
    host = adapter(bitbucket)

    async def twice() -> None:
        await host.fetch_mr("acme/widgets", 42)
        bitbucket.seen.clear()
        await host.fetch_mr("acme/widgets", 42)

    run(twice)
    assert [r.url.path for r in bitbucket.seen] == [PR]


def test_anyone_else_with_the_bots_nickname_is_not_the_bot() -> None:
    """Bitbucket nicknames are not unique: a person may take the bot's."""
    comments = copy.deepcopy(fixture("comments.json"))
    impostor = comments["values"][5]["user"]
    impostor["nickname"] = "LiveReview"
    host = adapter(conversation(**{PR + "/comments": comments}))

    async def read() -> Any:
        await host.whoami()
        return await host.fetch_mr("acme/widgets", 42)

    author = run(read).threads[2].messages[0].author
    assert author.username.startswith("LiveReview~") and author.id == impostor["uuid"]


def test_next_links_are_followed_on_our_host_and_path_only() -> None:
    first = {"values": [], "next": "https://evil.example/steal?page=2&pagelen=100"}
    bitbucket = conversation(**{PR + "/comments": first})
    bitbucket.table[("GET", "/steal")] = {"values": []}
    host = adapter(bitbucket)
    with pytest.raises(BadResponse, match="already read"):  # page 2 says page 2 again
        run(lambda: host.fetch_mr("acme/widgets", 42))
    assert {r.url.host for r in bitbucket.seen} == {"api.bitbucket.org"}
    assert {r.url.path for r in bitbucket.seen} == {PR, PR + "/comments"}
    assert bitbucket.queries(PR + "/comments")[1]["page"] == "2"


def test_listing_asks_for_recent_open_prs_newest_first_and_stops_at_the_watermark() -> None:
    prs = {"values": [{"id": 7, "updated_on": "2024-05-02T14:41:00.000000+00:00"},
                      {"id": 5, "updated_on": "2024-05-02T14:20:00.000000+00:00"}],
           "next": f"{BASE}/repositories/acme/widgets/pullrequests?page=2"}
    bitbucket = Bitbucket({("GET", "/2.0/repositories/acme/widgets/pullrequests"): prs})
    host = adapter(bitbucket)
    since = datetime(2024, 5, 2, 14, 37, 12, tzinfo=UTC)
    changed = run(lambda: host.list_changed_mrs(("acme/widgets",), since))
    assert [mr.iid for mr in changed] == [7]
    [query] = bitbucket.queries(r"/2\.0/repositories/acme/widgets/pullrequests")  # no page 2
    # Rounded down to 10 minutes: the URL stays the same for a while (ETag revalidation).
    assert query == {"state": "OPEN", "sort": "-updated_on", "pagelen": "50",
                     "q": "updated_on >= 2024-05-02T14:30:00+00:00"}


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_repo_left_out_for_lack_of_quota_is_listed_later_from_where_it_stopped() -> None:
    listing: dict[str, list[object]] = {"values": []}
    bitbucket = Bitbucket({("GET", r"/2\.0/repositories/acme/\w+/pullrequests"): listing})
    host = adapter(bitbucket)
    ticks = Ticks()
    host.budget = Budget(clock=ticks)
    repos = ("acme/a", "acme/b", "acme/c")
    t0 = datetime(2024, 5, 2, 12, 0, tzinfo=UTC)
    run(lambda: host.list_changed_mrs(repos, t0))  # first sight: every repo
    host.budget._tokens = 10.0  # the quota is nearly spent: no spare for listing
    bitbucket.seen.clear()
    t1 = datetime(2024, 5, 2, 12, 30, tzinfo=UTC)
    run(lambda: host.list_changed_mrs(repos, t1))
    assert [r.url.path for r in bitbucket.seen] == ["/2.0/repositories/acme/a/pullrequests"]
    ticks.now = 3600.0  # an hour later: the bucket is full again
    bitbucket.seen.clear()
    t2 = datetime(2024, 5, 2, 13, 30, tzinfo=UTC)
    run(lambda: host.list_changed_mrs(repos, t2))
    asked = {r.url.path.split("/")[4]: r.url.params["q"] for r in bitbucket.seen}
    assert asked == {"a": "updated_on >= 2024-05-02T13:30:00+00:00",
                     "b": "updated_on >= 2024-05-02T12:30:00+00:00",  # owed since t1
                     "c": "updated_on >= 2024-05-02T12:30:00+00:00"}


def test_an_access_token_is_its_own_bot_user_learned_from_what_it_posts() -> None:
    app_user = fixture("app_user.json")
    posted = {**fixture("comments.json")["values"][5], "id": 9, "user": app_user}
    bitbucket = Bitbucket({("GET", "/2.0/repositories"): {"values": []},
                           ("POST", PR + "/comments"): httpx2.Response(201, json=posted)})
    host = adapter(bitbucket, login=None, username="livereview")
    me = run(host.whoami)
    assert (me.username, me.user_id) == ("livereview", "access-token:livereview")
    message = run(lambda: host.reply(KEY, "481516001", "An answer."))
    assert json.loads(bitbucket.seen[-1].content) == {"content": {"raw": "An answer."},
                                                      "parent": {"id": 481516001}}
    assert message.thread_id == "481516001" and message.author.id == app_user["uuid"]
    assert host._me is not None and host._me.uuid == app_user["uuid"]


def test_a_token_named_otherwise_than_configured_is_said_loudly() -> None:
    posted = {**fixture("comments.json")["values"][5], "user": fixture("app_user.json")}
    bitbucket = Bitbucket({("POST", PR + "/comments"): httpx2.Response(201, json=posted)})
    host = adapter(bitbucket, login=None, username="review-bot")
    with capture_logs() as logs:
        run(lambda: host.comment(KEY, "A summary."))
    [event] = [e for e in logs if e["event"] == "bitbucket_bot_name_mismatch"]
    assert (event["posts_as"], event["configured"]) == ("livereview", "review-bot")


def test_inline_comments_name_the_new_or_the_old_line() -> None:
    from livereview.core.model import Anchor

    posted = fixture("comments.json")["values"][5]
    bitbucket = Bitbucket({("POST", PR + "/comments"): httpx2.Response(201, json=posted)})
    host = adapter(bitbucket)
    for new, old in ((9, None), (None, 4)):
        anchor = Anchor("src/cache.py", "src/cache.py", new, old, "", "", "abc")
        run(lambda a=anchor: host.comment(KEY, "Here.", a))  # type: ignore[misc]
    sent = [json.loads(r.content)["inline"] for r in bitbucket.seen]
    assert sent == [{"path": "src/cache.py", "to": 9}, {"path": "src/cache.py", "from": 4}]


def test_resolving_twice_and_reopening_an_open_thread_are_success() -> None:
    comment = fixture("comments.json")["values"][5]
    bitbucket = Bitbucket({
        ("POST", PR + r"/comments/\d+/resolve"): httpx2.Response(409, json={
            "type": "error", "error": {"message": "Comment already resolved"}}),
        ("DELETE", PR + r"/comments/\d+/resolve"): httpx2.Response(404, json={
            "type": "error", "error": {"message": "Comment is not resolved"}}),
        ("GET", PR + r"/comments/\d+"): comment})
    host = adapter(bitbucket)
    run(lambda: host.resolve(KEY, "481516006"))
    run(lambda: host.resolve(KEY, "481516006", resolved=False))
    assert [r.method for r in bitbucket.seen] == ["POST", "DELETE", "GET"]


def test_no_reactions_says_so() -> None:
    host = adapter(Bitbucket({}))
    assert not host.capabilities.reactions
    with pytest.raises(Forbidden, match="no reactions"):
        run(lambda: host.react(KEY, "1", "eyes"))


def test_the_diff_is_the_three_dot_diff_of_the_head_asked() -> None:
    bitbucket = conversation()
    bitbucket.table[("GET", r"/2\.0/repositories/acme/widgets/diff/.+")] = "diff --git a/x b/x\n"
    host = adapter(bitbucket)
    assert run(lambda: host.diff(KEY, "5a4b3c2d1e0f")) == "diff --git a/x b/x\n"
    request = bitbucket.seen[-1]
    assert request.url.path == "/2.0/repositories/acme/widgets/diff/5a4b3c2d1e0f..2b8d4a6c0e1f"
    assert request.url.params["topic"] == "true"


def test_list_files_lists_a_directorys_files() -> None:
    bitbucket = Bitbucket({("GET", r"/2\.0/repositories/acme/widgets/src/main/src/"):
                           fixture("src_directory.json")})
    assert run(lambda: adapter(bitbucket).list_files("acme/widgets", "main", "src")) == [
        "src/cache.py"]


def test_the_diff_of_a_head_gone_after_a_force_push_is_the_current_one() -> None:
    bitbucket = conversation()
    diffs = r"/2\.0/repositories/acme/widgets/diff/"
    bitbucket.table[("GET", diffs + r"dead0000beef\.\..+")] = httpx2.Response(
        404, json={"type": "error", "error": {"message": "Commit not found"}})
    bitbucket.table[("GET", diffs + r"9c1e5f0a7b3d\.\..+")] = "diff --git a/now b/now\n"
    host = adapter(bitbucket)
    assert run(lambda: host.diff(KEY, "dead0000beef")) == "diff --git a/now b/now\n"
