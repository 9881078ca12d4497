"""One shared async HTTP client for every host adapter.

Retries live here and only here, for temporary failures only: connection errors, 5xx and
429 (and GitHub's rate-limit 403s), with exponential backoff and full jitter, honoring
`Retry-After` and `RateLimit-Reset` / `X-RateLimit-Reset`. A request that may have reached
the host (a POST that timed out or got a 502) is *not* retried: the reply job re-reads the
thread and adopts what was posted.
"""

from __future__ import annotations

import asyncio
import random
import ssl
import time
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2
import truststore

from livereview.hosts.base import (
    BadResponse,
    TLSFailed,
    Transient,
)
from livereview.hosts.http_status import (
    host_error,
    limit_header,
    rate_limited,
    retry_after,
    status_class,
)
from livereview.hosts.lanes import Lanes
from livereview.hosts.payload import JsonObject, json_object, json_objects
from livereview.hosts.revalidate import Keep, Revalidate, ValidatorCache, revalidated
from livereview.log_setup import get_logger
from livereview.reachability import cause

if TYPE_CHECKING:  # prometheus_client: loaded where something exports the counts
    from livereview.metrics import Metrics

log = get_logger("livereview.http")
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
OFF_LOOP_BYTES = 1_000_000  # JSON bodies bigger than this are decoded in a thread


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0  # a single wait; longer Retry-After values go back to the caller

    def backoff(self, attempt: int) -> float:
        return random.uniform(0, min(self.max_delay, self.base_delay * 2**attempt))


def ssl_context(ca_bundle: str | None) -> ssl.SSLContext:
    """The OS trust store (an internal CA installed on the host just works), or a bundle."""
    if ca_bundle:
        return ssl.create_default_context(cafile=ca_bundle)
    return truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _ssl_error(exc: BaseException) -> ssl.SSLError | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


class HttpClient:
    def __init__(
        self,
        *,
        base_url: str,
        headers: Mapping[str, str],
        host_type: str,
        metrics: Metrics | None,  # None: nothing exports them (one CLI call, an MCP session)
        timeout: float = 30.0,
        ca_bundle: str | None = None,
        max_concurrency: int = 4,
        retry: RetryPolicy | None = None,
        transport: httpx2.AsyncBaseTransport | None = None,
        max_response_bytes: int = 32 * 2**20,
    ) -> None:
        self.host_type = host_type
        self.max_response_bytes = max_response_bytes
        self.metrics = metrics
        self.retry = retry or RetryPolicy()
        self._limit = Lanes(max_concurrency)  # hosts/lanes.py: what a person awaits first
        self._rate_limit: dict[str, int] = {}  # Remaining, Limit, Reset as last seen
        self._near_limit = False
        self.paced_seconds = 0.0
        self.requests_sent = 0
        self.not_modified = 0
        self.validated = ValidatorCache()
        self._client = httpx2.AsyncClient(
            base_url=base_url,
            headers=dict(headers),
            timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)),
            verify=ssl_context(ca_bundle) if transport is None else True,
            transport=transport,
            follow_redirects=False,
        )

    async def close(self) -> None:
        await self._client.aclose()

    def _observe(self, response: httpx2.Response | None) -> None:
        status = response.status_code if response is not None else None
        remaining_seen = limited = False
        if response is not None:
            # GitLab: RateLimit-*; GitHub: X-RateLimit-* (Reset is epoch seconds in both).
            # GitHub counts GraphQL apart (X-RateLimit-Resource: graphql): pace on the REST
            # budget. Bitbucket Cloud (resource `api`) sends only Limit, per hour, and
            # NearLimit: https://bitbucket.org/blog/introducing-scaled-rate-limits-for-bitbucket-cloud-api
            if response.headers.get("X-RateLimit-Resource", "core") != "graphql":
                for name in ("Remaining", "Limit", "Reset"):
                    value = limit_header(response, name)
                    if value.isdigit():
                        self._rate_limit[name] = int(value)
                remaining_seen = limit_header(response, "Remaining").isdigit()
                near = limit_header(response, "NearLimit").lower()
                if near in ("true", "false"):
                    self._near_limit = near == "true"
            limited = status in (403, 429) and rate_limited(response)
        if self.metrics is not None:
            self._count(self.metrics, status, remaining_seen=remaining_seen, limited=limited)

    def _count(self, metrics: Metrics, status: int | None, *, remaining_seen: bool,
               limited: bool) -> None:
        metrics.host_requests.labels(self.host_type, status_class(status)).inc()
        if remaining_seen:
            metrics.rate_limit_remaining.labels(self.host_type).set(
                self._rate_limit["Remaining"])
        if limited:
            metrics.rate_limited.labels(self.host_type).inc()

    @property
    def rate_limit_remaining(self) -> int | None:
        return self._rate_limit.get("Remaining")

    @property
    def rate_limit_limit(self) -> int | None:  # the host's limit per window, if it says
        return self._rate_limit.get("Limit")

    def pace(self, now: float) -> float:
        """Seconds to wait before the next request so the remaining rate-limit budget lasts
        until it resets: nothing while more than 10% (at least 20 requests) is left; near
        an hourly limit that says only that (Bitbucket Cloud's NearLimit, see _observe), no
        faster than the limit sustains."""
        remaining, reset = self._rate_limit.get("Remaining"), self._rate_limit.get("Reset")
        limit = self._rate_limit.get("Limit", 0)
        if remaining is None and self._near_limit and limit:
            return 3600.0 / limit
        if remaining is None or reset is None or remaining > max(20, limit // 10):
            return 0.0
        return min(30.0, max(0.0, reset - now) / max(remaining, 1))

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        wait = self.pace(time.time())
        if wait > 0:
            if self.paced_seconds == 0:
                log.warning("rate_limit_low", host_type=self.host_type,
                            remaining=self.rate_limit_remaining, pacing_seconds=round(wait, 2))
            self.paced_seconds += wait
            await asyncio.sleep(wait)
        async with self._limit:
            self.requests_sent += 1
            request = self._client.build_request(method, path, **kwargs)
            response = await self._client.send(request, stream=True)
            try:
                return await self._bounded(response, f"{method} {path}")
            finally:
                await response.aclose()

    async def _bounded(self, response: httpx2.Response, endpoint: str) -> httpx2.Response:
        """The response with its body read — refused as soon as it is bigger than
        `max_response_bytes`: one MR's answer must not take the daemon's memory
        (hosts[].max_response_mb)."""
        limit = self.max_response_bytes
        too_big = BadResponse(f"{endpoint}: the answer is larger than max_response_mb "
                              f"({limit / 2**20:g} MB)")
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            raise too_big
        try:
            read = response.content  # a transport that hands over a read body (tests)
        except httpx2.ResponseNotRead:
            pass
        else:
            if len(read) > limit:
                raise too_big
            return response
        if declared.isdigit() and "Content-Encoding" not in response.headers:
            # The size is known and within the limit (a body longer than its declared
            # length is a protocol error in h11): read it into this very response rather
            # than streaming it into a new one — per request, that copy was most of the
            # client's own CPU at first sight of hundreds of MRs (bench figure 16).
            await response.aread()
            return response
        chunks, size = [], 0
        async for chunk in response.aiter_raw():
            size += len(chunk)
            if size > limit:
                raise too_big
            chunks.append(chunk)
        # The raw bytes with the original headers: httpx decodes (gzip) as it would have.
        return httpx2.Response(response.status_code, headers=response.headers,
                               content=b"".join(chunks), request=response.request)

    async def request(self, method: str, path: str, *, conditional: bool = False,
                      keep: Keep = None, **kwargs: Any) -> httpx2.Response:
        """Send one request, retrying temporary failures; raise a typed HostError.

        `conditional` GETs revalidate the last response for the same URL with its ETag: a
        304 returns the remembered response (on GitHub a 304 costs no rate limit; on any
        host it saves the body and its parsing) — or what `keep` made of it.
        """
        if not conditional or method != "GET":
            return await self._request(method, path, **kwargs)
        return (await self._revalidate(path, keep, **kwargs))[0]

    async def changed(self, path: str) -> bool:
        """Whether a conditional GET of `path` has a new answer: True unless the host
        answered 304 to the ETag of the response remembered for it (one never read, or
        forgotten, is new). On GitHub a 304 costs no rate limit (`request`)."""
        return (await self._revalidate(path, None))[1]

    async def _revalidate(self, path: str, keep: Keep, **kwargs: Any
                          ) -> tuple[httpx2.Response, bool]:
        """A conditional GET: (the response, or the remembered one on a 304; whether it
        is new)."""
        key = self.validated.key(path, kwargs.get("params"))
        cached = self.validated.get(key)
        if cached is not None:
            kwargs["headers"] = {**kwargs.get("headers", {}),
                                 "If-None-Match": cached.headers["ETag"]}
        response = await self._request("GET", path, **kwargs)
        if response.status_code == 304 and cached is not None:
            self.not_modified += 1
            return cached, False
        if response.headers.get("ETag"):
            self.validated.remember(key, response if keep is None else keep(response))
        return response, True

    async def _request(self, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        safe_to_repeat = method in IDEMPOTENT
        for attempt in range(self.retry.attempts):
            last = attempt == self.retry.attempts - 1
            try:
                response = await self._send(method, path, **kwargs)
            except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout) as exc:
                # Never reached the host: always safe to retry — unless TLS said no.
                self._observe(None)
                tls = _ssl_error(exc)
                if tls is not None:
                    raise TLSFailed(
                        f"TLS verification of {self._client.base_url.host} failed "
                        f"({getattr(tls, 'verify_message', '') or tls.reason or tls}): if it "
                        "uses an internal CA, set this host's ca_bundle to the CA's PEM file"
                    ) from None
                if last:
                    raise Transient(f"{method} {path}: {cause(exc)}") from None
                wait = self.retry.backoff(attempt)
            except httpx2.TransportError as exc:
                self._observe(None)
                if last or not safe_to_repeat:
                    raise Transient(f"{method} {path}: {cause(exc)}") from None
                wait = self.retry.backoff(attempt)
            else:
                self._observe(response)
                if response.status_code < 400:  # including 304 Not Modified
                    return response
                hint = retry_after(response, time.time())
                limited = rate_limited(response)  # refused before any work: safe to repeat
                if limited and hint is None and response.status_code == 403:
                    hint = 60.0  # GitHub: "otherwise, wait for at least one minute"
                rejected = limited or (response.status_code == 503 and hint is not None)
                retryable = (response.status_code in RETRY_STATUS or limited) and (
                    safe_to_repeat or rejected)
                if not retryable or last or (hint is not None and hint > self.retry.max_delay):
                    raise host_error(method, path, response, hint)
                wait = hint if hint is not None else self.retry.backoff(attempt)
                log.info("host_retry", host_type=self.host_type, method=method, path=path,
                         status=response.status_code, wait_seconds=round(wait, 2))
            await asyncio.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def json(self, method: str, path: str, *, conditional: bool = False,
                   **kwargs: Any) -> object:
        """The decoded JSON body; anything else (HTML, truncated, empty) is BadResponse."""
        response = await self.request(method, path, conditional=conditional, **kwargs)
        return await decoded(response, f"{method} {path}")

    async def one(self, method: str, path: str, *, conditional: bool = False,
                  **kwargs: Any) -> JsonObject:
        """The body as a JSON object, read with typed accessors (hosts/payload.py)."""
        body = await self.json(method, path, conditional=conditional, **kwargs)
        return json_object(body, f"{method} {path}")

    async def pages(
        self, path: str, params: Mapping[str, Any] | None = None, per_page: int = 100,
        *, conditional: Revalidate = False, keep: Keep = None,
    ) -> AsyncGenerator[list[object], None]:
        """Yield every page of a paginated list: GitLab's `X-Next-Page`, else the `Link`
        header's rel="next" (GitHub; its query may hold a page number or a cursor). The next
        request keeps `path` and takes the link's query, so URLs stay stable for ETags."""
        async with aclosing(self._pages(path, params, per_page, conditional, keep)) as pages:
            async for _, items in pages:
                yield items

    async def items(
        self, path: str, params: Mapping[str, Any] | None = None, *,
        conditional: Revalidate = False, keep: Keep = None,
    ) -> AsyncGenerator[list[JsonObject], None]:
        """`pages`, each item a JSON object read with typed accessors; a wrong item names
        its page and index."""
        async with aclosing(self._pages(path, params, 100, conditional, keep)) as pages:
            async for number, items in pages:
                where = f"GET {path}" + (f" (page {number})" if number > 1 else "")
                yield json_objects(items, where)

    async def _pages(self, path: str, params: Mapping[str, Any] | None, per_page: int,
                     conditional: Revalidate, keep: Keep = None
                     ) -> AsyncGenerator[tuple[int, list[object]], None]:
        query: dict[str, Any] = {**(params or {}), "per_page": per_page, "page": 1}
        number = 0
        while True:
            response = await self.request("GET", path, params=dict(query),
                                          conditional=revalidated(conditional, number),
                                          keep=keep)
            items = await decoded(response, f"GET {path}")
            if not isinstance(items, list):
                raise BadResponse(f"GET {path}: expected a JSON list")
            number += 1
            yield number, items
            if not items:
                return
            next_page = response.headers.get("X-Next-Page", "").strip()
            if next_page.isdigit():
                query["page"] = int(next_page)
                continue
            link = response.links.get("next", {}).get("url")
            if not link:
                return
            query = dict(httpx2.URL(link).params.multi_items())


async def decoded(response: httpx2.Response, endpoint: str) -> object:
    """`_decode`, in a thread for a big body: parsing megabytes of JSON would stall every
    other MR's work on the event loop."""
    if len(response.content) > OFF_LOOP_BYTES:
        return await asyncio.to_thread(_decode, response, endpoint)
    return _decode(response, endpoint)


def _decode(response: httpx2.Response, endpoint: str) -> object:
    try:
        return response.json()
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        kind = response.headers.get("Content-Type", "")
        if not response.content:
            problem = "an empty body"
        elif "json" in kind:
            problem = "malformed JSON"
        else:
            problem = kind or "no content type"
        raise BadResponse(f"{endpoint}: expected JSON, got {problem}") from None

