"""MRs whose fetch failed: remembered in the store until a sync works.

The listing watermark moves on when a cycle ends, so an MR whose fetch failed would only be
seen again if it changed again — or within the listing's overlap. Kept here, it is synced
again on later cycles (with backoff) and after a restart, until it works.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlmodel import Session, col, delete, select

from livereview.core.model import MRKey
from livereview.store.tables import MRSyncFailure


def note(session: Session, key: MRKey, reason: str, now: datetime) -> None:
    row = session.exec(select(MRSyncFailure).where(
        MRSyncFailure.host == key.host, MRSyncFailure.repo == key.repo,
        MRSyncFailure.iid == key.iid)).first()
    if row is None:
        row = MRSyncFailure(host=key.host, repo=key.repo, iid=key.iid, failures=0,
                            first_failed_at=now, last_failed_at=now)
    row.failures += 1
    row.last_error, row.last_failed_at = reason[:1000], now
    session.add(row)


def clear(session: Session, host: str, keys: Iterable[MRKey]) -> None:
    for key in keys:
        session.exec(delete(MRSyncFailure).where(
            col(MRSyncFailure.host) == host, col(MRSyncFailure.repo) == key.repo,
            col(MRSyncFailure.iid) == key.iid))


def pending(session: Session, host: str) -> set[MRKey]:
    rows = session.exec(select(MRSyncFailure.repo, MRSyncFailure.iid)
                        .where(MRSyncFailure.host == host))
    return {MRKey(host, repo, iid) for repo, iid in rows}
