"""The host client's request slots (hosts/lanes.py): what a person waits for goes first, and
no slot is lost to a waiter that gave up. Event order only, never times."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from livereview.hosts.lanes import Lanes, urgent


async def _take(lanes: Lanes, name: str, order: list[str], gate: asyncio.Event,
                *, first: bool = False) -> None:
    if first:
        with urgent():
            async with lanes:
                order.append(name)
                await gate.wait()
        return
    async with lanes:
        order.append(name)
        await gate.wait()


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_an_urgent_request_takes_the_next_slot_before_ordinary_ones_waiting_longer(
        ) -> None:
    lanes, order, gate = Lanes(1), list[str](), asyncio.Event()
    holder = asyncio.create_task(_take(lanes, "listing-1", order, gate))
    await _settle()
    waiting = [asyncio.create_task(_take(lanes, f"listing-{n}", order, gate))
               for n in (2, 3)]
    await _settle()
    look = asyncio.create_task(_take(lanes, "look", order, gate, first=True))
    await _settle()
    gate.set()
    await asyncio.gather(holder, *waiting, look)
    assert order == ["listing-1", "look", "listing-2", "listing-3"]
    assert lanes.busy == 0


async def test_a_waiter_cancelled_in_line_gives_its_turn_to_the_next() -> None:
    lanes, order, gate = Lanes(1), list[str](), asyncio.Event()
    holder = asyncio.create_task(_take(lanes, "a", order, gate))
    await _settle()
    gone = asyncio.create_task(_take(lanes, "gone", order, gate, first=True))
    after = asyncio.create_task(_take(lanes, "b", order, gate))
    await _settle()
    gone.cancel()
    gate.set()
    await asyncio.gather(holder, after)
    assert order == ["a", "b"] and gone.cancelled() and lanes.busy == 0


@given(st.integers(1, 4), st.lists(st.booleans(), min_size=1, max_size=12))
def test_never_more_than_the_limit_at_once_and_every_slot_comes_back(
        limit: int, urgency: list[bool]) -> None:
    async def run() -> tuple[int, int]:
        lanes, most, gate = Lanes(limit), [0], asyncio.Event()

        async def one(first: bool) -> None:
            if first:
                with urgent():
                    await hold()
            else:
                await hold()

        async def hold() -> None:
            async with lanes:
                most[0] = max(most[0], lanes.busy)
                await gate.wait()

        tasks = [asyncio.create_task(one(u)) for u in urgency]
        await _settle()
        gate.set()
        await asyncio.gather(*tasks)
        return most[0], lanes.busy

    most, left = asyncio.run(run())
    assert most <= limit and left == 0
