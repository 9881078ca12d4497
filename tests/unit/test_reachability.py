"""Why something cannot be reached, named: the cause under the HTTP clients' wrappers, and
LLM failures that name the endpoint (was: `LLM endpoint failed: APIConnectionError`)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import httpx2
import pytest

from livereview.core.prompt import Prompt
from livereview.jobs.llm import LLMError, OpenAIAnswerer, probe
from livereview.metrics import Metrics
from livereview.reachability import cause, diagnose
from livereview.sandbox.llm_server import FakeLLMServer, LLMFault
from livereview.settings import AISettings, Secret

PROMPT = Prompt(system="You review code.", user="Is this lock needed?")


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """Accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield int(sock.getsockname()[1])


async def failure_of(url: str, timeout: float = 5.0) -> BaseException:
    async with httpx2.AsyncClient(timeout=timeout) as client:
        try:
            await client.get(url)
        except httpx2.HTTPError as exc:
            return exc
    raise AssertionError(f"{url} answered")


async def test_cause_names_refused_dns_and_timeout(closed_port: int, silent_port: int) -> None:
    assert cause(await failure_of(f"http://127.0.0.1:{closed_port}/")) == "connection refused"
    assert cause(await failure_of("http://gitlab.invalid/")).startswith("DNS lookup failed (")
    assert cause(await failure_of(f"http://127.0.0.1:{silent_port}/", 0.2)) == "timed out"


async def test_diagnose_tells_dns_from_refused_from_listening(closed_port: int,
                                                              silent_port: int) -> None:
    assert (await diagnose(f"http://127.0.0.1:{closed_port}") ==
            f"127.0.0.1:{closed_port} refused the connection (nothing listens there)")
    assert (await diagnose("https://gitlab.invalid/api")
            or "").startswith("cannot resolve gitlab.invalid: ")
    assert await diagnose(f"http://127.0.0.1:{silent_port}") is None  # it does accept


def settings(url: str, key: str = "") -> AISettings:
    return AISettings(base_url=url, model="m", timeout_seconds=1.0, api_key=Secret(key))


async def answer_error(ai: AISettings) -> str:
    answerer = OpenAIAnswerer(ai, Metrics())
    try:
        with pytest.raises(LLMError) as failed:
            await answerer.answer(PROMPT)
    finally:
        await answerer.close()
    return str(failed.value)


async def test_llm_errors_name_the_endpoint_and_the_cause(closed_port: int,
                                                          silent_port: int) -> None:
    refused = f"http://127.0.0.1:{closed_port}/v1"
    assert await answer_error(settings(refused)) == (
        f"LLM endpoint {refused} unreachable: connection refused")
    silent = f"http://127.0.0.1:{silent_port}/v1"
    assert await answer_error(settings(silent)) == (
        f"LLM endpoint {silent}: no answer within 1s (ai.timeout_seconds)")
    with FakeLLMServer() as llm:
        llm.llm.faults += [LLMFault(status=500)] * 3  # the call and the client's 2 retries
        message = await answer_error(settings(llm.url))
    assert message.startswith(f"LLM endpoint {llm.url} answered HTTP 500: ")
    assert "injected fault" in message


def reply_with(status: int, body: object) -> httpx2.MockTransport:
    return httpx2.MockTransport(lambda request: httpx2.Response(
        status, content=json.dumps(body).encode(), headers={"content-type": "application/json"}))


async def test_probe_says_unreachable_or_a_rejected_key_and_accepts_any_other_answer(
        closed_port: int) -> None:
    refused = f"http://127.0.0.1:{closed_port}/v1"
    assert await probe(settings(refused)) == (
        f"LLM endpoint {refused} unreachable: connection refused")
    key = settings("https://llm.example/v1", "sk-" + "x" * 20)
    rejected = reply_with(401, {"error": {"message": "Incorrect API key provided"}})
    assert await probe(key, rejected) == (
        "LLM endpoint https://llm.example/v1 rejected the API key (HTTP 401): check "
        "ai.api_key_env or ai.api_key_file")
    assert await probe(key, reply_with(200, {"object": "list", "data": []})) is None
    assert await probe(key, reply_with(404, {"detail": "Not Found"})) is None  # no /models


async def test_an_endpoint_that_echoes_the_api_key_does_not_get_it_stored() -> None:
    """The error becomes the job's last_error (shown by `pending`, kept in the database),
    out of the logs' redaction: a server that repeats the key in its 401 must not put it
    there (found by an attack session)."""
    key = "sk-live-" + "k" * 32
    echo = httpx2.MockTransport(lambda request: httpx2.Response(
        401, headers={"content-type": "application/json"}, content=json.dumps({"error": {
            "message": f"Incorrect API key provided: {request.headers['authorization']}"}})
        .encode()))
    answerer = OpenAIAnswerer(settings("https://llm.example/v1", key), Metrics(), echo)
    try:
        with pytest.raises(LLMError) as failed:
            await answerer.answer(PROMPT)
    finally:
        await answerer.close()
    assert key not in str(failed.value)
    assert str(failed.value).startswith("LLM endpoint https://llm.example/v1 answered HTTP 401 "
                                        "(the API key was rejected")
    assert "Incorrect API key provided: Bearer ***" in str(failed.value)
