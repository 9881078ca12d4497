"""What is remembered for revalidation stays within its count and its bytes."""

from __future__ import annotations

import gzip
import json

import httpx2
from hypothesis import given
from hypothesis import strategies as st

from livereview.hosts.revalidate import ValidatorCache, keeping, revalidated


def response(size: int) -> httpx2.Response:
    return httpx2.Response(200, headers={"ETag": '"x"'}, content=b"x" * size)


def test_least_recently_used_goes_first_when_the_bytes_run_out() -> None:
    cache = ValidatorCache(count=10, size=4_000)
    for key in "abcd":
        cache.remember(key, response(1_000))
    assert cache.get("a") is not None  # a is now the most recently used
    cache.remember("e", response(1_000))
    assert cache.get("b") is None and cache.get("a") is not None
    assert cache.bytes == 4_000 and len(cache) == 4


def test_a_response_over_a_quarter_of_the_budget_is_not_kept_and_drops_the_old_one() -> None:
    cache = ValidatorCache(count=10, size=4_000)
    cache.remember("a", response(100))
    cache.remember("a", response(1_001))
    assert cache.get("a") is None and cache.bytes == 0


def test_the_counts_bound_it_too() -> None:
    cache = ValidatorCache(count=2, size=10**6, probation=2)
    for key in "abc":
        cache.remember(key, response(1))
    assert len(cache) == 2 and cache.get("a") is None
    for key in "bc":
        assert cache.get(key) is not None  # read again: kept
    cache.remember("a", response(1))  # seen before: kept, the least recently used goes
    assert len(cache) == 2 and cache.get("b") is None


def test_urls_read_once_give_way_to_the_ones_every_cycle_reads() -> None:
    """First sight of thousands of MRs must not push out the listings an idle cycle
    revalidates (they would all be full, rate-limited requests again)."""
    cache = ValidatorCache(count=100, size=10**6, probation=10, seen=100_000)
    listings = [f"/repos/r{n}/pulls" for n in range(50)]
    for key in listings:
        cache.remember(key, response(10))
    for key in listings:  # the next cycle: all evicted from probation but the last ten
        if cache.get(key) is None:
            cache.remember(key, response(10))  # seen before: kept from now on
    for n in range(5_000):  # a first sight
        cache.remember(f"/mr/{n}", response(10))
    assert all(cache.get(key) is not None for key in listings)
    assert len(cache) == 50 + 10


def test_a_new_url_of_a_path_read_before_is_kept_at_once() -> None:
    """GitHub's comment lists move their `since` every ten minutes: the new URL of a list
    read every cycle must not wait on probation (and be pushed out, and paid for again)."""
    cache = ValidatorCache(count=100, size=10**6, probation=1)
    old = cache.key("/repos/a/b/issues/comments", {"since": "2026-11-24T10:20:00Z"})
    new = cache.key("/repos/a/b/issues/comments", {"since": "2026-11-24T10:30:00Z"})
    cache.remember(old, response(10))
    cache.remember(new, response(10))
    for n in range(10):  # first sights push the probation queue along
        cache.remember(f"/mr/{n}", response(10))
    assert cache.get(new) is not None


@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 1_500)), max_size=60))
def test_bytes_are_counted_exactly_and_stay_within_the_budget(
        writes: list[tuple[str, int]]) -> None:
    cache = ValidatorCache(count=3, size=4_000, probation=2)
    for key, size in writes:
        cache.remember(key, response(size))
        if size % 3 == 0:  # read again now and then
            cache.get(key)
        held = cache.held()
        assert cache.bytes == sum(len(r.content) for r in held.values()) <= 4_000
        assert len(cache) == len(held) <= 3 + 2


def test_a_listing_revalidates_its_first_page_only() -> None:
    assert [revalidated("first", n) for n in range(3)] == [True, False, False]
    assert [revalidated(True, n) for n in range(2)] == [True, True]
    assert not revalidated(False, 0)


REQUEST = httpx2.Request("GET", "https://git.example.com/api/v4/merge_requests")


def _json(body: object, **headers: str) -> httpx2.Response:
    return httpx2.Response(200, headers={"ETag": '"e"', **headers},
                           content=json.dumps(body).encode(), request=REQUEST)


def test_keeping_remembers_only_the_fields_a_listing_reads() -> None:
    big = {"number": 7, "updated_at": "2026-01-01T00:00:00Z", "body": "x" * 10_000,
           "head": {"repo": {"name": "r" * 1_000}}}
    kept = keeping("number", "updated_at")(_json([big, big], Link='<https://h/?page=2>; '
                                                              'rel="next"'))
    assert kept.json() == [{"number": 7, "updated_at": "2026-01-01T00:00:00Z"}] * 2
    assert len(kept.content) < 200
    assert kept.headers["ETag"] == '"e"' and "page=2" in kept.headers["Link"]


def test_keeping_a_paged_object_keeps_its_other_keys() -> None:
    page = {"values": [{"id": 3, "updated_on": "t", "description": "d" * 5_000}],
            "next": "https://api.bitbucket.org/2.0/x?page=2", "pagelen": 50}
    kept = keeping("id", "updated_on", items="values")(_json(page))
    assert kept.json() == {"values": [{"id": 3, "updated_on": "t"}],
                           "next": "https://api.bitbucket.org/2.0/x?page=2", "pagelen": 50}


@given(st.one_of(st.binary(max_size=50), st.just(b"{}"), st.just(b"[1, 2]"),
                 st.just(b'{"values": 3}'), st.just(b'[{"number": 1}, "x"]')))
def test_a_body_of_another_shape_is_remembered_as_it_came(content: bytes) -> None:
    response = httpx2.Response(200, headers={"ETag": '"e"'}, content=content)
    assert keeping("number")(response) is response
    assert keeping("id", items="values")(response) is response


def test_a_compressed_answer_is_remembered_decoded_without_its_encoding_headers() -> None:
    raw = json.dumps([{"number": 1, "body": "b"}]).encode()
    response = httpx2.Response(200, headers={"ETag": '"e"', "Content-Encoding": "gzip"},
                               content=gzip.compress(raw), request=REQUEST)
    kept = keeping("number")(response)
    assert "content-encoding" not in kept.headers and kept.json() == [{"number": 1}]
