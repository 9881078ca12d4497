"""The fake Bitbucket Data Center's dashboard (`GET dashboard/pull-requests`) answers as the
real one: checked with atlassian-python-api's `get_dashboard_pull_requests`, a client no one
on this project wrote, then with our adapter's `involved_mrs` reading the same state.

REST reference: https://developer.atlassian.com/server/bitbucket/rest/v906/api-group-
dashboard/ — the pull requests where the authenticated user is the author, a reviewer or a
participant, filtered by `role` and `state`, `order` NEWEST first."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from atlassian import Bitbucket

from livereview.app.hosts import connect
from livereview.hosts.bitbucket_server.adapter import BitbucketServer
from livereview.metrics import Metrics
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.settings import HostSettings, Secret

TOKEN = "dashboard-SECRET-0042"
FILES = {"a.py": ("x = 1\n", "x = 2\n")}


def _fake() -> tuple[FakeBitbucketDC, dict[str, int]]:
    fake = FakeBitbucketDC(token=TOKEN)
    for name in ("alice", "bob"):
        fake.add_user(name)
    prs = {
        "reviewing": fake.add_pr("ACME/widgets", title="asks the bot", author="alice",
                                 files=FILES),
        "commented": fake.add_pr("ACME/widgets", title="bot answered", author="alice",
                                 files=FILES),
        "mentioned": fake.add_pr("ACME/gadgets", title="only a mention", author="bob",
                                 files=FILES),
        "hidden": fake.add_pr("SECRET/vault", title="not readable", author="bob",
                              files=FILES),
    }
    fake.add_reviewer("ACME/widgets", prs["reviewing"], "livereview")
    fake.add_comment("ACME/widgets", prs["commented"], author="livereview", text="Answer.")
    fake.add_comment("ACME/gadgets", prs["mentioned"], author="bob",
                     text="@livereview have a look")
    fake.add_reviewer("SECRET/vault", prs["hidden"], "livereview")
    fake.forbid("livereview", "SECRET/vault")
    return fake, prs


def test_atlassian_reads_the_bots_dashboard_by_role() -> None:
    fake, _ = _fake()
    with FakeBitbucketDCServer(fake) as server:
        client = Bitbucket(url=server.url, token=TOKEN)

        def titles(**filters: str) -> list[str]:
            return [pr["title"] for pr in client.get_dashboard_pull_requests(**filters)]

        assert titles(role="REVIEWER", state="OPEN") == ["asks the bot"]
        assert titles(role="PARTICIPANT") == ["bot answered"]
        assert titles(role="AUTHOR") == []
        # Every role, most recently updated first; a mention alone does not make the bot a
        # participant, and a repository it may not read shows nothing.
        assert titles(state="OPEN") == ["bot answered", "asks the bot"]
        reviewing = next(iter(client.get_dashboard_pull_requests(role="REVIEWER")))
        assert [(r["user"]["name"], r["role"]) for r in reviewing["reviewers"]] == [
            ("livereview", "REVIEWER")]
        assert reviewing["toRef"]["repository"]["project"]["key"] == "ACME"


def test_the_adapter_finds_the_watched_prs_that_involve_the_bot_updated_since() -> None:
    fake, prs = _fake()

    async def ours(url: str) -> None:
        host = connect(HostSettings(name="bbs", type="bitbucket-server", url=url,
                                    token=Secret(TOKEN)), Metrics())
        assert isinstance(host, BitbucketServer) and host.involvement_feed
        try:
            found = await host.involved_mrs(("acme/widgets", "ACME/gadgets"), None)
            assert sorted((mr.repo, mr.iid) for mr in found) == sorted([
                ("acme/widgets", prs["commented"]), ("acme/widgets", prs["reviewing"])])
            later = datetime.now(UTC) + timedelta(minutes=1)
            assert await host.involved_mrs(("ACME/widgets",), later) == []
            assert await host.involved_mrs(("ACME/gadgets",), None) == []
        finally:
            await host.close()

    with FakeBitbucketDCServer(fake) as server:
        asyncio.run(ours(server.url))
