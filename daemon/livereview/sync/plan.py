"""What one poll cycle reads, and why: the listing (instance-wide, or per repo on hosts that
list each repo — sync/quiet.py), the host's mention inbox, hot MRs, open jobs, watched
concessions and failed syncs (docs/DESIGN.md §6). The poller (sync/poller.py) reads what
the plan names; this module only decides.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from livereview.core.model import ChangedMR, MergeRequest, MRKey
from livereview.hosts.base import Host, LooksCheaply, PacedInbox
from livereview.hosts.per_repo import ListsEachRepo
from livereview.settings import DaemonSettings
from livereview.store import jobs, sightings, snapshots, sync_failures
from livereview.store import lessons as lesson_rows
from livereview.store.db import Store
from livereview.sync.active import tier_on
from livereview.sync.first_sight import to_read
from livereview.sync.quiet import QuietSchedule


@dataclass
class Plan:
    """What one cycle fetches, and why."""

    targets: set[MRKey] = field(default_factory=set)
    recency: dict[MRKey, datetime] = field(default_factory=dict)  # the listing's updated_at
    listed: int | None = None  # None: the listing did not run this cycle
    inbox: dict[MRKey, list[str]] = field(default_factory=dict)  # mention items to clear
    concessions: dict[MRKey, frozenset[str]] = field(default_factory=dict)  # 👎 to watch
    failed: set[MRKey] = field(default_factory=set)  # fetches that failed, kept in the store
    active: list[MRKey] = field(default_factory=list)  # the active tier's (sync/active.py)
    # MRs never read, as their listing rows show them (hosts/base.py ReadsFromListing): a
    # read takes its own out (sync/mr_syncs.py), so each row is held until its MR is read
    # or the next cycle begins (a row that old is not used: sync/mr_syncs.py `rows`).
    rows: dict[MRKey, MergeRequest] = field(default_factory=dict)


@dataclass
class Planner:
    """One host's planning: which listing runs this cycle, and what it leaves to read."""

    host: Host
    store: Store
    settings: DaemonSettings
    _quiet: QuietSchedule | None = None  # hosts that list each repo (sync/quiet.py)

    async def plan(self, now: datetime, since: datetime | None, cold: bool,
                   watched: set[str], baselines: dict[str, datetime],
                   backoff: dict[MRKey, tuple[int, float]]) -> Plan:
        """The cycle's plan; `backoff` holds, per MR whose sync failed, (failures, the
        monotonic time it may be retried at)."""
        plan = Plan()
        hot_since = now - timedelta(seconds=self.settings.hot_window_seconds)
        hot = await self.store.run(snapshots.active_mrs, self.host.name, hot_since)
        hot |= await self.store.run(jobs.open_mrs, self.host.name)
        if isinstance(self.host, ListsEachRepo):
            await self._list_each_repo(self.host, plan, now, since, watched,
                                       {key.repo for key in hot} & watched, baselines)
        else:
            await self._list(plan, now, since, cold, watched, baselines)
        plan.targets |= hot
        plan.concessions = await self.store.run(lesson_rows.watched_concessions,
                                                self.host.name)
        if cold:  # a 👎 on a concession does not bump the MR: look on the cold cycle
            plan.targets |= set(plan.concessions)
        plan.failed = await self.store.run(sync_failures.pending, self.host.name)
        plan.targets |= plan.failed
        waiting = time.monotonic()
        plan.targets |= {key for key, (_, at) in backoff.items() if at <= waiting}
        plan.targets -= {key for key, (_, at) in backoff.items() if at > waiting}
        plan.targets = {t for t in plan.targets if t.repo in watched}
        if isinstance(self.host, LooksCheaply) and tier_on(self.settings):
            active_since = now - timedelta(seconds=min(self.settings.active_window_seconds,
                                                       self.settings.hot_window_seconds))
            # The most recent first, so the cap keeps the busiest of those this replica
            # watches (few MRs have had people on them in the last minutes).
            plan.active = [key for key in await self.store.run(
                snapshots.most_active, self.host.name, active_since)
                if key.repo in watched][:self.settings.max_active_mrs]
        return plan

    async def changed(self, watched: set[str], since: datetime | None,
                      baselines: dict[str, datetime], now: datetime,
                      rows: dict[MRKey, MergeRequest]) -> tuple[dict[MRKey, datetime], int]:
        """MRs the listing says changed (→ the listing's updated_at), minus those already
        fetched after the change and those idle since before their repo's baseline."""
        listed = await self.host.list_changed_mrs(tuple(sorted(watched)), since)
        return await self.unseen(listed, baselines, now, rows), len(listed)

    async def unseen(self, changed: list[ChangedMR], baselines: dict[str, datetime],
                     now: datetime, rows: dict[MRKey, MergeRequest]
                     ) -> dict[MRKey, datetime]:
        """The listed MRs, minus those already fetched after their change and those idle
        since before their repo's baseline (kept as sightings, not read). The MRs of those
        to read that were never read go into `rows`, where the listing carries them."""
        if not changed:
            return {}
        marks = await self.store.run(snapshots.fetch_marks, self.host.name)
        sighted = await self.store.run(sightings.marks, self.host.name)
        overlap = timedelta(seconds=self.settings.watermark_overlap_seconds)
        targets, idle = to_read(self.host.name, changed, marks, sighted, baselines, overlap)
        if idle:
            await self.store.run(sightings.record, idle, now)
        rows.update((key, mr.mr) for mr in changed if mr.mr is not None
                    and (key := mr.mr.key) in targets and key not in marks)
        return targets

    async def _list(self, plan: Plan, now: datetime, since: datetime | None, cold: bool,
                    watched: set[str], baselines: dict[str, datetime]) -> None:
        # A listing that costs a request per repo runs on the cold cycle only, and the host's
        # mention inbox keeps mentions fast in between. A cheap listing runs every cycle and
        # already sees every mention (the overlap covers GitLab's throttled updated_at), so
        # the inbox would only double the idle cost.
        inbox = self.host.capabilities.mention_inbox and not self.host.listing_is_cheap
        listing = self.host.listing_is_cheap or cold or not inbox
        if isinstance(self.host, PacedInbox):  # the host says which signal this cycle reads
            inbox = self.host.capabilities.mention_inbox and self.host.inbox_due()
            listing = since is None or not inbox or not self.host.listing_is_cheap
        if listing:
            plan.recency, plan.listed = await self.changed(watched, since, baselines, now,
                                                           plan.rows)
            plan.targets = set(plan.recency)
        if inbox:
            plan.inbox = await self.host.mention_inbox(tuple(sorted(watched)))
            plan.targets |= set(plan.inbox)

    async def _list_each_repo(self, host: ListsEachRepo, plan: Plan, now: datetime,
                              since: datetime | None, watched: set[str], hot: set[str],
                              baselines: dict[str, datetime]) -> None:
        """A host whose listing is a request per repo (sync/quiet.py): the repos with a hot
        MR every cycle, all of them in a sweep per quiet interval, the bot's dashboard in
        between."""
        if self._quiet is None:
            self._quiet = QuietSchedule(
                quiet=timedelta(seconds=self.settings.quiet_repo_interval_seconds),
                hot=timedelta(seconds=self.settings.hot_poll_interval_seconds))
        if self._quiet.sweep_due(now):
            plan.recency, plan.listed = await self.changed(watched, since, baselines, now,
                                                           plan.rows)
            plan.targets = set(plan.recency)
            self._quiet.swept(now)
            return
        if hot:  # from the watermark, which only a sweep moves: nothing is skipped
            plan.recency, _ = await self.changed(hot, since, baselines, now, plan.rows)
            plan.targets = set(plan.recency)
        if host.involvement_feed and self._quiet.feed_due(now, len(watched)):
            involved = await self.unseen(await host.involved_mrs(
                tuple(sorted(watched)), since), baselines, now, plan.rows)
            plan.recency.update(involved)
            plan.targets |= set(involved)
            self._quiet.fed(now)
