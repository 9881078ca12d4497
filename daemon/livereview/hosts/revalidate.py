"""Responses remembered for revalidation with their ETag (`If-None-Match` → 304).

A 304 costs no rate limit on GitHub and saves the body and its parsing on every host, so
idle cycles revalidate what they read. Two kinds of URL are read: those every cycle reads
again (listings, hot MRs — GitHub: three a repo, five a hot PR) and those read once (first
sight of 10 000 cold MRs). Remembering the second kind costs memory for nothing, and lets
them push out the first kind: a cycle that pushes out what the next one needs makes every
revalidation a full, rate-limited request. So, as in the 2Q policy, a URL read for the first
time waits in a small probation queue; one read again (a hit, or its path still among the
recently seen) is kept in the main part. Both are bounded by count, and together by bytes.
The path, not the whole URL: GitHub's comment lists ask `since` a time rounded to ten
minutes, and the new URL of the same list is as much worth keeping as the old one was.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Literal

import httpx2

# Which GETs of a paginated read are sent conditionally: none, all, or only the first
# page — a listing newest-first, which an idle cycle stops reading after its first page.
# Its later pages are read only when much changed at once (first sight), and remembering
# them would hold the whole listing in memory for nothing.
Revalidate = bool | Literal["first"]

COUNT = 4096  # URLs read again and again: hundreds of repos and their hot MRs
PROBATION = 256  # URLs read once so far
SEEN = 8192  # paths of URLs read before, so that a second read is recognised
BYTES = 16 * 2**20
# What to remember of a response instead of all of it (None: all of it).
Keep = Callable[[httpx2.Response], httpx2.Response] | None
DROPPED_HEADERS = ("content-encoding", "content-length", "transfer-encoding")


def revalidated(conditional: Revalidate, pages_read: int) -> bool:
    """Whether the next page (after `pages_read` pages) is sent conditionally."""
    return conditional is True or (conditional == "first" and pages_read == 0)


def keeping(*fields: str, items: str | None = None
            ) -> Callable[[httpx2.Response], httpx2.Response]:
    """Remember only `fields` of each item of a JSON list (or of the list at key `items` of
    a JSON object, whose other keys are kept, e.g. Bitbucket's `next`): a listing's first
    page then costs its remembering a few bytes per item, not its items' whole payloads.
    A body of another shape is remembered as it is (reading it fails the same way)."""

    def keep(response: httpx2.Response) -> httpx2.Response:
        try:
            body = json.loads(response.content)
        except ValueError:
            return response
        listed = body.get(items) if items is not None and isinstance(body, dict) else body
        if not isinstance(listed, list) or not all(isinstance(i, dict) for i in listed):
            return response
        kept = [{k: item[k] for k in fields if k in item} for item in listed]
        reduced = {**body, items: kept} if items is not None else kept
        headers = [(k, v) for k, v in response.headers.multi_items()
                   if k.lower() not in DROPPED_HEADERS]
        return httpx2.Response(response.status_code, headers=headers,
                               content=json.dumps(reduced).encode(), request=response.request)

    return keep


class ValidatorCache:
    """The last response per URL: read again → kept (least recently used out first), read
    once → on probation."""

    def __init__(self, count: int = COUNT, size: int = BYTES, probation: int = PROBATION,
                 seen: int = SEEN) -> None:
        self.count, self.size, self.probation, self.seen = count, size, probation, seen
        self._kept: OrderedDict[str, httpx2.Response] = OrderedDict()
        self._trial: OrderedDict[str, httpx2.Response] = OrderedDict()
        self._seen: OrderedDict[str, None] = OrderedDict()
        self.bytes = 0

    @staticmethod
    def key(path: str, params: Mapping[str, Any] | None) -> str:
        """The URL a response is remembered for."""
        return f"{path}?{sorted((params or {}).items())}"

    def __len__(self) -> int:
        return len(self._kept) + len(self._trial)

    def held(self) -> dict[str, httpx2.Response]:
        """What is remembered now, without counting it as read."""
        return {**self._trial, **self._kept}

    def get(self, key: str) -> httpx2.Response | None:
        response = self._kept.get(key)
        if response is not None:
            self._kept.move_to_end(key)
            return response
        response = self._trial.pop(key, None)
        if response is not None:  # read again: it is worth keeping
            self._kept[key] = response
            self._shrink()
        return response

    def remember(self, key: str, response: httpx2.Response) -> None:
        """Keep `response` for `key`. One larger than a quarter of the byte budget is not
        kept: it would push out many small ones."""
        path = key.partition("?")[0]
        again = key in self._kept or key in self._trial or path in self._seen
        for part in (self._kept, self._trial):
            old = part.pop(key, None)
            if old is not None:
                self.bytes -= len(old.content)
        self._seen[path] = None
        self._seen.move_to_end(path)
        if len(self._seen) > self.seen:
            self._seen.popitem(last=False)
        if len(response.content) > self.size // 4:
            return
        (self._kept if again else self._trial)[key] = response
        self.bytes += len(response.content)
        self._shrink()

    def _shrink(self) -> None:
        """Within the bounds: probation gives way first."""
        while len(self._trial) > self.probation or (self._trial and self.bytes > self.size):
            self.bytes -= len(self._trial.popitem(last=False)[1].content)
        while len(self._kept) > self.count or self.bytes > self.size:
            self.bytes -= len(self._kept.popitem(last=False)[1].content)
