"""Outbound notifiers for a review's verdict: a command run with the event as JSON on its
stdin, and/or an HTTP POST of the same JSON to an internal URL.

Every string in the event went through `sanitize.clean` (no control characters, no ANSI
escape sequences, no invisible characters): a finding is the model's text, and the model
read hostile code; whatever reads the event — a terminal, a chat bridge, another agent —
must not be driven by it. A notifier that fails raises `NotifyFailed`; the runner leaves
the run retryable and records each notifier that succeeded, so a retry repeats none of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeAlias

import httpx2

from livereview.core.sanitize import clean
from livereview.hosts.http import ssl_context

Json: TypeAlias = "str | int | float | bool | list[Json] | dict[str, Json] | None"
MAX_FINDING_CHARS = 2000


class NotifyFailed(Exception):
    """A notifier did not confirm delivery; the message says which and why (one line)."""


def cleaned(value: Json) -> Json:
    """`value` with every string (keys included) stripped of control characters and escape
    sequences."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, list):
        return [cleaned(v) for v in value]
    if isinstance(value, dict):
        return {clean(k): cleaned(v) for k, v in value.items()}
    return value


class Notifier(Protocol):
    @property
    def name(self) -> str: ...

    async def deliver(self, event: Mapping[str, Json]) -> None: ...


@dataclass(frozen=True)
class CommandNotifier:
    argv: Sequence[str]
    timeout_seconds: float
    name: str = "command"

    async def deliver(self, event: Mapping[str, Json]) -> None:
        data = json.dumps(cleaned(dict(event)), ensure_ascii=False).encode()
        try:
            process = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        except OSError as exc:
            raise NotifyFailed(f"notify_command {self.argv[0]!r} could not start: "
                               f"{exc.strerror or exc}") from None
        try:
            async with asyncio.timeout(self.timeout_seconds):
                await process.communicate(data)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            raise NotifyFailed(f"notify_command {self.argv[0]!r} did not finish within "
                               f"{self.timeout_seconds:g}s") from None
        if process.returncode != 0:
            raise NotifyFailed(f"notify_command {self.argv[0]!r} exited with "
                               f"{process.returncode}")


@dataclass(frozen=True)
class HttpNotifier:
    url: str
    timeout_seconds: float
    transport: httpx2.AsyncBaseTransport | None = None
    name: str = "http"

    async def deliver(self, event: Mapping[str, Json]) -> None:
        async with httpx2.AsyncClient(
                timeout=self.timeout_seconds, transport=self.transport,
                verify=ssl_context(None) if self.transport is None else True) as client:
            try:
                response = await client.post(self.url, json=cleaned(dict(event)))
            except httpx2.HTTPError as exc:
                raise NotifyFailed(f"notify_url: {type(exc).__name__}") from None
        if response.status_code >= 300:
            raise NotifyFailed(f"notify_url answered HTTP {response.status_code}")


def notifiers(command: Sequence[str], url: str, timeout_seconds: float) -> list[Notifier]:
    found: list[Notifier] = []
    if command:
        found.append(CommandNotifier(tuple(command), timeout_seconds))
    if url:
        found.append(HttpNotifier(url, timeout_seconds))
    return found
