"""The host client's request slots, with a lane for what a person is waiting for.

A host takes `max_concurrent_requests` requests at once. At first sight, or on a cold cycle
that lists each repository, hundreds of listing requests wait for those slots; the 👀 on a
question just asked, and the active tier's look at the MR people are busy on
(sync/active.py), would wait behind all of them (bench figure 2d). Code that runs
`urgent()` — and the tasks it starts, which inherit it — takes the next free slot before
any ordinary request waiting. Nothing is dropped or reordered within a lane.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Iterator
from contextvars import ContextVar

_URGENT: ContextVar[bool] = ContextVar("livereview_urgent_requests", default=False)


@contextlib.contextmanager
def urgent() -> Iterator[None]:
    """Requests made in this block, and by the tasks it starts, go first."""
    token = _URGENT.set(True)
    try:
        yield
    finally:
        _URGENT.reset(token)


class Lanes:
    """At most `limit` holders at once; a slot that frees goes to the oldest urgent waiter,
    else to the oldest ordinary one."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.busy = 0
        self._waiting: dict[bool, deque[asyncio.Future[None]]] = {True: deque(),
                                                                  False: deque()}

    async def __aenter__(self) -> None:
        if self.busy < self.limit:
            self.busy += 1
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[_URGENT.get()].append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # handed the slot just now: pass it on
                self._release()
            raise

    async def __aexit__(self, *_: object) -> None:
        self._release()

    def _release(self) -> None:
        for lane in (True, False):
            waiting = self._waiting[lane]
            while waiting:
                turn = waiting.popleft()
                if not turn.done():  # a waiter cancelled meanwhile has no turn
                    turn.set_result(None)  # the slot passes on: `busy` stays
                    return
        self.busy -= 1
