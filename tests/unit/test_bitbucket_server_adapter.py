"""The Bitbucket Data Center adapter against the fake over loopback: what is particular to
Bitbucket beyond the contract suite — reactions found once per server, review status,
401 as "forbidden", what a listing costs, who the token is."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from livereview.app.hosts import connect
from livereview.core.model import MRKey
from livereview.hosts.base import AuthFailed, Forbidden, NotFound
from livereview.hosts.bitbucket_server.adapter import PAGE, BitbucketServer
from livereview.hosts.http import HttpClient
from livereview.metrics import Metrics
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.settings import HostSettings, Secret
from tests.contract.drivers import Clock

TOKEN = "BBDC-unit-SECRET-0042"
REPO = "ACME/widgets"


class Server:
    def __init__(self, *, reactions: bool = True) -> None:
        self.clock = Clock()
        self.fake = FakeBitbucketDC(token=TOKEN, clock=self.clock, reactions=reactions)
        self.fake.add_user("alice")
        self.fake.add_repo(REPO)
        self.http = FakeBitbucketDCServer(self.fake).start()

    def host(self, token: str = TOKEN) -> BitbucketServer:
        host = connect(HostSettings(name="bbs", type="bitbucket-server", url=self.http.url,
                                    token=Secret(token)), Metrics())
        assert isinstance(host, BitbucketServer)
        return host


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    made = Server()
    yield made
    made.http.stop()


@pytest.fixture
async def old_server() -> AsyncIterator[Server]:
    made = Server(reactions=False)
    yield made
    made.http.stop()


async def test_identity_comes_from_the_header_the_server_names_the_user_in(
        server: Server) -> None:
    host = server.host()
    try:
        me = await host.whoami()
    finally:
        await host.close()
    assert (me.username, me.user_id) == ("livereview", str(server.fake.users["livereview"].id))
    assert host.version == "8.19.1" and host.capabilities.reactions


async def test_an_anonymous_answer_is_a_rejected_token(server: Server) -> None:
    # No Authorization header at all (a proxy that strips it): served anonymously.
    host = BitbucketServer("bbs", HttpClient(base_url=server.http.url, headers={},
                                             host_type="bitbucket-server", metrics=Metrics()))
    try:
        with pytest.raises(AuthFailed, match="anonymous"):
            await host.whoami()
    finally:
        await host.close()


async def test_a_server_without_reactions_is_found_once_and_remembered(
        old_server: Server) -> None:
    host = old_server.host()
    try:
        assert host.capabilities.reactions  # not known before the first look
        await host.list_changed_mrs((REPO,), None)
        await host.list_changed_mrs((REPO,), None)
    finally:
        await host.close()
    assert not host.capabilities.reactions and host.version == "6.10.17"
    properties = [r for r in old_server.fake.requests if r[1].endswith("/application-properties")]
    assert len(properties) == 1


async def test_a_reactions_endpoint_missing_on_a_new_server_turns_reactions_off(
        old_server: Server) -> None:
    """A server that says 8.x but has no reactions endpoint (a plugin disabled): the 404 for
    a comment that exists switches the acks to replies; a deleted comment does not."""
    old_server.fake.version = "8.5.0"
    pr = old_server.fake.add_pr(REPO, title="T", author="bob")
    comment = old_server.fake.add_comment(REPO, pr, author="alice", text="@livereview hi")
    host = old_server.host()
    key = MRKey("bbs", REPO, pr)
    try:
        await host.fetch_mr(REPO, pr)
        assert host.capabilities.reactions
        with pytest.raises(NotFound):
            await host.react(key, "999", "thinking_face")  # no such comment: still unknown
        assert host.capabilities.reactions
        with pytest.raises(NotFound):
            await host.react(key, str(comment["id"]), "thinking_face")
        assert not host.capabilities.reactions
    finally:
        await host.close()


async def test_approve_request_changes_and_unapprove_set_the_bots_status(
        server: Server) -> None:
    pr = server.fake.add_pr(REPO, title="T", author="bob")
    key = MRKey("bbs", REPO, pr)
    host = server.host()
    try:
        await host.approve(key)
        assert server.fake.status_of(REPO, pr, "livereview") == "APPROVED"
        await host.request_changes(key)
        assert server.fake.status_of(REPO, pr, "livereview") == "NEEDS_WORK"
        await host.unapprove(key)
        assert server.fake.status_of(REPO, pr, "livereview") == "UNAPPROVED"
    finally:
        await host.close()
    puts = [r for r in server.fake.requests if r[0] == "PUT"]
    assert {r[1] for r in puts} == {
        f"/rest/api/1.0/projects/ACME/repos/widgets/pull-requests/{pr}/participants/livereview"}


async def test_a_missing_permission_is_forbidden_not_a_rejected_token(server: Server) -> None:
    """Bitbucket answers 401 for both; only AuthorisationException means "not permitted"."""
    pr = server.fake.add_pr(REPO, title="T", author="bob")
    server.fake.forbid("livereview", REPO)
    host = server.host()
    try:
        with pytest.raises(Forbidden):
            await host.fetch_mr(REPO, pr)
        with pytest.raises(Forbidden):
            await host.repo_exists(REPO)
        with pytest.raises(AuthFailed):
            await server.host("wrong-token").whoami()
    finally:
        await host.close()


async def test_an_idle_repo_costs_one_request_and_a_busy_one_reads_only_fresh_pages(
        server: Server) -> None:
    for i in range(PAGE * 2 + 10):
        server.fake.add_pr(REPO, title=f"PR {i}", author="bob")
    since = server.clock.advance(60)
    server.clock.advance(1)
    touched = [3, 50]
    for pr in touched:
        server.fake.add_comment(REPO, pr, author="alice", text="new")
    host = server.host()
    try:
        await host.list_changed_mrs((REPO,), None)  # detects the server once
        server.fake.reset_requests()
        everything = await host.list_changed_mrs((REPO,), None)
        first = len(server.fake.requests)
        server.fake.reset_requests()
        changed = await host.list_changed_mrs((REPO,), since)
        idle = len(server.fake.requests)
        server.fake.reset_requests()
        none = await host.list_changed_mrs((REPO,), server.clock.advance(60))
    finally:
        await host.close()
    assert len(everything) == PAGE * 2 + 10 and first == 3  # every page once
    assert sorted(mr.iid for mr in changed) == touched and idle == 1
    assert none == [] and len(server.fake.requests) == 1


async def test_an_edit_moves_the_pull_request_so_the_listing_sees_it(server: Server) -> None:
    pr = server.fake.add_pr(REPO, title="T", author="bob")
    comment = server.fake.add_comment(REPO, pr, author="alice", text="hello")
    since = server.clock.advance(timedelta(minutes=5).total_seconds())
    server.clock.advance(1)
    server.fake.edit_comment(REPO, pr, comment["id"], "hello @livereview")
    host = server.host()
    try:
        assert [mr.iid for mr in await host.list_changed_mrs((REPO,), since)] == [pr]
        snapshot = await host.fetch_mr(REPO, pr)
    finally:
        await host.close()
    [thread] = snapshot.threads
    assert thread.messages[0].body == "hello @livereview"
