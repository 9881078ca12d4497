"""What one answer may weigh (hosts[].max_response_mb), and big bodies decoded off the loop."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator

import httpx2
import pytest

from livereview.hosts.base import BadResponse
from livereview.hosts.http import HttpClient
from livereview.metrics import Metrics

LIMIT = 10_000


def client(handler: httpx2.MockTransport) -> HttpClient:
    return HttpClient(base_url="https://gitlab.example", headers={}, host_type="gitlab",
                      metrics=Metrics(), transport=handler, max_response_bytes=LIMIT)


async def chunks(body: bytes, size: int = 1_000) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start: start + size]


def streamed(body: bytes, headers: dict[str, str] | None = None) -> httpx2.MockTransport:
    """A transport that streams `body` in chunks, without a Content-Length (chunked)."""
    return httpx2.MockTransport(lambda request: httpx2.Response(
        200, headers=headers or {}, content=chunks(body)))


BIG = json.dumps(["x" * 100] * 200).encode()  # ~21 kB


async def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, content=BIG))
    with pytest.raises(BadResponse, match=r"GET /api/v4/x: the answer is larger than "
                                          r"max_response_mb"):
        await client(transport).json("GET", "/api/v4/x")


async def test_a_streamed_answer_is_cut_off_at_the_limit() -> None:
    with pytest.raises(BadResponse, match="larger than max_response_mb"):
        await client(streamed(BIG)).json("GET", "/api/v4/x")


async def test_a_streamed_answer_within_the_limit_reads_whole() -> None:
    small = json.dumps({"a": list(range(500))}).encode()
    assert await client(streamed(small)).json("GET", "/api/v4/x") == {"a": list(range(500))}


async def test_a_gzipped_answer_is_decoded_once() -> None:
    body = json.dumps({"note": "é" * 50}).encode()
    transport = streamed(gzip.compress(body), {"Content-Encoding": "gzip"})
    assert await client(transport).json("GET", "/api/v4/x") == {"note": "é" * 50}


async def test_a_big_body_is_decoded_in_a_thread_all_the_same() -> None:
    body = json.dumps([{"id": i, "body": "y" * 100} for i in range(12_000)]).encode()
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, content=body))
    http = HttpClient(base_url="https://gitlab.example", headers={}, host_type="gitlab",
                      metrics=Metrics(), transport=transport)
    assert len(body) > 1_000_000
    decoded = await http.json("GET", "/api/v4/x")
    assert isinstance(decoded, list) and len(decoded) == 12_000
