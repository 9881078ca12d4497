"""The shared HTTP client over httpx2.MockTransport: what is retried, what never is."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx2
import pytest

from livereview.hosts.base import (
    AuthFailed,
    BadResponse,
    Forbidden,
    NotFound,
    RateLimited,
    Transient,
)
from livereview.hosts.http import HttpClient, RetryPolicy
from livereview.metrics import Metrics

FAST = RetryPolicy(attempts=3, base_delay=0.001, max_delay=5)


def client(handler: Callable[[httpx2.Request], httpx2.Response], metrics: Metrics | None = None
           ) -> HttpClient:
    return HttpClient(base_url="https://gitlab.example", headers={"PRIVATE-TOKEN": "t" * 20},
                      host_type="gitlab", metrics=metrics or Metrics(), retry=FAST,
                      transport=httpx2.MockTransport(handler))


def scripted(*responses: httpx2.Response | Exception) -> tuple[
        Callable[[httpx2.Request], httpx2.Response], list[httpx2.Request]]:
    seen: list[httpx2.Request] = []
    queue = list(responses)

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        item = queue.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    return handler, seen


async def test_get_retries_5xx_then_succeeds() -> None:
    handler, seen = scripted(httpx2.Response(502), httpx2.Response(503),
                             httpx2.Response(200, json=[1]))
    assert await client(handler).json("GET", "/api/v4/user") == [1]
    assert len(seen) == 3


async def test_post_is_not_repeated_after_a_502_it_may_have_reached_the_host() -> None:
    handler, seen = scripted(httpx2.Response(502), httpx2.Response(201, json={}))
    with pytest.raises(Transient):
        await client(handler).json("POST", "/notes", json={"body": "x"})
    assert len(seen) == 1


async def test_post_is_not_repeated_after_a_read_timeout() -> None:
    handler, seen = scripted(httpx2.ReadTimeout("slow"), httpx2.Response(201, json={}))
    with pytest.raises(Transient):
        await client(handler).json("POST", "/notes", json={"body": "x"})
    assert len(seen) == 1


async def test_post_is_retried_when_the_connection_never_opened() -> None:
    handler, seen = scripted(httpx2.ConnectError("refused"), httpx2.Response(201, json={"id": 1}))
    assert await client(handler).json("POST", "/notes", json={"body": "x"}) == {"id": 1}
    assert len(seen) == 2


async def test_a_transport_failure_names_its_cause_not_only_its_class() -> None:
    """The log said "GET /api/v4/user: ConnectError" — refused? DNS? timed out?"""
    refused = httpx2.ConnectError("All connection attempts failed")
    refused.__context__ = ConnectionRefusedError(111, "Connection refused")
    handler, _ = scripted(*[refused] * 3)
    with pytest.raises(Transient, match=r"^GET /api/v4/user: connection refused$"):
        await client(handler).json("GET", "/api/v4/user")
    handler, _ = scripted(httpx2.ReadTimeout("The read operation timed out"))
    with pytest.raises(Transient, match=r"^POST /notes: timed out$"):
        await client(handler).json("POST", "/notes", json={"body": "x"})


async def test_429_is_retried_even_for_post_and_counted() -> None:
    metrics = Metrics()
    handler, seen = scripted(httpx2.Response(429, headers={"Retry-After": "0"}),
                             httpx2.Response(201, json={"id": 2}))
    assert await client(handler, metrics).json("POST", "/notes", json={}) == {"id": 2}
    assert len(seen) == 2
    assert metrics.registry.get_sample_value(
        "livereview_rate_limited_total", {"host_type": "gitlab"}) == 1
    assert metrics.registry.get_sample_value(
        "livereview_host_requests_total", {"host_type": "gitlab", "status_class": "4xx"}) == 1


async def test_a_long_retry_after_goes_back_to_the_caller() -> None:
    handler, seen = scripted(httpx2.Response(429, headers={"Retry-After": "120"}))
    with pytest.raises(RateLimited) as caught:
        await client(handler).json("GET", "/x")
    assert caught.value.retry_after == 120
    assert len(seen) == 1


@pytest.mark.parametrize(("status", "error"), [
    (401, AuthFailed), (403, Forbidden), (404, NotFound)])
async def test_client_errors_are_typed_and_not_retried(status: int, error: type[Exception]) -> None:
    handler, seen = scripted(httpx2.Response(status))
    with pytest.raises(error):
        await client(handler).json("GET", "/x")
    assert len(seen) == 1


async def test_an_html_error_page_from_a_proxy_is_a_bad_response() -> None:
    handler, _ = scripted(httpx2.Response(200, text="<html>Sign in</html>",
                                          headers={"Content-Type": "text/html"}))
    with pytest.raises(BadResponse, match="expected JSON, got text/html"):
        await client(handler).json("GET", "/x")


@pytest.mark.parametrize(("body", "got"), [
    (b"", "an empty body"), (b'{"id": 1', "malformed JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "malformed JSON")])  # deeper than the parser goes
async def test_an_empty_truncated_or_too_deep_body_is_a_bad_response(body: bytes,
                                                                     got: str) -> None:
    handler, _ = scripted(httpx2.Response(200, content=body,
                                          headers={"Content-Type": "application/json"}))
    with pytest.raises(BadResponse, match=f"^GET /x: expected JSON, got {got}$"):
        await client(handler).json("GET", "/x")


async def test_a_page_item_that_is_no_object_names_the_page_and_index() -> None:
    handler, _ = scripted(
        httpx2.Response(200, json=[{"id": 1}], headers={"X-Next-Page": "2"}),
        httpx2.Response(200, json=[{"id": 2}, None], headers={"X-Next-Page": ""}))
    with pytest.raises(BadResponse, match=r"^GET /list \(page 2\): \[1\]: expected an object"):
        [i async for page in client(handler).items("/list") for i in page]


async def test_the_rate_limit_left_is_a_gauge() -> None:
    metrics = Metrics()
    handler, _ = scripted(
        httpx2.Response(200, json={}, headers={"RateLimit-Remaining": "597"}),
        httpx2.Response(200, json={}, headers={"RateLimit-Remaining": "596"}),
        httpx2.Response(200, json={}))  # a host (or a route) without rate-limit headers
    http = client(handler, metrics)
    for _ in range(3):
        await http.json("GET", "/x")
    assert metrics.registry.get_sample_value(
        "livereview_rate_limit_remaining", {"host_type": "gitlab"}) == 596


async def test_pages_follow_x_next_page() -> None:
    handler, seen = scripted(
        httpx2.Response(200, json=[1, 2], headers={"X-Next-Page": "2"}),
        httpx2.Response(200, json=[3], headers={"X-Next-Page": ""}))
    items = [i async for page in client(handler).pages("/list", per_page=2) for i in page]
    assert items == [1, 2, 3]
    assert [r.url.params["page"] for r in seen] == ["1", "2"]


async def test_errors_never_carry_the_token() -> None:
    handler, _ = scripted(httpx2.Response(401))
    with pytest.raises(AuthFailed) as caught:
        await client(handler).json("GET", "/api/v4/user")
    assert "t" * 20 not in str(caught.value)


async def test_conditional_get_revalidates_with_the_etag_and_reuses_the_body() -> None:
    seen: list[httpx2.Request] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        if request.headers.get("If-None-Match") == 'W/"v1"':
            return httpx2.Response(304, headers={"ETag": 'W/"v1"'})
        return httpx2.Response(200, json=[{"id": 1}], headers={"ETag": 'W/"v1"'})

    http = client(handler)
    first = await http.json("GET", "/discussions", conditional=True, params={"page": 1})
    second = await http.json("GET", "/discussions", conditional=True, params={"page": 1})
    other_page = await http.json("GET", "/discussions", conditional=True, params={"page": 2})
    assert first == second == other_page == [{"id": 1}]
    assert [r.headers.get("If-None-Match") for r in seen] == [None, 'W/"v1"', None]
    assert http.not_modified == 1


async def test_unconditional_gets_and_posts_never_send_validators() -> None:
    handler, seen = scripted(httpx2.Response(200, json={}, headers={"ETag": 'W/"a"'}),
                             httpx2.Response(200, json={}, headers={"ETag": 'W/"a"'}))
    http = client(handler)
    await http.json("GET", "/x")
    await http.json("GET", "/x")
    assert all("If-None-Match" not in r.headers for r in seen)


async def test_slows_down_before_the_rate_limit_runs_out() -> None:
    reset = int(time.time()) + 10
    headers = {"RateLimit-Limit": "600", "RateLimit-Remaining": "5",
               "RateLimit-Reset": str(reset)}
    handler, _ = scripted(httpx2.Response(200, json={}, headers=headers))
    http = client(handler)
    assert http.pace(time.time()) == 0.0  # nothing known yet
    await http.json("GET", "/x")
    assert 1.5 <= http.pace(reset - 10) <= 2.0  # 10 s left, 5 requests: one every 2 s
    assert http.pace(reset + 1) == 0.0  # the window has reset


async def test_a_comfortable_budget_is_not_paced() -> None:
    headers = {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4000",
               "X-RateLimit-Reset": str(int(time.time()) + 3600)}  # GitHub's names
    handler, _ = scripted(httpx2.Response(200, json={}, headers=headers))
    http = client(handler)
    await http.json("GET", "/x")
    assert http.rate_limit_remaining == 4000
    assert http.pace(time.time()) == 0.0


async def test_without_metrics_the_client_still_reads_the_rate_limit_and_retries_a_429(
        ) -> None:
    """One CLI call or an MCP session exports no metrics (app/wiring.py passes none): the
    pacing and the retries that the rate-limit headers drive are the same."""
    reset = int(time.time()) + 10
    headers = {"RateLimit-Limit": "600", "RateLimit-Remaining": "5",
               "RateLimit-Reset": str(reset)}
    handler, seen = scripted(httpx2.Response(429, headers={"Retry-After": "0"}),
                             httpx2.Response(200, json=[1], headers=headers))
    http = HttpClient(base_url="https://gitlab.example", headers={"PRIVATE-TOKEN": "t" * 20},
                      host_type="gitlab", metrics=None, retry=FAST,
                      transport=httpx2.MockTransport(handler))
    assert await http.json("GET", "/api/v4/user") == [1]
    assert len(seen) == 2
    assert http.rate_limit_remaining == 5
    assert 1.5 <= http.pace(reset - 10) <= 2.0
