"""What the operator commands `health`, `pending` and `conversation` read from the store,
read-only: the database is opened, never created or written (docs/DESIGN.md §7). The faces
only render what these return.

`health` and `pending` read a SQLite store with the standard library (store/reads.py), so
that a command run in a loop starts without the ORM; PostgreSQL is read through it
(a server install, where the ORM's start-up is not the cost that matters).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING

from livereview.core.model import Identity, JobState, Message, MRKey, Snapshot
from livereview.settings import DaemonSettings, Settings
from livereview.store.faults import StoreMissing
from livereview.store.reads import PendingJob, PendingRun, Reader, one_shard, sqlite_path

if TYPE_CHECKING:  # the ORM is imported where it is used: not by `health` or `pending`
    from livereview.store.db import Store
    from livereview.store.tables import EventRow, ReplyJobRow

# A host's stalest poll shard: its scope, the shard's repos, its last successful listing,
# and whether that shard is new since the repo set changed.
Shard = tuple[str, tuple[str, ...], datetime | None, bool]


class UnknownMR(ValueError):
    """The URL names no watched host, or the MR was never polled."""


def open_reader(settings: DaemonSettings) -> Store:
    """The database for a command that only reads: never created, never written."""
    from livereview.store.db import Store

    return Store.open_existing(settings.database_url, settings.busy_timeout_seconds)


def _plain_reader(settings: DaemonSettings) -> Reader | None:
    """The SQLite store opened without the ORM; None when the URL is not a plain SQLite
    file's (store/reads.py)."""
    path = sqlite_path(settings.database_url)
    return None if path is None else Reader.open(path, settings.busy_timeout_seconds)


def stalest(listed: dict[str, datetime | None], split: dict[str, tuple[str, ...]]) -> Shard:
    """Judged by the stalest shard, not the freshest: one shard nobody polls any more is
    enough to be unhealthy. Scopes of a former repo set are not judged (nobody polls them
    again); a shard of the current set not listed yet counts from the host's last success
    under the former set, so a repo set change is not a failure until that is max-age old."""
    former = [at for scope, at in listed.items() if scope not in split and at is not None]
    judged: list[Shard] = [(scope, repos, listed.get(scope) or max(former, default=None),
                            listed.get(scope) is None) for scope, repos in split.items()]
    return min(judged, key=lambda j: (j[2] is not None, j[2] or datetime.min.replace(
        tzinfo=UTC), j[0]))


def last_success(settings: Settings) -> dict[str, Shard]:
    """Each host's stalest shard; empty when nothing was polled yet (and a health check
    must not create the database)."""
    try:
        reader = _plain_reader(settings.daemon)
    except StoreMissing:
        return {}
    if reader is not None:
        with reader:
            listed = reader.listings()
        return {h.name: stalest(listed.get(h.name, {}), one_shard(settings.repos_of(h.name)))
                for h in settings.hosts}
    from livereview.store import state
    from livereview.store.leases import poll_scopes

    try:
        store = open_reader(settings.daemon)
    except StoreMissing:
        return {}
    try:
        listed = store.transaction(state.listings)
        return {h.name: stalest(listed.get(h.name, {}),
                                poll_scopes(store, settings.repos_of(h.name)))
                for h in settings.hosts}
    finally:
        store.close()


def pending(settings: Settings, *, include_replied: bool, repo: str | None
            ) -> tuple[list[PendingJob], list[PendingRun]]:
    """The reply jobs still open or failed (every job with `include_replied`), and the
    review runs still open or given up, of one repo or all. Raises StoreMissing when nothing
    was polled yet."""
    states = None if include_replied else (
        [s.value for s in JobState if s.open] + [JobState.FAILED.value])
    reader = _plain_reader(settings.daemon)
    if reader is not None:
        with reader:
            return reader.jobs(states=states, repo=repo), reader.unfinished(repo)
    from livereview.store import jobs, reviews

    store = open_reader(settings.daemon)
    try:
        rows = store.transaction(jobs.listing, states=states, repo=repo)
        runs = store.transaction(reviews.unfinished, repo=repo)
    finally:
        store.close()
    return ([PendingJob(r.key, r.host, r.repo, r.iid, r.reason, r.state, r.attempts,
                        r.last_error, r.comment_created_at, r.next_attempt_at) for r in rows],
            [PendingRun(r.key, r.host, r.repo, r.iid, r.trigger, r.state, r.attempts,
                        r.last_error, r.created_at, r.next_attempt_at) for r in runs])


@dataclass(frozen=True)
class Graph:
    snapshot: Snapshot
    identity: Identity | None
    events: list[EventRow]
    jobs: list[ReplyJobRow]
    ack_reaction: str = "eyes"

    @cached_property
    def _acked(self) -> frozenset[str]:
        return frozenset(j.host_message_id for j in self.jobs if j.acked_at is not None)

    def reactions(self, message: Message) -> list[dict[str, str]]:
        """The message's reactions, plus the bot's ack where its reply job acked: GitLab's
        discussions carry no award emoji, so the snapshot alone shows none."""
        shown = [{"name": r.name, "user": r.user.username}
                 | ({"at": r.created_at.isoformat()} if r.created_at else {})
                 for r in message.reactions]
        bot = self.identity.username if self.identity else "bot"
        if self.ack_reaction and message.id in self._acked and not any(
                r.name == self.ack_reaction and r.user.username == bot
                for r in message.reactions):
            shown.append({"name": self.ack_reaction, "user": bot, "source": "reply job"})
        return shown


def load(store: Store, key: MRKey, ack_reaction: str = "eyes") -> Graph:
    from livereview.store import jobs, snapshots, state

    snapshot = store.transaction(snapshots.load, key)
    if snapshot is None:
        raise UnknownMR(f"{key}: not in the store yet (has `livereview once` or `run` "
                        "polled it?)")
    return Graph(snapshot, store.transaction(state.identity, key.host),
                 store.transaction(snapshots.events_of, key),
                 store.transaction(jobs.listing, mr=key), ack_reaction)


def conversation(settings: Settings, key: MRKey) -> Graph:
    """The stored graph of one MR. Raises StoreMissing when nothing was polled yet, and
    UnknownMR when this MR was not."""
    from livereview.hosts.reactions import ack_reaction

    store = open_reader(settings.daemon)
    try:
        host_type = next((h.type for h in settings.hosts if h.name == key.host), "")
        return load(store, key, ack_reaction(host_type, settings.bot.ack_reaction))
    finally:
        store.close()
