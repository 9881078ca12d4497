"""A small client for an OpenAI-compatible `POST /chat/completions` on httpx2.

It does what the daemon used the OpenAI SDK for, and keeps the SDK's behaviour (openai
3.57, `_base_client.py`): two retries of a connection error, a timeout, HTTP 408, 409, 429
and 5xx (or whatever `x-should-retry` says), after `retry-after-ms` / `retry-after` when
0 < it ≤ 120 s, else 0.5 s × 2ⁿ (≤ 8 s) less up to 25 % jitter; no retry when the server
asks for more than 120 s. A status error's message is `Error code: N`, plus ` - <message>`
from an `{"error": {"message": …}}` body. Without the SDK, `livereview run` does not load
its ~40 MiB of request and response types (docs/performance.md, figure 5).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

import httpx2

from livereview import __version__

MAX_RETRIES = 2
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
MAX_RETRY_AFTER = 120.0


class ChatError(Exception):
    """The request failed; `str()` is the SDK-style message."""


class ChatUnreachable(ChatError):
    """No answer from the endpoint (its cause is chained: reachability.cause reads it)."""


class ChatTimeout(ChatUnreachable):
    """No answer within the timeout."""


class ChatStatus(ChatError):
    def __init__(self, status: int, message: str, param: str = "") -> None:
        super().__init__(message)
        self.status_code = status
        self.message = message
        self.param = param  # the OpenAI error's `param` (e.g. "response_format"), or ""


class ChatMalformed(ChatError):
    """A 2xx answer that is not a chat completion."""


@dataclass(frozen=True)
class Completion:
    """What the daemon keeps of an answer (`choices[0]` and the usage)."""

    model: str
    choices: int  # how many choices came back
    content: str
    refusal: str
    finish_reason: str
    prompt_tokens: int | None  # None: the answer carried no usage
    completion_tokens: int


def retry_after(headers: httpx2.Headers) -> float | None:
    """Seconds the server asks to wait: `retry-after-ms`, then `retry-after` (seconds or an
    HTTP date); None if it says nothing usable."""
    for name, divisor in (("retry-after-ms", 1000), ("retry-after", 1)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            delay = float(value)
        except ValueError:
            continue
        if delay == math.inf and value.strip().lower() not in (
                "inf", "+inf", "infinity", "+infinity"):
            return MAX_RETRY_AFTER + 1  # an overflow: an excessive delay, not a short one
        return delay / divisor
    try:
        date = email.utils.parsedate_tz(headers.get("retry-after") or "")
        return None if date is None else email.utils.mktime_tz(date) - time.time()
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def should_retry(response: httpx2.Response) -> bool:
    wait = retry_after(response.headers)
    if wait is not None and math.isfinite(wait) and wait > MAX_RETRY_AFTER:
        return False
    said = response.headers.get("x-should-retry")
    if said in ("true", "false"):
        return said == "true"
    return response.status_code in (408, 409, 429) or response.status_code >= 500


def backoff(attempt: int, headers: httpx2.Headers | None) -> float:
    """The wait before retry number `attempt + 1`."""
    wait = retry_after(headers) if headers is not None else None
    if wait is not None and math.isfinite(wait) and 0 < wait <= MAX_RETRY_AFTER:
        return wait
    return min(INITIAL_RETRY_DELAY * 2.0**attempt, MAX_RETRY_DELAY) * (1 - 0.25 * random.random())


def status_error(response: httpx2.Response) -> ChatStatus:
    """As the SDK words it: the error's `message`, or the error itself where a server sends
    a string (`{"error": "…"}`), or the body's text where it is not JSON (a proxy's page)."""
    message = f"Error code: {response.status_code}"
    text = response.text.strip()
    try:
        body = json.loads(text)
    except ValueError:
        return ChatStatus(response.status_code, f"{message} - {text}" if text else message)
    error = body.get("error", body) if isinstance(body, Mapping) else None
    said = error if isinstance(error, str) else (
        error.get("message") if isinstance(error, Mapping) else None)
    if isinstance(said, str) and said:
        message += f" - {said}"
    param = error.get("param") if isinstance(error, Mapping) else None
    return ChatStatus(response.status_code, message, param if isinstance(param, str) else "")


def _text(data: Mapping[str, object], name: str) -> str:
    value = data.get(name)
    return value if isinstance(value, str) else ""


def _count(data: Mapping[str, object], name: str) -> int:
    value = data.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def completion(body: object) -> Completion:
    """The parts of a chat completion the daemon reads; ChatMalformed if it is none."""
    if not isinstance(body, Mapping) or not isinstance(body.get("choices", []), list):
        raise ChatMalformed("the answer is not a chat completion")
    choices = body.get("choices") or []
    first = choices[0] if choices else {}
    message = first.get("message") if isinstance(first, Mapping) else None
    if choices and not isinstance(message, Mapping):
        raise ChatMalformed("the answer's first choice has no message")
    message = message if isinstance(message, Mapping) else {}
    usage = body.get("usage")
    usage = usage if isinstance(usage, Mapping) else None
    return Completion(
        model=_text(body, "model"), choices=len(choices),
        content=_text(message, "content"), refusal=_text(message, "refusal"),
        finish_reason=_text(first, "finish_reason") if isinstance(first, Mapping) else "",
        prompt_tokens=None if usage is None else _count(usage, "prompt_tokens"),
        completion_tokens=0 if usage is None else _count(usage, "completion_tokens"))


class ChatClient:
    def __init__(self, *, base_url: str, api_key: str, http: httpx2.AsyncClient,
                 max_retries: int = MAX_RETRIES) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Authorization": f"Bearer {api_key}",
                         "User-Agent": f"livereview/{__version__}",
                         "Accept": "application/json"}
        self._http = http
        self._max_retries = max_retries

    async def close(self) -> None:
        await self._http.aclose()

    async def create(self, payload: Mapping[str, object]) -> Completion:
        for attempt in range(self._max_retries + 1):
            last = attempt == self._max_retries
            try:
                response = await self._http.post(self._url, json=dict(payload),
                                                 headers=self._headers)
            except httpx2.TimeoutException as exc:
                if last:
                    raise ChatTimeout("Request timed out.") from exc
                await asyncio.sleep(backoff(attempt, None))
                continue
            except httpx2.HTTPError as exc:
                if last:
                    raise ChatUnreachable("Connection error.") from exc
                await asyncio.sleep(backoff(attempt, None))
                continue
            if response.status_code >= 400:
                if not last and should_retry(response):
                    await asyncio.sleep(backoff(attempt, response.headers))
                    continue
                raise status_error(response)
            try:
                return completion(response.json())
            except (ValueError, RecursionError):
                raise ChatMalformed("the answer is not JSON") from None
        raise AssertionError("unreachable: the last attempt returns or raises")
