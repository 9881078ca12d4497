"""What is remembered for revalidation stays within its count and its bytes."""

from __future__ import annotations

import httpx2
from hypothesis import given
from hypothesis import strategies as st

from livereview.hosts.revalidate import ValidatorCache, revalidated


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


def test_the_count_bounds_it_too() -> None:
    cache = ValidatorCache(count=2, size=10**6)
    for key in "abc":
        cache.remember(key, response(1))
    assert len(cache) == 2 and cache.get("a") is None


@given(st.lists(st.tuples(st.sampled_from("abcdefgh"), st.integers(0, 1_500)), max_size=60))
def test_bytes_are_counted_exactly_and_stay_within_the_budget(
        writes: list[tuple[str, int]]) -> None:
    cache = ValidatorCache(count=5, size=4_000)
    for key, size in writes:
        cache.remember(key, response(size))
        kept = [cache.get(k) for k in "abcdefgh"]
        assert cache.bytes == sum(len(r.content) for r in kept if r is not None) <= 4_000
        assert len(cache) <= 5


def test_a_listing_revalidates_its_first_page_only() -> None:
    assert [revalidated("first", n) for n in range(3)] == [True, False, False]
    assert [revalidated(True, n) for n in range(2)] == [True, True]
    assert not revalidated(False, 0)
