"""Generative tests' tools: a host answering from seed payloads over httpx2.MockTransport,
one route of which answers a mutated copy — fields removed, wrong types, nulls, huge
numbers, HTML, truncated or empty bodies.

Mutations aim at the fields the adapters read (found in their source, so the list follows
the code) more often than at the many fields they ignore.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx2
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import livereview.hosts as hosts_package
from livereview.hosts.base import HostError
from livereview.hosts.http import HttpClient, RetryPolicy
from livereview.metrics import Metrics
from tests.hypothesis_tiers import examples

# Modest: every property runs an adapter call per example (CI has two cores); the fast tier
# runs a fifth of them (tests/hypothesis_tiers.py).
FUZZ = settings(max_examples=examples(100), deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_ACCESSOR = re.compile(r"\.(?:text|text_or|token|number|number_or_none|flag|time|"
                       r"time_or_none|obj|obj_or_none|objects|texts|has|error)\(\s*\"(\w+)\"")
# every module of the host layer, each host's folder included (docs/DESIGN.md §2)
READ_KEYS = frozenset(
    key for source in Path(hosts_package.__file__).parent.rglob("*.py")
    for key in _ACCESSOR.findall(source.read_text(encoding="utf-8")))

Path_ = tuple[str | int, ...]


def paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every key and index path in `value` (the first three items of each list)."""
    found: list[Path_] = []
    items = (value.items() if isinstance(value, dict)
             else enumerate(value[:3]) if isinstance(value, list) else ())
    for key, child in items:
        found.append((*prefix, key))
        found += paths(child, (*prefix, key))
    return found


WRONG = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=2**63, max_value=2**90),
    st.floats(), st.text(max_size=8), st.just([]), st.just({}), st.just([{}]),
    st.sampled_from(["<html>", "", "../../admin", "2024-13-45T99:99:99Z", "12", "Bot"]))


@st.composite
def field_mutations(draw: st.DrawFn, seed: Any) -> Any:
    """`seed` with one to three fields removed or given a wrong value."""
    data = copy.deepcopy(seed)
    every = paths(data)
    read = [p for p in every if isinstance(p[-1], str) and p[-1] in READ_KEYS]
    if not every:
        return draw(WRONG)
    for _ in range(draw(st.integers(1, 3))):
        from_read = draw(st.integers(0, 4)) if read else 0  # mostly a field a parser reads
        where = draw(st.sampled_from(read) if from_read else st.sampled_from(every))
        parent = data
        try:
            for key in where[:-1]:
                parent = parent[key]
            if isinstance(parent, dict) and draw(st.booleans()):
                parent.pop(where[-1], None)
            else:
                parent[where[-1]] = draw(WRONG)
        except (KeyError, IndexError, TypeError):  # an earlier mutation moved it
            continue
    return data


def bodies(seed: Any) -> st.SearchStrategy[bytes]:
    """What a broken host may send instead of `seed`'s JSON."""
    text = json.dumps(seed).encode()
    return st.one_of(
        field_mutations(seed).map(lambda value: json.dumps(value).encode()),
        st.integers(0, max(0, len(text) - 1)).map(lambda cut: text[:cut]),
        st.sampled_from([b"", b"<html><body>502 Bad Gateway</body></html>", b"null", b"[]",
                         b"{}", b'"a string"', b"1e999", b"[" * 5000, b"\xff\xfe"]),
        WRONG.map(lambda value: json.dumps(value).encode()))


@dataclass
class Route:
    method: str
    pattern: str  # searched in the request's path (%-encoded)
    payload: Any  # JSON, or str for a raw text body
    status: int = 200
    asks: str = ""  # the request body must contain this (GraphQL: the operation)


class Host:
    """Answers each request from the first matching route; `broken` answers `body`."""

    def __init__(self, routes: Sequence[Route], broken: int, body: bytes) -> None:
        self.routes, self.broken, self.body = routes, broken, body

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.raw_path.decode().split("?")[0]  # still %-encoded, as sent
        for number, route in enumerate(self.routes):
            if (request.method == route.method and re.search(route.pattern, path)
                    and route.asks.encode() in request.content):
                if number == self.broken:
                    return httpx2.Response(route.status, content=self.body, headers={
                        "Content-Type": "application/json"})
                if isinstance(route.payload, str):
                    return httpx2.Response(route.status, text=route.payload)
                return httpx2.Response(route.status, json=route.payload)
        return httpx2.Response(404, json={"message": "404 Not Found"})


def client(base_url: str, host_type: str, handler: Host) -> HttpClient:
    return HttpClient(base_url=base_url, headers={}, host_type=host_type, metrics=Metrics(),
                      retry=RetryPolicy(attempts=1), transport=httpx2.MockTransport(handler))


def outcome(call: Callable[[], Awaitable[object]], expected: type | tuple[type, ...]) -> str:
    """Run one adapter call: its result must be a model object, its failure a HostError;
    anything else propagates and fails the property. Returns which it was."""
    async def run() -> str:
        try:
            result = await call()
        except HostError:
            return "host error"
        assert isinstance(result, expected), f"{type(result).__name__}: {result!r}"[:300]
        return "result"

    return asyncio.run(run())


def broken_routes(routes: Sequence[Route], used: Sequence[int]) -> st.SearchStrategy[
        tuple[int, bytes]]:
    """Which of the `used` routes breaks, and what it answers."""
    return st.sampled_from(used).flatmap(
        lambda number: bodies(routes[number].payload).map(lambda body: (number, body)))

T = TypeVar("T")


async def collect(items: AsyncIterator[T]) -> list[T]:
    """An async generator's items (diff_files), as one awaitable for `outcome`."""
    return [item async for item in items]
