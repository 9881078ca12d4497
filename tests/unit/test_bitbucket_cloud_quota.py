"""Bitbucket Cloud's hourly quota is spent so that it never runs out, with what the bot posts
served first; and a credential says what it is and may do."""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from livereview.hosts.bitbucket_cloud.access import Credential, notes, quota
from livereview.hosts.bitbucket_cloud.budget import Budget, Use
from livereview.hosts.http import HttpClient
from livereview.metrics import Metrics


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_no_rolling_hour_ever_spends_more_than_the_share_of_the_limit() -> None:
    ticks = Ticks()
    budget = Budget(clock=ticks)
    spent = []
    for second in range(7200):  # two hours of a client asking 5 times a second
        ticks.now = float(second)
        spent += [second for _ in range(5) if budget.try_take(Use.WRITE)]
    worst = max(sum(1 for s in spent if start <= s < start + 3600)
                for start in range(0, 3600, 60))
    assert 900 <= worst <= 1000  # the burst, then 900 an hour: under 1000 in any hour


def test_listing_leaves_tokens_for_reading_and_reading_for_writing() -> None:
    budget = Budget(clock=Ticks())
    while budget.try_take(Use.LIST):
        pass
    assert budget.available(Use.READ) and budget.available(Use.WRITE)
    while budget.try_take(Use.READ):
        pass
    assert not budget.available(Use.LIST) and budget.available(Use.WRITE)
    while budget.try_take(Use.WRITE):
        pass
    assert not budget.available(Use.WRITE)


def test_a_host_that_reports_a_higher_limit_gets_it_used() -> None:
    limit: list[int | None] = [None]
    budget = Budget(limit=lambda: limit[0], clock=Ticks())
    assert (budget.per_hour, budget.capacity) == (900, 100)
    limit[0] = 10_000  # a large workspace's access token (scaled rate limits)
    assert (budget.per_hour, budget.capacity) == (9000, 1000)


def test_a_write_waits_for_the_bucket_to_refill() -> None:
    ticks = Ticks()
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        ticks.now += seconds

    budget = Budget(clock=ticks, sleep=sleep)
    budget._tokens = 0.0
    asyncio.run(budget.take(Use.WRITE))
    assert slept == [pytest.approx(4.0)] and budget.waited_seconds == pytest.approx(4.0)


def near_limit_client(headers: dict[str, str]) -> HttpClient:
    return HttpClient(base_url="https://api.bitbucket.org/2.0", headers={},
                      host_type="bitbucket-cloud", metrics=Metrics(),
                      transport=httpx2.MockTransport(
                          lambda request: httpx2.Response(200, json={}, headers=headers)))


@pytest.mark.parametrize(("near", "pace"), [("false", 0.0), ("true", 3600 / 2500)])
def test_near_the_limit_requests_go_no_faster_than_the_limit_sustains(
        near: str, pace: float) -> None:
    """Bitbucket's access tokens get only Limit and NearLimit, no Remaining."""
    http = near_limit_client({"X-RateLimit-Limit": "2500", "X-RateLimit-Resource": "api",
                              "X-RateLimit-NearLimit": near})
    asyncio.run(http.request("GET", "/repositories/acme/widgets"))
    assert http.rate_limit_limit == 2500
    assert http.pace(0.0) == pytest.approx(pace)


def test_a_credential_says_what_it_is_and_what_it_may_do() -> None:
    token = Credential.from_headers("workspace_access_token", "pullrequest:write")
    assert {n.subject: (n.ok, n.detail) for n in notes(token, login=None, bot="lr")} == {
        "token": (True, "workspace access token (Bearer), posts as its own bot user 'lr'"),
        "may": (True, "read pull requests and their comments, answer, acknowledge and "
                      "approve, read the code (diffs, files) — scopes: pullrequest, "
                      "pullrequest:write, repository, repository:write")}
    # An API token's scopes imply nothing: reading needs its own scope.
    api = Credential.from_headers("api_token", "write:pullrequest:bitbucket")
    [_, may] = notes(api, login="bot@example.com", bot="bot")
    assert not may.ok
    assert may.detail.startswith("cannot read pull requests and their comments (needs Pull "
                                 "requests: Read); cannot read the code (diffs, files) "
                                 "(needs Repositories: Read)")
    assert notes(None, login=None, bot="lr")[0].detail.startswith("kind not reported")


def test_the_quota_row_names_where_the_limit_comes_from() -> None:
    assert quota(None, 900).detail.startswith("1000 requests/hour (the documented base")
    assert quota(2500, 2250).detail.startswith("2500 requests/hour (reported by X-RateLimit")
