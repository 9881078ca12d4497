"""A sweep's MRs are read in order, a task for each only when its turn comes.

A task per MR made up front waited on the poller's concurrency limit with its coroutine
and closure: ~22 MiB at first sight of 10 000 MRs (bench figure 5), and every sync a later
cycle started (a mention on a hot MR) queued behind all of them. The feeder starts the
next MR as one of its `limit` finishes.

An MR a later cycle finds mentioned or changed again while it waits for its turn is begun
by that cycle out of turn (sync/poller.py takes it out of `queued`): a mention during a
first sweep of thousands of MRs waited minutes for the sweep to reach it. When its turn
comes the feeder begins nothing for it, but waits for that read before it counts as done:
the listing that queued it holds its watermark until then (sync/watermark.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import datetime

from livereview.core.model import MRKey

# A queued MR → the listing's updated_at it is queued for (None: not from a listing).
Queued = dict[MRKey, datetime | None]


async def feed(keys: Sequence[MRKey],
               start: Callable[[MRKey, bool], asyncio.Task[None] | None],
               limit: int, queued: Queued, halted: Callable[[], bool]) -> None:
    """Start `keys` in order with `start(key, True)` (None: not started, already syncing),
    at most `limit` of them running; `queued` holds those not started yet. A key taken out
    of `queued` meanwhile was begun out of turn: `start(key, False)` gives its read, if it
    still runs, waited for aside of the limit. Stops starting when `halted()`; cancelled,
    it leaves the started ones running."""
    running: set[asyncio.Task[None]] = set()
    aside: set[asyncio.Task[None]] = set()
    left = 0  # keys[left:] are not reached yet
    try:
        for key in keys:
            while len(running) >= limit:
                _, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            if halted():
                return
            in_turn = key in queued
            queued.pop(key, None)
            left += 1
            task = start(key, in_turn)
            if task is not None:
                (running if in_turn else aside).add(task)
        if running or aside:
            await asyncio.wait(running | aside)
    finally:  # stopped early: those not reached never begin (one reached may be queued
        for key in keys[left:]:  # again by a later cycle's sweep: that entry is its own)
            queued.pop(key, None)


def out_of_turn(targets: Collection[MRKey], inbox: Collection[MRKey],
                recency: Mapping[MRKey, datetime], queued: Queued) -> list[MRKey]:
    """Of a cycle's `targets` (none being read), those an earlier cycle's sweep queued that
    the cycle's mention `inbox` names, or its listing (`recency`) shows updated after the
    update they were queued for: begun now, not when the sweep reaches them."""
    def newer(key: MRKey) -> bool:
        at, queued_for = recency.get(key), queued[key]
        return at is not None and (queued_for is None or at > queued_for)

    return sorted((key for key in targets if key in queued and (key in inbox or newer(key))),
                  key=str)
