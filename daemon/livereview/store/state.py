"""Small pieces of daemon state: the bot's identity per host and the poll watermarks."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from livereview.model import Identity
from livereview.store.tables import PollWatermark, ProviderIdentity


def save_identity(session: Session, identity: Identity, now: datetime) -> None:
    query = select(ProviderIdentity).where(ProviderIdentity.host == identity.host)
    row = session.exec(query).first()
    if row is None:
        try:
            with session.begin_nested():  # replicas started together race to create it
                row = ProviderIdentity(host=identity.host, user_id="", username="",
                                       checked_at=now)
                session.add(row)
        except IntegrityError:
            row = session.exec(query).one()
    row.user_id, row.username, row.checked_at = identity.user_id, identity.username, now
    session.add(row)


def identity(session: Session, host: str) -> Identity | None:
    row = session.exec(select(ProviderIdentity).where(ProviderIdentity.host == host)).first()
    return Identity(host, row.user_id, row.username) if row else None


def watermark(session: Session, host: str, scope: str, now: datetime) -> PollWatermark:
    """The watermark for a host's listing scope, created (first seen = now) on first use."""
    row = session.exec(
        select(PollWatermark).where(PollWatermark.host == host, PollWatermark.scope == scope)
    ).first()
    if row is None:
        try:
            with session.begin_nested():  # a savepoint: losing a race keeps the transaction
                row = PollWatermark(host=host, scope=scope, first_seen_at=now)
                session.add(row)
        except IntegrityError:  # another replica created it meanwhile: that one counts
            row = session.exec(select(PollWatermark).where(
                PollWatermark.host == host, PollWatermark.scope == scope)).one()
    return row


def first_seen(
    session: Session, host: str, repos: tuple[str, ...], now: datetime
) -> dict[str, datetime]:
    """Per repo, when the daemon first saw it (recorded now for a repo new to it). One
    query for the repos already seen: this runs every cycle, for every watched repo."""
    seen = {row.scope: row.first_seen_at for row in session.exec(select(PollWatermark).where(
        PollWatermark.host == host, col(PollWatermark.scope).in_(repos)))}
    return {repo: seen[repo] if repo in seen else watermark(session, host, repo, now)
            .first_seen_at for repo in repos}


def advance_watermark(session: Session, host: str, scope: str, listed_until: datetime) -> None:
    row = watermark(session, host, scope, listed_until)
    if row.listed_until is None or listed_until > row.listed_until:
        row.listed_until = listed_until
        session.add(row)


def listings(session: Session) -> dict[str, dict[str, datetime | None]]:
    """Per host, every listing scope's last success (None: not one yet), for `health`.
    The per-repo rows `first_seen` keeps are among them, never listed."""
    result: dict[str, dict[str, datetime | None]] = {}
    for row in session.exec(select(PollWatermark)):
        result.setdefault(row.host, {})[row.scope] = row.listed_until
    return result
