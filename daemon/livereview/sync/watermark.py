"""When a cycle's listing counts as done: its watermark moves to the cycle's start once every
MR it set out to read is stored (or its failure is, to be retried), and every read an earlier
cycle left running too — so a crash meanwhile loses nothing (docs/DESIGN.md §6).

A tick waits for its reads only part of the hot interval (app/daemon.py TICK_WAIT_SHARE):
what is still being read then goes on in the background, and the watermark moves when it
is done, not at the end of some later cycle that happens to find nothing being read — with
MRs read between cycles by the active tier (sync/active.py) that might never come.

At first sight there is no watermark until the first sweep's reads are all stored: minutes
for thousands of MRs. The cycles meanwhile list from where this process's first complete
listing began (in memory, never stored: a crash or a stop lists everything again), not
from nothing — listing every repo again each hot cycle (a request per repo on GitHub and
Bitbucket) took most of the host's request slots from the sweep and from the mentions
that came meanwhile (bench figure 2d). A read whose storing fails drops that start: the
next cycle lists everything again, as it would have.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from livereview.store import state
from livereview.store.db import Store
from livereview.store.engine import StoreError


@dataclass
class ListingMarks:
    store: Store
    host: str
    _closers: set[asyncio.Task[None]] = field(default_factory=set)
    # Per scope: when this process's first complete listing of it began, and how many
    # reads had failed to store by then (sync/mr_syncs.py counts them).
    _first_listed: dict[str, tuple[datetime, int]] = field(default_factory=dict)

    def listed(self, scopes: Iterable[str], at: datetime, store_failures: int) -> None:
        """A listing of `scopes` that began `at` has every MR it named read or waiting
        for its turn: what changed before `at` is on its way to the store."""
        for scope in scopes:
            self._first_listed.setdefault(scope, (at, store_failures))

    def since(self, scope: str, stored: datetime | None, store_failures: int
              ) -> datetime | None:
        """Where a listing of `scope` may begin: its stored watermark, else — at first
        sight — the start of this process's first complete listing of it, unless a read
        failed to store since (None: list everything)."""
        if stored is not None:
            self._first_listed.pop(scope, None)
            return stored
        first = self._first_listed.get(scope)
        if first is None or first[1] != store_failures:
            self._first_listed.pop(scope, None)
            return None
        return first[0]

    async def advance(self, scopes: Iterable[str], at: datetime) -> None:
        for scope in scopes:
            await self.store.run(state.advance_watermark, self.host, scope, at)

    async def advance_after(self, held: list[asyncio.Task[None]], scopes: tuple[str, ...],
                            at: datetime, still: Callable[[], bool]) -> None:
        """Move the watermarks of `scopes` to `at` now if nothing is `held`, else once all
        of it is done, if `still()` says the listing's reads all got stored then."""
        held = [task for task in held if not task.done()]
        if not held:
            await self.advance(scopes, at)
            return
        closer = asyncio.create_task(self._later(held, scopes, at, still),
                                     name=f"watermark-{self.host}")
        self._closers.add(closer)
        closer.add_done_callback(self._closers.discard)

    async def _later(self, held: list[asyncio.Task[None]], scopes: tuple[str, ...],
                     at: datetime, still: Callable[[], bool]) -> None:
        await asyncio.wait(held)
        if still():
            with contextlib.suppress(StoreError):  # said by the store; a later cycle moves it
                await self.advance(scopes, at)

    def cancel(self) -> None:
        """Stopping: the watermarks stay where they are (the next start lists again)."""
        for closer in self._closers:
            closer.cancel()

    async def settled(self) -> None:
        if self._closers:
            await asyncio.wait(set(self._closers))
