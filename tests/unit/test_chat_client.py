"""The model client (jobs/chat.py) keeps what the OpenAI SDK did for the daemon: its retries,
waits and error words (openai 3.57 `_base_client.py`: `_should_retry`,
`_calculate_retry_timeout`, `_make_status_error_from_response`)."""

from __future__ import annotations

import asyncio
import contextlib
import json

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from livereview.core.prompt import Prompt
from livereview.jobs import chat
from livereview.jobs.chat import ChatClient, ChatMalformed, ChatStatus, status_error
from livereview.jobs.llm import LLMError, OpenAIAnswerer
from livereview.metrics import Metrics
from livereview.settings import AISettings, Secret

OK = {"model": "m-1", "choices": [{"message": {"role": "assistant", "content": " yes "},
                                   "finish_reason": "stop"}],
      "usage": {"prompt_tokens": 7, "completion_tokens": 2}}


def transport(answers: list[httpx2.Response], seen: list[httpx2.Request]
              ) -> httpx2.MockTransport:
    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return answers.pop(0)
    return httpx2.MockTransport(handle)


def answer(status: int, body: object, **headers: str) -> httpx2.Response:
    return httpx2.Response(status, content=json.dumps(body).encode(),
                           headers={"content-type": "application/json", **headers})


@pytest.fixture
def no_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
    monkeypatch.setattr(asyncio, "sleep", sleep)
    return waits


async def create(answers: list[httpx2.Response]) -> tuple[chat.Completion | Exception,
                                                          list[httpx2.Request]]:
    seen: list[httpx2.Request] = []
    client = ChatClient(base_url="http://llm.test/v1/", api_key="sk-test",
                        http=httpx2.AsyncClient(transport=transport(answers, seen)))
    try:
        return await client.create({"model": "m", "messages": []}), seen
    except chat.ChatError as exc:
        return exc, seen
    finally:
        await client.close()


async def test_a_completion_is_posted_with_the_key_and_read(no_waits: list[float]) -> None:
    got, seen = await create([answer(200, OK)])
    assert got == chat.Completion("m-1", 1, " yes ", "", "stop", 7, 2)
    assert str(seen[0].url) == "http://llm.test/v1/chat/completions"
    assert seen[0].headers["authorization"] == "Bearer sk-test"
    assert json.loads(seen[0].content) == {"model": "m", "messages": []}


async def test_a_rate_limit_is_retried_after_the_wait_the_server_names(
        no_waits: list[float]) -> None:
    got, seen = await create([answer(429, {}, **{"retry-after-ms": "1500"}),
                              answer(503, {}, **{"retry-after": "2"}), answer(200, OK)])
    assert isinstance(got, chat.Completion)
    assert len(seen) == 3
    assert no_waits == [1.5, 2.0]


async def test_two_retries_then_the_status_error_in_the_sdks_words(
        no_waits: list[float]) -> None:
    got, seen = await create([answer(500, {"error": {"message": "boom"}})] * 3)
    assert isinstance(got, ChatStatus)
    assert (got.status_code, str(got)) == (500, "Error code: 500 - boom")
    assert len(seen) == 3
    assert 0.375 <= no_waits[0] <= 0.5 and 0.75 <= no_waits[1] <= 1.0  # 0.5 × 2ⁿ, −25 %


@pytest.mark.parametrize(("status", "headers", "tries"), [
    (400, {}, 1), (401, {}, 1), (404, {}, 1), (408, {}, 3), (409, {}, 3),
    (400, {"x-should-retry": "true"}, 3), (500, {"x-should-retry": "false"}, 1),
    (429, {"retry-after": "121"}, 1),  # more than two minutes: not waited for
])
async def test_which_statuses_are_retried(status: int, headers: dict[str, str], tries: int,
                                          no_waits: list[float]) -> None:
    got, seen = await create([answer(status, {"detail": "no"}, **headers)] * 3)
    assert isinstance(got, ChatStatus)
    assert str(got) == f"Error code: {status}"  # no error.message in the body
    assert len(seen) == tries


async def test_an_answer_that_is_not_a_completion_is_malformed(no_waits: list[float]) -> None:
    got, _ = await create([httpx2.Response(200, content=b"<html>proxy</html>")])
    assert isinstance(got, ChatMalformed)
    got, _ = await create([answer(200, {"choices": "none"})])
    assert isinstance(got, ChatMalformed)


@given(st.one_of(st.none(), st.integers(), st.text(), st.lists(st.integers()),
                 st.dictionaries(st.sampled_from(["choices", "usage", "model"]),
                                 st.one_of(st.none(), st.integers(), st.text(),
                                           st.lists(st.dictionaries(st.text(), st.text()))))))
def test_any_json_body_is_read_or_refused_with_chat_malformed(body: object) -> None:
    with contextlib.suppress(ChatMalformed):
        chat.completion(body)


async def run_answerer(answers: list[httpx2.Response]) -> str | tuple[str, float]:
    metrics = Metrics()
    seen: list[httpx2.Request] = []
    ai = AISettings(base_url="http://llm.test/v1", model="m", api_key=Secret(""))
    answerer = OpenAIAnswerer(ai, metrics, transport(answers, seen))
    try:
        got = await answerer.answer(Prompt(system="s", user="u"))
    except LLMError as exc:
        return str(exc)
    finally:
        await answerer.close()
    prompt = metrics.registry.get_sample_value("livereview_llm_tokens_total", {"kind": "prompt"})
    return got.text, prompt or 0.0


def choice(message: dict[str, str] | None = None, **fields: str) -> dict[str, object]:
    return {"model": "m", "choices": [{"message": {"content": "x", **(message or {})},
                                       "finish_reason": "stop", **fields}]}


@pytest.mark.parametrize(("body", "said"), [
    ({"choices": []}, "LLM returned no choices"),
    (choice(message={"refusal": "no"}), "LLM refused to answer"),
    (choice(finish_reason="length"), "LLM answer was cut by the token limit"),
    (choice(finish_reason="content_filter"), "LLM answer was filtered"),
    (choice(message={"content": "  "}), "LLM returned an empty answer"),
])
async def test_half_answers_are_errors_as_before(body: dict[str, object], said: str,
                                                 no_waits: list[float]) -> None:
    assert await run_answerer([answer(200, body)]) == said


async def test_the_answer_and_its_tokens_are_kept(no_waits: list[float]) -> None:
    assert await run_answerer([answer(200, OK)]) == ("yes", 7.0)


async def test_without_a_key_the_bearer_is_a_placeholder_as_the_sdk_needed(
        no_waits: list[float]) -> None:
    seen: list[httpx2.Request] = []
    ai = AISettings(base_url="http://llm.test/v1", model="m", api_key=Secret(""))
    answerer = OpenAIAnswerer(ai, Metrics(), transport([answer(200, OK)], seen))
    try:
        await answerer.answer(Prompt(system="s", user="u"))
    finally:
        await answerer.close()
    assert seen[0].headers["authorization"] == "Bearer no-key"


@pytest.mark.parametrize(("status", "body", "said"), [
    (400, '{"error": {"message": "Invalid parameter: response_format", "param": '
          '"response_format"}}', "Error code: 400 - Invalid parameter: response_format"),
    (400, '{"error": "response_format is not supported by this server"}',
     "Error code: 400 - response_format is not supported by this server"),
    (400, "json_schema: unknown field", "Error code: 400 - json_schema: unknown field"),
    (502, "", "Error code: 502"),
])
def test_a_status_error_keeps_what_the_server_said_in_any_shape(
        status: int, body: str, said: str) -> None:
    """A server that answers `{"error": "…"}` or plain text still says why (a structured-
    output refusal is recognised by those words: jobs/llm.py refuses_schema)."""
    error = status_error(httpx2.Response(status, text=body))
    assert (error.status_code, error.message) == (status, said)
