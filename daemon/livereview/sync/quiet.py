"""When to list a repo of a host whose listing costs a request per repo (hosts/per_repo.py).

A repo with a hot MR (human activity within `hot_window_seconds`, or an open job) is
listed every hot cycle. All the others are listed together once per quiet interval (the
sweep, which alone advances the listing's watermark, so no change is skipped). Between
sweeps, the bot's dashboard — one request for every repo — is read at most every hot
cycle and at most `repos` times per quiet interval. Idle, a repo then costs at most two
requests per quiet interval: its listing, and its share of the dashboard reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass
class QuietSchedule:
    quiet: timedelta
    hot: timedelta
    swept_at: datetime | None = None
    feed_at: datetime | None = None

    def _due(self, last: datetime | None, now: datetime, period: timedelta) -> bool:
        # A clock set back (now before the last time) makes it due, rather than wait out
        # the difference.
        return last is None or now < last or now - last >= period

    def sweep_due(self, now: datetime) -> bool:
        return self._due(self.swept_at, now, self.quiet)

    def feed_due(self, now: datetime, repos: int) -> bool:
        return self._due(self.feed_at, now, max(self.hot, self.quiet / max(1, repos)))

    def swept(self, now: datetime) -> None:
        """Every repo was listed: the dashboard has nothing to add until its next turn."""
        self.swept_at = self.feed_at = now

    def fed(self, now: datetime) -> None:
        self.feed_at = now
