"""The active tier's reads between hot cycles (docs/DESIGN.md §6): the MRs its look finds
changed (sync/active.py) begin syncing (sync/mr_syncs.py) with what the last hot cycle
read them with — its baselines and the 👎 on concessions it watched. A hot cycle chooses
the tier and hands these on; its listing is held up by none of these reads (they are of
MRs the hot cycle reads anyway: sync/watermark.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from livereview.core.model import MRKey
from livereview.hosts.lanes import urgent
from livereview.sync.active import ActiveTier
from livereview.sync.cycle_report import CycleReport
from livereview.sync.mr_syncs import MRSyncs
from livereview.sync.plan import Plan


@dataclass
class ActiveReads:
    """One host's active tier (None: the host has none) and the reads its looks begin."""

    tier: ActiveTier | None
    syncs: MRSyncs
    baselines: dict[str, datetime] = field(default_factory=dict)  # the last cycle's
    # The 👎 on concessions the last cycle watched: a read between cycles reads them too, or
    # the stored reactions would come and go.
    concessions: dict[MRKey, frozenset[str]] = field(default_factory=dict)
    glancing: set[MRKey] = field(default_factory=set)  # syncs the active tier began

    @property
    def keys(self) -> tuple[MRKey, ...]:
        """The MRs in the active tier, as the last hot cycle chose them."""
        return () if self.tier is None else self.tier.keys

    def seen(self, baselines: dict[str, datetime],
             concessions: dict[MRKey, frozenset[str]]) -> None:
        """A hot cycle planned with these: the reads between cycles use them too."""
        self.baselines, self.concessions = baselines, concessions

    def choose(self, keys: Sequence[MRKey]) -> None:
        if self.tier is not None:
            self.tier.choose(keys)

    def read_failed(self, key: MRKey) -> None:
        if self.tier is not None:  # what its last look saw is not stored (sync/active.py)
            self.tier.read_failed(key)

    async def glance(self) -> int:
        """The active tier's look (sync/active.py), every `active_poll_interval_seconds`:
        the active MRs that changed begin syncing, as tasks not waited for — one MR's
        reads never overlap (one being read is not looked at) and a slow one holds up no
        look. Returns how many began."""
        if self.tier is None or self.syncs.halted or not self.tier.keys:
            return 0

        def busy(key: MRKey) -> bool:
            return key not in self.keys or self.syncs.taken(key)

        with urgent():  # the look and the reads it begins (hosts/lanes.py)
            changed = await self.tier.changed(busy)
            keys = [] if self.syncs.halted else [
                key for key in changed if not busy(key) and key.repo in self.baselines]
            report = CycleReport(planned=len(keys))
            for key in keys:
                self._glance_at(key, report)
        return len(keys)

    def _glance_at(self, key: MRKey, report: CycleReport) -> None:
        self.glancing.add(key)
        task = self.syncs.start(key, self.baselines[key.repo], report,
                                Plan(concessions=self.concessions))
        task.add_done_callback(lambda _: self.glancing.discard(key))
