"""The answer engine: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama…).

A half answer is never returned as if complete: an empty answer, one cut by the token
limit, or a refusal raises `LLMError`, and the job retries later.

Structured outputs: a prompt with a schema asks the server to enforce it
(`response_format: {"type": "json_schema", "json_schema": {name, schema, strict: true}}`,
which OpenAI, vLLM, Ollama and llama.cpp's server take). A server that refuses it answers
HTTP 400 naming `response_format` or `json_schema` (OpenAI: "Invalid parameter:
'response_format' of type 'json_schema' is not supported with this model",
type invalid_request_error, param response_format — as reported in
web-infra-dev/midscene#259); the answerer then asks again without it, in the instructed
format the prompt describes, and remembers that for the endpoint for the life of the
process: one refusal in all, logged once.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Protocol

import httpx2
import structlog

from livereview.core.prompt import OutputSchema, Prompt
from livereview.hosts.http import ssl_context
from livereview.jobs.chat import (
    ChatClient,
    ChatError,
    ChatStatus,
    ChatTimeout,
    ChatUnreachable,
    Completion,
)
from livereview.metrics import Metrics
from livereview.reachability import PROBE_TIMEOUT_SECONDS, cause
from livereview.settings import AISettings

log = structlog.get_logger("livereview.llm")


class LLMError(Exception):
    """The model gave no usable answer this time (temporary: the job retries)."""


@dataclass(frozen=True)
class Answer:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    structured: bool = False  # the server was asked to enforce the prompt's schema


def refuses_schema(exc: ChatError) -> bool:
    """A 400 about `response_format` / `json_schema`: the server does not do structured
    outputs (any other 400 is an error of its own)."""
    if not isinstance(exc, ChatStatus) or exc.status_code != 400:
        return False
    said = f"{exc.message} {exc.param}".lower()
    return "response_format" in said or "json_schema" in said


def response_format(schema: OutputSchema) -> dict[str, object]:
    return {"type": "json_schema",
            "json_schema": {"name": schema.name, "schema": json.loads(schema.schema),
                            "strict": True}}


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


@dataclass
class SchemaSupport:
    """What each endpoint (by base_url) said about structured outputs, for the process:
    absent until it answered a prompt with a schema, then True (it took it) or False (it
    refused: the instructed format from then on)."""

    known: dict[str, bool] = field(default_factory=dict)
    # Held by the first call with a schema until the endpoint has answered it: calls in
    # parallel wait for that answer rather than each collecting a refusal.
    probing: asyncio.Lock = field(default_factory=asyncio.Lock)

    def worth_asking(self, base_url: str) -> bool:
        return self.known.get(base_url, True)

    def record(self, base_url: str, supported: bool) -> None:
        self.known[base_url] = supported


class OpenAIAnswerer:
    def __init__(self, settings: AISettings, metrics: Metrics,
                 transport: httpx2.AsyncBaseTransport | None = None,
                 schemas: SchemaSupport | None = None) -> None:
        self.settings = settings
        self.metrics = metrics
        self.schemas = schemas or SchemaSupport()
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

    async def _complete(self, prompt: Prompt, schema: OutputSchema | None) -> Completion:
        payload: dict[str, object] = {
            "model": self.settings.model,
            "messages": _messages(prompt),
            "max_tokens": self.settings.max_output_tokens,
            "temperature": self.settings.temperature,
        }
        if schema is not None:
            payload["response_format"] = response_format(schema)
        return await self._client.create(payload)

    async def _ask(self, prompt: Prompt) -> tuple[Completion, bool]:
        """The completion, and whether the server was asked to enforce the schema."""
        base_url = str(self.settings.base_url)
        schema = prompt.schema if prompt.schema is not None and \
            self.schemas.worth_asking(base_url) else None
        try:
            completion = await self._complete(prompt, schema)
        except ChatError as exc:
            if schema is None or not refuses_schema(exc):
                raise LLMError(failure(self.settings, exc)) from None
            self.schemas.record(base_url, False)
            log.warning("llm_structured_outputs_unsupported", endpoint=base_url,
                        reason=_said(self.settings, str(exc)),
                        fallback="the instructed JSON format, for the rest of the process")
            try:
                return await self._complete(prompt, None), False
            except ChatError as again:
                raise LLMError(failure(self.settings, again)) from None
        if schema is not None and base_url not in self.schemas.known:
            self.schemas.record(base_url, True)
            log.info("llm_structured_outputs", endpoint=base_url)
        return completion, schema is not None

    async def answer(self, prompt: Prompt) -> Answer:
        if prompt.schema is not None and str(self.settings.base_url) not in self.schemas.known:
            async with self.schemas.probing:
                completion, structured = await self._ask(prompt)
        else:
            completion, structured = await self._ask(prompt)
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
                      completion_tokens=completion.completion_tokens,
                      structured=structured)
