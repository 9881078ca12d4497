"""The shared HTTP client with GitHub's conventions: Link pagination, rate-limit 403s
(primary and secondary limits), and GraphQL's separate budget."""

from __future__ import annotations

import time

import httpx2
import pytest

from livereview.hosts.base import Forbidden, RateLimited
from livereview.hosts.http import HttpClient, RetryPolicy
from livereview.metrics import Metrics
from tests.unit.test_http import scripted

FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=5)
SECONDARY = {"message": "You have exceeded a secondary rate limit. Please wait a few minutes "
             "before you try again.", "documentation_url": "https://docs.github.com/rest"}


def github(handler: object, metrics: Metrics | None = None) -> HttpClient:
    return HttpClient(base_url="https://ghe.example/api/v3",
                      headers={"Authorization": "Bearer " + "t" * 20}, host_type="github",
                      metrics=metrics or Metrics(), retry=FAST,
                      transport=httpx2.MockTransport(handler))  # type: ignore[arg-type]


async def test_pages_follow_the_link_header_and_keep_the_path() -> None:
    nxt = ('<https://ghe.example/api/v3/repositories/42/issues/comments?since=2024-01-01T00'
           '%3A00%3A00Z&per_page=2&page=2>; rel="next", <https://ghe.example/api/v3/'
           'repositories/42/issues/comments?per_page=2&page=3>; rel="last"')
    handler, seen = scripted(httpx2.Response(200, json=[1, 2], headers={"Link": nxt}),
                             httpx2.Response(200, json=[3], headers={
                                 "Link": '<https://ghe.example/x?page=1>; rel="first"'}))
    http = github(handler)
    pages = http.pages("/repos/o/r/issues/comments", {"since": "2024-01-01T00:00:00Z"},
                       per_page=2)
    assert [i async for page in pages for i in page] == [1, 2, 3]
    assert [r.url.path for r in seen] == ["/api/v3/repos/o/r/issues/comments"] * 2
    assert seen[1].url.params["page"] == "2"
    assert seen[1].url.params["since"] == "2024-01-01T00:00:00Z"


async def test_a_cursor_in_the_next_link_is_followed() -> None:
    handler, seen = scripted(
        httpx2.Response(200, json=[1], headers={
            "Link": '<https://api.github.com/x?per_page=1&after=Y3Vyc29y>; rel="next"'}),
        httpx2.Response(200, json=[2]))
    assert [i async for page in github(handler).pages("/x", per_page=1) for i in page] == [1, 2]
    assert seen[1].url.params["after"] == "Y3Vyc29y"


async def test_a_secondary_rate_limit_403_is_retried_even_for_a_post() -> None:
    metrics = Metrics()
    handler, seen = scripted(
        httpx2.Response(403, json=SECONDARY, headers={"Retry-After": "0"}),
        httpx2.Response(201, json={"id": 7}))
    assert await github(handler, metrics).json("POST", "/comments", json={}) == {"id": 7}
    assert len(seen) == 2
    assert metrics.registry.get_sample_value(
        "livereview_rate_limited_total", {"host_type": "github"}) == 1


async def test_a_secondary_limit_without_retry_after_waits_a_minute() -> None:
    handler, seen = scripted(httpx2.Response(403, json=SECONDARY))
    with pytest.raises(RateLimited) as caught:
        await github(handler).json("POST", "/comments", json={})
    assert caught.value.retry_after == 60 and len(seen) == 1


async def test_the_spent_primary_limit_waits_until_the_reset() -> None:
    reset = int(time.time()) + 600
    handler, _ = scripted(httpx2.Response(403, json={"message": "API rate limit exceeded"},
                                          headers={"X-RateLimit-Remaining": "0",
                                                   "X-RateLimit-Reset": str(reset)}))
    with pytest.raises(RateLimited) as caught:
        await github(handler).json("GET", "/user")
    assert 590 <= caught.value.retry_after <= 600


async def test_a_plain_403_is_still_forbidden() -> None:
    handler, seen = scripted(httpx2.Response(403, json={
        "message": "Resource not accessible by personal access token"}, headers={
        "X-RateLimit-Remaining": "4999"}))
    with pytest.raises(Forbidden):
        await github(handler).json("POST", "/reactions", json={})
    assert len(seen) == 1


async def test_graphql_budget_does_not_pace_rest() -> None:
    reset = str(int(time.time()) + 3600)
    handler, _ = scripted(httpx2.Response(200, json={"data": {}}, headers={
        "X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "3",
        "X-RateLimit-Reset": reset, "X-RateLimit-Resource": "graphql"}))
    metrics = Metrics()
    http = github(handler, metrics)
    await http.json("POST", "https://ghe.example/api/graphql", json={"query": "{}"})
    assert http.rate_limit_remaining is None
    assert http.pace(time.time()) == 0.0
    assert metrics.registry.get_sample_value(  # the gauge shows the REST budget only
        "livereview_rate_limit_remaining", {"host_type": "github"}) is None
