"""The answer engine: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama…).

A half answer is never returned as if complete: an empty answer, one cut by the token
limit, or a refusal raises `LLMError`, and the job retries later.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import httpx2

from livereview.core.prompt import Prompt
from livereview.hosts.http import ssl_context
from livereview.jobs.chat import (
    ChatClient,
    ChatError,
    ChatStatus,
    ChatTimeout,
    ChatUnreachable,
)
from livereview.metrics import Metrics
from livereview.reachability import PROBE_TIMEOUT_SECONDS, cause
from livereview.settings import AISettings


class LLMError(Exception):
    """The model gave no usable answer this time (temporary: the job retries)."""


@dataclass(frozen=True)
class Answer:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Answerer(Protocol):
    async def answer(self, prompt: Prompt) -> Answer: ...

    async def close(self) -> None: ...


def _messages(prompt: Prompt) -> list[dict[str, str]]:
    return [{"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.user}]


def _excerpt(text: str, limit: int = 160) -> str:
    """The endpoint's own words, on one line and short (it may answer a whole HTML page)."""
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def _said(settings: AISettings, text: str) -> str:
    """The endpoint's own words without our API key: a server may echo it in its 401
    ("Incorrect API key provided: sk-…"), and these words are stored in the job's
    last_error and shown by `pending`, where the logs' redaction does not reach."""
    key = settings.api_key.reveal()
    return _excerpt(text.replace(key, "***") if len(key) >= 6 else text)


def failure(settings: AISettings, exc: ChatError) -> str:
    """One line naming the endpoint and the cause, for the job's last_error and the logs."""
    where = f"LLM endpoint {settings.base_url}"
    if isinstance(exc, ChatTimeout):
        return f"{where}: no answer within {settings.timeout_seconds:g}s (ai.timeout_seconds)"
    if isinstance(exc, ChatUnreachable):
        return f"{where} unreachable: {cause(exc)}"
    if isinstance(exc, ChatStatus):
        hint = {401: " (the API key was rejected: ai.api_key_env or ai.api_key_file)",
                403: " (the API key may not use this model)",
                404: f" (no model {settings.model!r} there, or base_url lacks /v1)"
                }.get(exc.status_code, "")
        return f"{where} answered HTTP {exc.status_code}{hint}: {_said(settings, exc.message)}"
    return f"{where} failed: {type(exc).__name__}: {_said(settings, str(exc))}"


async def probe(settings: AISettings, transport: httpx2.AsyncBaseTransport | None = None
                ) -> str | None:
    """Why the endpoint cannot answer (unreachable, key rejected), None if it can: one
    `GET /models`, answered by OpenAI, vLLM, Ollama and llama.cpp alike. Any other HTTP
    answer counts as reachable (a server without /models may still chat)."""
    headers = {"Authorization": f"Bearer {settings.api_key.reveal()}"} if settings.api_key \
        else {}
    async with httpx2.AsyncClient(timeout=PROBE_TIMEOUT_SECONDS, transport=transport,
                                  verify=ssl_context(None) if transport is None else True
                                  ) as client:
        try:
            response = await client.get(settings.base_url.rstrip("/") + "/models",
                                        headers=headers)
        except httpx2.HTTPError as exc:
            return f"LLM endpoint {settings.base_url} unreachable: {cause(exc)}"
    if response.status_code in (401, 403):
        return (f"LLM endpoint {settings.base_url} rejected the API key (HTTP "
                f"{response.status_code}): check ai.api_key_env or ai.api_key_file")
    return None


class OpenAIAnswerer:
    def __init__(self, settings: AISettings, metrics: Metrics,
                 transport: httpx2.AsyncBaseTransport | None = None) -> None:
        self.settings = settings
        self.metrics = metrics
        http = httpx2.AsyncClient(
            timeout=settings.timeout_seconds,
            verify=ssl_context(None) if transport is None else True,
            transport=transport,
        )
        self._client = ChatClient(
            base_url=str(settings.base_url),
            # Local servers need no key; some proxies insist on a non-empty one.
            api_key=settings.api_key.reveal() or "no-key",
            http=http,
        )

    async def close(self) -> None:
        await self._client.close()

    async def answer(self, prompt: Prompt) -> Answer:
        try:
            completion = await self._client.create({
                "model": self.settings.model,
                "messages": _messages(prompt),
                "max_tokens": self.settings.max_output_tokens,
                "temperature": self.settings.temperature,
            })
        except ChatError as exc:
            raise LLMError(failure(self.settings, exc)) from None
        if completion.prompt_tokens is not None:
            self.metrics.llm_tokens.labels("prompt").inc(completion.prompt_tokens)
            self.metrics.llm_tokens.labels("completion").inc(completion.completion_tokens)
        if not completion.choices:
            raise LLMError("LLM returned no choices")
        text = completion.content.strip()
        if completion.refusal:
            raise LLMError("LLM refused to answer")
        if completion.finish_reason == "length":
            raise LLMError("LLM answer was cut by the token limit")
        if completion.finish_reason == "content_filter":
            raise LLMError("LLM answer was filtered")
        if not text:
            raise LLMError("LLM returned an empty answer")
        return Answer(text=text, model=completion.model or self.settings.model,
                      prompt_tokens=completion.prompt_tokens or 0,
                      completion_tokens=completion.completion_tokens)
