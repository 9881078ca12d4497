"""A sweep's MRs are read in order, a task for each only when its turn comes.

A task per MR made up front waited on the poller's concurrency limit with its coroutine
and closure: ~22 MiB at first sight of 10 000 MRs (bench figure 5), and every sync a later
cycle started (a mention on a hot MR) queued behind all of them. The feeder starts the
next MR as one of its `limit` finishes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from livereview.core.model import MRKey


async def feed(keys: Sequence[MRKey], start: Callable[[MRKey], asyncio.Task[None] | None],
               limit: int, queued: set[MRKey], halted: Callable[[], bool]) -> None:
    """Start `keys` in order with `start` (None: not started, already syncing), at most
    `limit` of them running; `queued` holds those not started yet. Stops starting when
    `halted()`; cancelled, it leaves the started ones running."""
    running: set[asyncio.Task[None]] = set()
    try:
        for key in keys:
            while len(running) >= limit:
                _, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            if halted():
                return
            queued.discard(key)
            task = start(key)
            if task is not None:
                running.add(task)
        if running:
            await asyncio.wait(running)
    finally:
        queued.difference_update(keys)
