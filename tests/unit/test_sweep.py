"""A sweep's feeder (sync/sweep.py): MRs begun out of turn are not begun again, and the sweep
is not done before their reads are; which queued MRs a later cycle begins out of turn."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from livereview.core.model import MRKey
from livereview.sync.sweep import Queued, feed, out_of_turn

KEYS = [MRKey("gl", "acme/widgets", iid) for iid in range(1, 7)]
T0 = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


async def test_an_mr_begun_out_of_turn_is_not_begun_again_and_the_sweep_waits_for_its_read(
        ) -> None:
    queued: Queued = dict.fromkeys(KEYS)
    begun: list[MRKey] = []
    all_begun, gate = asyncio.Event(), asyncio.Event()
    mentioned = KEYS[2]
    del queued[mentioned]  # a later cycle took it out of the queue and began it

    async def read() -> None:
        await gate.wait()

    syncing = {mentioned: asyncio.create_task(read())}

    def start(key: MRKey, in_turn: bool) -> asyncio.Task[None] | None:
        if not in_turn:
            return syncing.get(key)
        begun.append(key)
        if len(begun) == len(KEYS) - 1:
            all_begun.set()
        return asyncio.create_task(asyncio.sleep(0))

    feeder = asyncio.create_task(feed(KEYS, start, 2, queued, lambda: False))
    await asyncio.wait_for(all_begun.wait(), 10)
    assert begun == [key for key in KEYS if key != mentioned]
    await asyncio.wait([feeder], timeout=0)
    assert not feeder.done(), "done before the read begun out of turn was"
    gate.set()
    await asyncio.wait_for(feeder, 10)
    assert queued == {}


def test_a_queued_mr_the_inbox_names_or_the_listing_shows_updated_since_begins_out_of_turn(
        ) -> None:
    queued: Queued = {KEYS[0]: T0, KEYS[1]: T0, KEYS[2]: None, KEYS[3]: T0}
    recency = {KEYS[0]: T0 + timedelta(seconds=1), KEYS[1]: T0, KEYS[2]: T0}
    targets = {*KEYS[:4], KEYS[4]}  # KEYS[4]: not queued (being read, or read already)
    assert out_of_turn(targets, {KEYS[3], KEYS[4]}, recency, queued) == [
        KEYS[0], KEYS[2], KEYS[3]]


@given(st.dictionaries(st.sampled_from(KEYS), st.integers(0, 5)),
       st.dictionaries(st.sampled_from(KEYS), st.integers(0, 5)))
def test_listing_a_sweep_again_as_it_was_queued_begins_none_of_it_out_of_turn(
        queued_at: dict[MRKey, int], later: dict[MRKey, int]) -> None:
    """A watermark dropped (a read failed to store) lists every MR again: those whose update
    is the one they were queued for stay in the sweep's order — thousands begun at once
    would undo the sweep (sync/sweep.py) — and only those updated since begin."""
    listed_at = {key: T0 + timedelta(minutes=at) for key, at in queued_at.items()}
    queued: Queued = dict(listed_at)
    recency = {key: T0 + timedelta(minutes=at) for key, at in later.items()}
    jumped = out_of_turn(set(recency), set(), recency, queued)
    assert set(jumped) == {key for key in recency
                           if key in listed_at and recency[key] > listed_at[key]}
    assert out_of_turn(set(queued), set(), listed_at, queued) == []
