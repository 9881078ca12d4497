"""Which listed MRs to read, and in what order (docs/DESIGN.md §6, "First sight").

Pure functions of the listing and what the store knows: the poller does the I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from livereview.core.model import ChangedMR, MRKey


def to_read(host: str, changed: Iterable[ChangedMR],
            marks: dict[MRKey, tuple[datetime, datetime]], sighted: dict[MRKey, datetime],
            baselines: dict[str, datetime], overlap: timedelta
            ) -> tuple[dict[MRKey, datetime], list[tuple[MRKey, datetime]]]:
    """(MRs to read → the listing's updated_at, MRs to keep as sightings only).

    `marks`: per stored MR, (updated_at seen, when it was read); `sighted`: per MR known
    from the listing alone, the updated_at it showed. Notes that did not bump updated_at
    (GitLab throttles it to once a minute) were written within `overlap` after it: a read
    later than updated_at + overlap has them all — and an MR never read whose
    updated_at + overlap is before its repo's baseline holds only notes older than the
    baseline, none of which is ever answered."""
    targets: dict[MRKey, datetime] = {}
    idle: list[tuple[MRKey, datetime]] = []
    for mr in changed:
        key = MRKey(host, mr.repo, mr.iid)
        seen = marks.get(key)
        if seen is None and mr.updated_at + overlap <= baselines[mr.repo]:
            if sighted.get(key) != mr.updated_at:
                idle.append((key, mr.updated_at))
        elif seen is None or seen[0] != mr.updated_at or seen[1] < mr.updated_at + overlap:
            targets[key] = mr.updated_at
    return targets, idle


def by_recency(keys: set[MRKey], recency: dict[MRKey, datetime]) -> list[MRKey]:
    """The order MRs are read in: those not from the listing first (mentions from the
    inbox, open jobs, hot MRs), then the most recently updated: a mention made just before
    a start is read in the first seconds of a sweep of thousands."""
    def order(key: MRKey) -> tuple[bool, float, str]:
        at = recency.get(key)
        return (at is not None, -at.timestamp() if at is not None else 0.0, str(key))
    return sorted(keys, key=order)
