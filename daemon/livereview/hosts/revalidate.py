"""Responses remembered for revalidation with their ETag (`If-None-Match` → 304).

A 304 costs no rate limit on GitHub and saves the body and its parsing on every host, so
idle cycles revalidate what they read. What is remembered is bounded twice: by count, and
by bytes — a long MR's discussions or a whole listing must not stay in memory because they
once came with an ETag.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Literal

import httpx2

# Which GETs of a paginated read are sent conditionally: none, all, or only the first
# page — a listing newest-first, which an idle cycle stops reading after its first page.
# Its later pages are read only when much changed at once (first sight), and remembering
# them would hold the whole listing in memory for nothing.
Revalidate = bool | Literal["first"]

COUNT = 256
BYTES = 16 * 2**20


def revalidated(conditional: Revalidate, pages_read: int) -> bool:
    """Whether the next page (after `pages_read` pages) is sent conditionally."""
    return conditional is True or (conditional == "first" and pages_read == 0)


class ValidatorCache:
    """The last response per URL, least recently used out first."""

    def __init__(self, count: int = COUNT, size: int = BYTES) -> None:
        self.count = count
        self.size = size
        self._responses: OrderedDict[str, httpx2.Response] = OrderedDict()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._responses)

    def get(self, key: str) -> httpx2.Response | None:
        response = self._responses.get(key)
        if response is not None:
            self._responses.move_to_end(key)
        return response

    def remember(self, key: str, response: httpx2.Response) -> None:
        """Keep `response` for `key`. One larger than a quarter of the byte budget is not
        kept: it would push out many small ones."""
        old = self._responses.pop(key, None)
        if old is not None:
            self.bytes -= len(old.content)
        if len(response.content) > self.size // 4:
            return
        self._responses[key] = response
        self.bytes += len(response.content)
        while len(self._responses) > self.count or self.bytes > self.size:
            _, dropped = self._responses.popitem(last=False)
            self.bytes -= len(dropped.content)
