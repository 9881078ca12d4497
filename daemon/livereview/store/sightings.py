"""MRs known from the listing alone (docs/DESIGN.md, "First sight").

On first sight of a repo, an MR whose last activity is older than the repo's baseline
holds nothing the daemon may answer (every note in it is older than the baseline), so it
is not read: its listing row is kept here instead, and the MR is read — in full, as a first
sight — once the listing shows a newer `updated_at`. Reading it and storing the snapshot
removes the row.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import bindparam, insert
from sqlmodel import Session, col, delete, select

from livereview.core.model import MRKey
from livereview.store.tables import MRSighting

CHUNK = 1_000  # rows per INSERT: well within SQLite's and PostgreSQL's parameter limits


def marks(session: Session, host: str) -> dict[MRKey, datetime]:
    """Per MR of `host` known from the listing alone: the `updated_at` it showed."""
    rows = session.exec(select(MRSighting.repo, MRSighting.iid, MRSighting.updated_at)
                        .where(MRSighting.host == host))
    return {MRKey(host, repo, iid): updated for repo, iid, updated in rows}


def record(session: Session, seen: Iterable[tuple[MRKey, datetime]], now: datetime) -> None:
    """Keep (or move on) the listing's `updated_at` of each MR in `seen`: one Core insert
    for the new ones (first sight of 10 000 MRs adds ~10 000 rows at once)."""
    wanted = dict(seen)
    if not wanted:
        return
    hosts = {key.host for key in wanted}
    existing = {MRKey(row.host, row.repo, row.iid): row for row in session.exec(
        select(MRSighting).where(col(MRSighting.host).in_(hosts)))}
    new = [{"host": key.host, "repo": key.repo, "iid": key.iid, "updated_at": updated,
            "seen_at": now} for key, updated in wanted.items() if key not in existing]
    for key, updated in wanted.items():
        row = existing.get(key)
        if row is not None and row.updated_at != updated:
            row.updated_at, row.seen_at = updated, now
            session.add(row)
    for start in range(0, len(new), CHUNK):
        session.execute(insert(MRSighting), new[start:start + CHUNK])


_FORGET = delete(MRSighting).where(
    col(MRSighting.host) == bindparam("host"), col(MRSighting.repo) == bindparam("repo"),
    col(MRSighting.iid) == bindparam("iid"))


def forget(session: Session, key: MRKey) -> None:
    """The MR has been read and stored: the stored snapshot speaks for it now. Through
    Core: the ORM's bulk delete costs several times as much, once per MR read."""
    session.connection().execute(_FORGET, {"host": key.host, "repo": key.repo,
                                           "iid": key.iid})
