"""The active tier (docs/DESIGN.md §6): the MRs people are busy on, looked at between hot
cycles.

A mention arriving at a random time waits for the poller's next look: with the 3 s hot cycle
alone, the 95th percentile of that wait is 2.85 s before any work (bench figure 2d). On a
host that can tell with one cheap request whether an MR changed (`LooksCheaply`: GitHub's
ETag, a 304 costing no rate limit), the up to `max_active_mrs` MRs with human activity
within `active_window_seconds` are looked at every `active_poll_interval_seconds` and read
only when they changed. The hot cycle chooses them (sync/plan.py) and still reads every hot
MR in full, so a change the look cannot see (an edited comment) waits one hot cycle at most.
With no MR active the tier makes no request and no query: idle cost is the hot cycle's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from livereview.core.model import MRKey
from livereview.hosts.base import HostError, LooksCheaply
from livereview.metrics import Metrics
from livereview.settings import DaemonSettings


def tier_on(settings: DaemonSettings) -> bool:
    """Whether there is an active tier: some MRs may be in it, and it looks more often than
    the hot cycle reads."""
    return settings.max_active_mrs > 0 and (
        settings.active_poll_interval_seconds < settings.hot_poll_interval_seconds)


@dataclass
class ActiveTier:
    """One host's active MRs (as the last hot cycle chose them) and the look at them."""

    host: LooksCheaply
    name: str  # the host's configured name (the metric's label)
    metrics: Metrics
    keys: tuple[MRKey, ...] = ()

    def choose(self, keys: Sequence[MRKey]) -> None:
        self.keys = tuple(keys)

    def read_failed(self, key: MRKey) -> None:
        """A read of `key` (the look's or the hot cycle's) failed: its next look says
        "changed" — the look's last answer was never stored."""
        self.host.forget_look(key)

    async def changed(self, skip: Callable[[MRKey], bool]) -> list[MRKey]:
        """Of the active MRs not `skip`ped (being read, or waiting out a failure), those
        the host says changed, each looked at with one request, all at once (the host's
        client bounds how many are in flight). A look that fails says "read it": the read
        then fails too, is logged once and backs off (sync/mr_syncs.py)."""
        looked = [key for key in self.keys if not skip(key)]
        answers = await asyncio.gather(*(self._look(key) for key in looked))
        return [key for key, changed in zip(looked, answers, strict=True) if changed]

    async def _look(self, key: MRKey) -> bool:
        try:
            changed = await self.host.mr_changed(key)
        except HostError:
            changed = True
        self.metrics.active_looks.labels(self.name, "changed" if changed else "unchanged").inc()
        return changed
