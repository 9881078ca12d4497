"""Bitbucket Cloud's hourly request quota, spent so that it never runs out.

Bitbucket Cloud allows 1 000 requests per rolling hour to `/2.0/repositories/*` (scaled up
to 10 000 for access tokens of large workspaces, which then say so in `X-RateLimit-Limit`),
and tells nothing about what is left: only access tokens get `X-RateLimit-NearLimit`, once
under 20 %. https://support.atlassian.com/bitbucket-cloud/docs/api-request-limits/ and
https://bitbucket.org/blog/introducing-scaled-rate-limits-for-bitbucket-cloud-api

So the adapter counts its own requests in a token bucket: `capacity` requests at once, and
`limit × SHARE` per hour after that, which keeps any rolling hour under the limit. Requests
are served by how much they matter: what the bot posts (an acknowledgement, an answer) may
use every token; reading a pull request must leave `WRITE_RESERVE` tokens; listing repos
for changes — the one cost that grows with the repos watched and could eat the whole quota
while nothing happens — only takes tokens beyond `LIST_RESERVE`, and otherwise waits for a
later cycle.
"""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import Awaitable, Callable

DEFAULT_LIMIT = 1000  # requests per rolling hour, the documented base quota
SHARE = 0.9  # of the limit this daemon spends: others (a person's scripts) may share it
BURST = 0.1  # of the limit that may go at once (e.g. the first sight of every repo)
WRITE_RESERVE = 5
LIST_RESERVE = 30


class Use(enum.Enum):
    """What a request is for; its value is the tokens it must leave in the bucket."""

    WRITE = 0
    READ = WRITE_RESERVE
    LIST = LIST_RESERVE


class Budget:
    def __init__(self, limit: Callable[[], int | None] = lambda: None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self._limit = limit  # the host's advertised limit, once it sent one
        self._clock = clock
        self._sleep = sleep  # with `clock`, replaceable: benchmarks run on simulated time
        self._tokens = self.capacity
        self._at = clock()
        self.waited_seconds = 0.0

    @property
    def per_hour(self) -> float:
        return (self._limit() or DEFAULT_LIMIT) * SHARE

    @property
    def capacity(self) -> float:
        return max(float(LIST_RESERVE + 1), (self._limit() or DEFAULT_LIMIT) * BURST)

    def _refill(self) -> float:
        now = self._clock()
        self._tokens = min(self.capacity,
                           self._tokens + (now - self._at) * self.per_hour / 3600.0)
        self._at = now
        return self._tokens

    def available(self, use: Use) -> bool:
        """Whether a request of this kind could go now (listing asks before it lists)."""
        return self._refill() - use.value >= 1.0

    def try_take(self, use: Use) -> bool:
        if not self.available(use):
            return False
        self._tokens -= 1.0
        return True

    async def take(self, use: Use) -> None:
        """Spend one request, waiting for the bucket to refill if it must. Waiters are not
        queued: when a token comes back, a write (which may take the last one) goes before
        the reads still waiting for theirs."""
        while not self.try_take(use):
            wait = max(0.01, (1.0 + use.value - self._tokens) * 3600.0 / self.per_hour)
            self.waited_seconds += wait
            await self._sleep(wait)
