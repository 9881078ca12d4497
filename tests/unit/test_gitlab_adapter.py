"""The GitLab adapter against the fake GitLab when GitLab misbehaves: broken payloads, a
listing it refuses or garbles, and the accounts it marks as automated."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from structlog.testing import capture_logs

from livereview.core.model import InlineComment, MRKey, Side, Verdict
from livereview.core.sanitize import WORD_JOINER
from livereview.hosts.base import BadResponse, Forbidden
from livereview.hosts.gitlab.adapter import REPROBE_SECONDS, GitLab
from livereview.hosts.http import HttpClient, RetryPolicy
from livereview.metrics import Metrics
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from tests.quick_actions_oracle import commands as gitlab_commands

TOKEN = "glpat-adapter-test-token"
REPO = "acme/widgets"
LISTING = r"^/api/v4/merge_requests$"
HTML = "<html><body><h1>502 Bad Gateway</h1></body></html>"


@dataclass
class Setup:
    fake: FakeGitLab
    server: FakeGitLabServer
    now: list[float]

    def host(self, list_strategy: str = "auto") -> GitLab:
        http = HttpClient(base_url=self.server.url, headers={"PRIVATE-TOKEN": TOKEN},
                          host_type="gitlab", metrics=Metrics(),
                          retry=RetryPolicy(attempts=1))
        return GitLab("gl", http, list_strategy=list_strategy, clock=lambda: self.now[0])

    def listings(self) -> list[str]:
        return [path for _, path, _ in self.fake.requests if path.endswith("/merge_requests")]


@pytest.fixture
async def setup() -> AsyncIterator[Setup]:
    fake = FakeGitLab(token=TOKEN, rate_limit_per_minute=None)
    fake.add_user("alice", "Alice")
    fake.add_project(REPO)
    fake.add_mr(REPO, title="Guard the cache", author="alice", files={"a.py": ("a\n", "b\n")})
    with FakeGitLabServer(fake) as server:
        yield Setup(fake, server, [1000.0])


def drop_created_at(discussions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    del discussions[0]["notes"][1]["created_at"]
    return discussions


async def test_a_note_without_created_at_is_a_bad_response_naming_the_field(
        setup: Setup) -> None:
    """It used to end `livereview once` in a raw KeyError."""
    setup.fake.add_note(REPO, 1, author="alice", body="first")
    thread = setup.fake.discussions(REPO, 1)[0]["id"]
    setup.fake.add_note(REPO, 1, author="alice", body="second", reply_to_discussion=thread)
    setup.fake.rewrite_json("GET", r"/merge_requests/1/discussions$", drop_created_at)
    host = setup.host()
    with pytest.raises(BadResponse) as caught:
        await host.fetch_mr(REPO, 1)
    assert str(caught.value) == ("GET /api/v4/projects/acme%2Fwidgets/merge_requests/1/"
                                 "discussions: [0].notes[1].created_at missing")
    assert len((await host.fetch_mr(REPO, 1)).threads) == 1  # the next answer is fine again
    await host.close()


async def test_a_garbled_first_listing_fails_the_cycle_and_settles_nothing(
        setup: Setup) -> None:
    setup.fake.inject_fault("GET", LISTING, status=200, body=HTML,
                            headers={"Content-Type": "text/html"})
    host = setup.host()
    with pytest.raises(BadResponse, match="GET /api/v4/merge_requests: expected JSON"):
        await host.list_changed_mrs((REPO,), None)
    assert host.listing_is_cheap  # not switched to per-project for good
    assert [mr.iid for mr in await host.list_changed_mrs((REPO,), None)] == [1]
    assert setup.listings() == ["/api/v4/merge_requests"] * 2
    await host.close()


async def test_a_403_falls_back_to_per_project_and_the_instance_is_tried_again_later(
        setup: Setup) -> None:
    setup.fake.inject_fault("GET", LISTING, status=403, body='{"message":"403 Forbidden"}',
                            times=2)
    host = setup.host()
    with capture_logs() as logs:
        assert [mr.iid for mr in await host.list_changed_mrs((REPO,), None)] == [1]
        assert not host.listing_is_cheap
        setup.now[0] += REPROBE_SECONDS - 1
        await host.list_changed_mrs((REPO,), None)  # per project, no probe yet
        setup.now[0] += 1
        await host.list_changed_mrs((REPO,), None)  # probe: still 403, per project again
        assert not host.listing_is_cheap
        setup.now[0] += REPROBE_SECONDS
        assert [mr.iid for mr in await host.list_changed_mrs((REPO,), None)] == [1]
    assert host.listing_is_cheap
    project = f"/api/v4/projects/{REPO.replace('/', '%2F')}/merge_requests"
    assert setup.listings() == ["/api/v4/merge_requests", project, project,
                                "/api/v4/merge_requests", project, "/api/v4/merge_requests"]
    switches = [(e["event"], e["log_level"]) for e in logs if "instance_listing" in e["event"]]
    assert switches == [("instance_listing_forbidden", "warning"),
                        ("instance_listing_restored", "info")]
    await host.close()


async def test_a_look_back_at_the_instance_that_fails_otherwise_lists_per_project(
        setup: Setup) -> None:
    setup.fake.inject_fault("GET", LISTING, status=403, body='{"message":"403 Forbidden"}')
    host = setup.host()
    await host.list_changed_mrs((REPO,), None)
    setup.now[0] += REPROBE_SECONDS
    setup.fake.inject_fault("GET", LISTING, status=200, body=HTML,
                            headers={"Content-Type": "text/html"})
    assert [mr.iid for mr in await host.list_changed_mrs((REPO,), None)] == [1]
    assert not host.listing_is_cheap
    setup.now[0] += REPROBE_SECONDS
    await host.list_changed_mrs((REPO,), None)
    assert host.listing_is_cheap
    await host.close()


async def test_a_403_on_a_project_lookup_is_not_the_listings_verdict(setup: Setup) -> None:
    setup.fake.inject_fault("GET", r"^/api/v4/projects/acme%2Fwidgets$", status=403,
                            body='{"message":"403 Forbidden"}')
    host = setup.host()
    with pytest.raises(Forbidden, match="/projects/acme%2Fwidgets"):
        await host.list_changed_mrs((REPO,), None)
    assert host.listing_is_cheap
    await host.close()


async def test_a_configured_instance_listing_never_falls_back(setup: Setup) -> None:
    setup.fake.inject_fault("GET", LISTING, status=403, body='{"message":"403 Forbidden"}')
    host = setup.host("instance")
    with pytest.raises(Forbidden):
        await host.list_changed_mrs((REPO,), None)
    assert host.listing_is_cheap
    await host.close()


async def test_automated_accounts_are_marked_by_gitlabs_own_signs(setup: Setup) -> None:
    fake = setup.fake
    token_bot = fake.add_token_bot(REPO)
    group_bot = fake.add_token_bot("acme", group=True)
    service = fake.add_service_account()
    group_service = fake.add_service_account(group_id=42)
    fake.add_user("project_7_bot")  # the name GitLab gave the first token bot before 16.0
    for author in ("alice", token_bot, group_bot, service, group_service, "project_7_bot"):
        fake.add_note(REPO, 1, author=author, body=f"from {author}")

    def with_bot_flag(mr: dict[str, Any]) -> dict[str, Any]:
        mr["author"]["bot"] = True  # newer GitLab exposes it on an MR's author
        return mr

    fake.rewrite_json("GET", r"/merge_requests/1$", with_bot_flag)
    host = setup.host()
    snapshot = await host.fetch_mr(REPO, 1)
    bots = {m.author.username: m.author.bot for t in snapshot.threads for m in t.messages}
    assert bots == {"alice": False, token_bot: True, group_bot: True, service: True,
                    group_service: True, "project_7_bot": True}
    assert snapshot.mr.author.username == "alice" and snapshot.mr.author.bot
    await host.close()


FENCED_MERGE = "Done.\n~~~\n/merge\n~~~\n```\n/approve\n``` x\n\n<!-- livereview:reply-to=1 -->"


async def test_no_body_the_adapter_posts_runs_a_quick_action_even_unsanitised(
        setup: Setup) -> None:
    """Every GitLab posting path (reply, thread, note, inline finding, summary) neutralises
    command lines itself: a caller that forgot `sanitize.outgoing` commands nothing."""
    host = setup.host()
    key = MRKey("gl", REPO, 1)
    await host.note(key, FENCED_MERGE)
    thread = await host.comment(key, FENCED_MERGE)
    await host.reply(key, thread.thread_id, FENCED_MERGE)
    mr = (await host.fetch_mr(REPO, 1)).mr
    refs = mr.diff_refs()
    await host.post_review(key, refs, [InlineComment("a.py", 1, Side.NEW, FENCED_MERGE)],
                           FENCED_MERGE, Verdict.COMMENTED)
    bodies = [str(n["body"]) for n in setup.fake.notes_by("livereview")]
    assert len(bodies) == 5
    assert [gitlab_commands(body) for body in bodies] == [[]] * 5
    assert all(body.replace(WORD_JOINER, "") == FENCED_MERGE for body in bodies)
