"""Every Bitbucket Cloud adapter method that reads JSON, fed mutated copies of Bitbucket-
shaped payloads: the result is a model object or a HostError, never any other exception.

The seeds are the fake Bitbucket Cloud's own answers to the requests the adapter makes, on
a pull request with what a real one holds: an inline thread with nested replies (one under
a deleted comment), a resolved thread, an outdated anchor (so the activity log is read),
an access token's bot user among the commenters, a mention in Bitbucket's `@{account_id}`
form, two pushes, and files in a folder.
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
from livereview.hosts.bitbucket_cloud.adapter import BitbucketCloud
from livereview.sandbox.bitbucket_cloud.server import FakeBitbucketCloudServer
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
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
R = r"^/2\.0/repositories/acme/widgets"
START = datetime(2024, 5, 2, 14, 34, 54, tzinfo=UTC)
OLD = {"src/app.py": "a = 1\nb = 2\n", "src/lib/util.py": "pass\n"}
NEW = {"src/app.py": "a = 1\nb = 20\nc = 3\n", "src/lib/util.py": "pass\n"}
SECRET = "bbcloud-fake-api-token"


class Seeds:
    """Builds the pull request on a FakeBitbucketCloud and asks its server (not started: no
    socket) what it answers, as api.bitbucket.org would."""

    def __init__(self) -> None:
        ticks = itertools.count()  # a second per reading: reproducible seeds
        self.fake = FakeBitbucketCloud(token=SECRET,
                                       clock=lambda: START + timedelta(seconds=next(ticks)))
        self.server = FakeBitbucketCloudServer(self.fake)
        fake = self.fake
        alice = fake.add_user("alice")
        fake.add_access_token("ci-secret", "CI Pipeline")
        self.number = fake.add_pr(REPO, title="Count c", description="Adds c.", author="alice",
                                  files={p: (OLD[p], NEW[p]) for p in OLD})
        root = fake.add_comment(REPO, self.number, author="alice", inline={
            "path": "src/app.py", "to": 2},
            body=f"@{{{fake.account('livereview').account_id}}} why 20? cc @{{{alice.account_id}}}")
        reply = fake.add_comment(REPO, self.number, author="CI Pipeline", body="Lint passed.",
                                 parent=root["id"])
        gone = fake.add_comment(REPO, self.number, author="alice", body="oops",
                                parent=reply["id"])
        fake.add_comment(REPO, self.number, author="alice", body="Still?", parent=gone["id"])
        fake.delete_comment(REPO, self.number, gone["id"])
        fake.resolve_comment(REPO, self.number, root["id"], user="alice")
        self.general = fake.add_comment(REPO, self.number, author="alice", body="Thanks!")
        fake.push(REPO, self.number, files={"src/app.py": (OLD["src/app.py"], "b = 20\n")})
        self.root = root

    def answer(self, method: str, path: str, body: dict[str, Any] | None = None,
               query: dict[str, str] | None = None, secret: str = SECRET) -> Any:
        """The body the fake answers; it must succeed, or the seed would be an error."""
        import base64

        auth = ("Basic " + base64.b64encode(f"livereview:{secret}".encode()).decode()
                if secret == SECRET else f"Bearer {secret}")
        status, data, headers = self.server.dispatch(
            method, f"/2.0{path}", query or {}, json.dumps(body).encode() if body else b"",
            {"authorization": auth})
        assert status in (200, 201), (method, path, status, data[:200])
        return json.loads(data) if "json" in headers["Content-Type"] else data.decode()


SEED = Seeds()
PULL = f"/repositories/{REPO}/pullrequests/{SEED.number}"
PR = SEED.answer("GET", PULL)
HEAD = SEED.fake.repos[REPO].prs[SEED.number].head
ROUTES = [
    Route("GET", r"^/2\.0/user$", SEED.answer("GET", "/user")),  # 0
    Route("GET", r"^/2\.0/repositories$", SEED.answer("GET", "/repositories",
                                                      secret="ci-secret")),
    Route("GET", R + "$", SEED.answer("GET", f"/repositories/{REPO}")),
    Route("GET", R + "/pullrequests$", SEED.answer("GET", f"/repositories/{REPO}/pullrequests")),
    Route("GET", R + r"/pullrequests/\d+$", PR),
    Route("GET", R + r"/pullrequests/\d+/comments$",  # 5
          SEED.answer("GET", f"{PULL}/comments", query={"pagelen": "100"})),
    Route("GET", R + r"/pullrequests/\d+/commits$", SEED.answer("GET", f"{PULL}/commits")),
    Route("GET", R + r"/pullrequests/\d+/activity$", SEED.answer("GET", f"{PULL}/activity")),
    Route("GET", R + r"/diff/", SEED.answer("GET", f"/repositories/{REPO}/diff/"
                                            f"{HEAD}..main")),
    Route("GET", R + r"/src/[^/]+/src/app\.py$",
          SEED.answer("GET", f"/repositories/{REPO}/src/{HEAD}/src/app.py")),
    Route("GET", R + r"/src/[^/]+/src/$",  # 10
          SEED.answer("GET", f"/repositories/{REPO}/src/{HEAD}/src/")),
    Route("POST", R + r"/pullrequests/\d+/comments$", SEED.answer(
        "POST", f"{PULL}/comments", {"content": {"raw": "An answer."},
                                     "parent": {"id": SEED.root["id"]}}), 201),
    Route("GET", R + r"/pullrequests/\d+/comments/\d+$",
          SEED.answer("GET", f"{PULL}/comments/{SEED.general['id']}")),
    Route("POST", R + r"/pullrequests/\d+/approve$", SEED.answer("POST", f"{PULL}/approve")),
]
SPEC = f"{PR['source']['commit']['hash']}..{PR['destination']['commit']['hash']}"
ROUTES.append(Route("GET", R + r"/diffstat/", SEED.answer(  # 14
    "GET", f"/repositories/{REPO}/diffstat/{SPEC}", query={"topic": "true"})))
KEY = MRKey("bb", REPO, SEED.number)
REFS = DiffRefs("", "", HEAD)
FINDING = InlineComment("src/app.py", 1, Side.NEW, "A finding.")
THREAD = str(SEED.root["id"])
ANCHOR = Anchor("src/app.py", "src/app.py", 1, None, "", "", HEAD)
SINCE = datetime(2000, 1, 1, tzinfo=UTC)
Call = Callable[[BitbucketCloud], Awaitable[object]]
CALLS: dict[str, tuple[list[int], Call, type | tuple[type, ...], str | None]] = {
    "whoami_account": ([0], lambda h: h.whoami(), Identity, "livereview"),
    "whoami_access_token": ([1], lambda h: h.whoami(), Identity, None),
    "repo_exists": ([2], lambda h: h.repo_exists(REPO), bool, "livereview"),
    "list_changed_mrs_first": ([3], lambda h: h.list_changed_mrs((REPO,), None), list,
                               "livereview"),
    "list_changed_mrs_since": ([3], lambda h: h.list_changed_mrs((REPO,), SINCE), list,
                               "livereview"),
    "fetch_mr": ([4, 5, 6, 7], lambda h: h.fetch_mr(REPO, SEED.number), Snapshot,
                 "livereview"),
    "fetch_thread": ([4, 5, 6, 7], lambda h: h.fetch_thread(KEY, THREAD), Thread,
                     "livereview"),
    "diff": ([4, 8], lambda h: h.diff(KEY), str, "livereview"),
    "diff_of_an_old_head": ([4, 8], lambda h: h.diff(KEY, "0" * 40), str, "livereview"),
    "file_content": ([9], lambda h: h.file_content(REPO, HEAD, "src/app.py"), str,
                     "livereview"),
    "list_files": ([10], lambda h: h.list_files(REPO, HEAD, "src"), list, "livereview"),
    "reply": ([11], lambda h: h.reply(KEY, THREAD, "An answer."), Message, "livereview"),
    "reply_as_an_access_token": ([11], lambda h: h.reply(KEY, THREAD, "An answer."), Message,
                                 None),
    "comment_on_a_line": ([11], lambda h: h.comment(KEY, "A remark.", ANCHOR), Message,
                          "livereview"),
    "reopen": ([12], lambda h: h.resolve(KEY, str(SEED.general["id"]), resolved=False),
               type(None), "livereview"),
    "approve": ([13], lambda h: h.approve(KEY), type(None), "livereview"),
    "diffstat": ([4, 14], lambda h: h.diffstat(KEY), list, "livereview"),
    "diff_files": ([4, 14, 8], lambda h: collect(h.diff_files(KEY)), list, "livereview"),
    "post_review": ([11, 13], lambda h: h.post_review(KEY, REFS, [FINDING], "Summary.",
                                                      Verdict.APPROVED), PostedReview,
                    "livereview"),
    "reviews_posted": ([0, 4, 5, 6, 7], lambda h: h.reviews_posted(KEY), list, "livereview"),
}


def run(name: str, broken: int = -1, body: bytes = b"") -> str:
    _, call, expected, login = CALLS[name]
    http = client("https://api.bitbucket.org/2.0", "bitbucket-cloud",
                  Host(ROUTES, broken, body))
    host = BitbucketCloud("bb", http, login=login, username=None if login else "CI Pipeline")
    return outcome(lambda: call(host), expected)


def test_the_seeds_hold_what_the_properties_aim_at() -> None:
    """Nested replies, a deleted comment, a resolution, an outdated anchor, an app user:
    without them, mutations of the fields that carry them would be read by no call."""
    comments = ROUTES[5].payload["values"]
    assert any(c["deleted"] for c in comments) and any("parent" in c for c in comments)
    assert any("resolution" in c for c in comments)
    assert any(c.get("inline", {}).get("outdated") for c in comments)
    assert {c["user"]["type"] for c in comments} == {"user", "app_user"}
    assert any("update" in e for e in ROUTES[7].payload["values"])
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
