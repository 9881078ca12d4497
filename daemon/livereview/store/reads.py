"""The store as `health`, `pending` and `mr comments` read it, with the standard library's
sqlite3 and no ORM (docs/DESIGN.md §7, "Reading without the ORM"): a command run in a loop
by an agent or a container's health check starts without SQLAlchemy, SQLModel and the 22
table classes.

Only a SQLite file named by a plain `sqlite:///PATH` URL is read this way; PostgreSQL, and
a SQLite URL with a query or percent-escapes, take the ORM path (tools/status.py). Like
`Store.open_existing`, the file is opened, never created or written (`query_only`), and a
schema that is not this version's is the same one line (store/faults.py). Each query here
has its ORM twin (state.listings, jobs.listing, reviews.unfinished, replied.replied_in);
tests/unit/test_store_reads.py holds the two equal on one store.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import quote

from livereview.core.model import MRKey
from livereview.core.model_runs import ReviewState
from livereview.store.faults import (
    StoreCorrupt,
    StoreError,
    StoreMissing,
    damaged,
    judge_schema,
    read_only_hint,
)
from livereview.store.replied_marks import JobMark, Replied, ToolMark, fold, job_key_range

INSTANCE = "*"  # the watermark scope of a host's one shard (what a single process uses)
# What SQLAlchemy's make_url reads as the path itself: no query, fragment or %-escape.
_PLAIN_SQLITE = re.compile(r"sqlite(?:\+pysqlite)?:///([^?#%]+)")


@dataclass(frozen=True)
class PendingJob:
    """A reply job as `pending` and the console show it."""

    key: str
    host: str
    repo: str
    iid: int
    reason: str
    state: str
    attempts: int
    last_error: str
    comment_created_at: datetime
    next_attempt_at: datetime


@dataclass(frozen=True)
class PendingRun:
    """A review run as `pending` and the console show it."""

    key: str
    host: str
    repo: str
    iid: int
    trigger: str
    state: str
    attempts: int
    last_error: str
    created_at: datetime
    next_attempt_at: datetime


def sqlite_path(url: str) -> Path | None:
    """The file of a plain `sqlite:///PATH` URL (the one SQLAlchemy would open); None for
    any other URL, which the ORM path reads."""
    found = _PLAIN_SQLITE.fullmatch(url)
    if found is None or found[1] == ":memory:":
        return None
    return Path(found[1])


def one_shard(repos: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """SQLite is one process: a host's polls are one shard, scope "*", whatever the repos
    (store/leases.py `poll_scopes`)."""
    return {INSTANCE: tuple(repos)}


def utc(value: str | None) -> datetime | None:
    """A stored datetime as SQLModel's UTCDateTime hands it back: SQLite keeps UTC without
    an offset (`YYYY-MM-DD HH:MM:SS[.ffffff]`)."""
    if value is None:
        return None
    parsed = datetime.fromisoformat(value)
    return parsed.replace(tzinfo=UTC) if parsed.utcoffset() is None else parsed.astimezone(UTC)


def at(value: str) -> datetime:
    parsed = utc(value)
    assert parsed is not None  # a NOT NULL column
    return parsed


class Reader:
    """One read-only connection to an existing SQLite store at this version's schema."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._connection = connection

    @classmethod
    def open(cls, path: Path, busy_timeout_seconds: float) -> Reader:
        """Raises StoreMissing when there is no file, StoreError when it cannot be read or
        its schema is not this version's."""
        if not path.exists():
            raise StoreMissing(f"no database at {path} yet (`livereview once` or `run` "
                               "creates it)")
        if path.is_dir():
            raise StoreError(f"database_url: {path} is a directory, not a database file")
        try:
            # mode=rw, not ro: a connection opened after the file was deleted fails instead
            # of creating an empty one, and no -wal/-shm files are left behind (engine.py).
            connection = sqlite3.connect(f"file:{quote(str(path))}?mode=rw", uri=True,
                                         isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise _translated(exc, path) from None
        reader = cls(path, connection)
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout_seconds * 1000)}")
            connection.execute("PRAGMA query_only = ON")
            tables = [str(r[0]) for r in reader._rows(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite~_%' ESCAPE '~'")]
            current = None
            if "alembic_version" in tables:
                versions = reader._rows("SELECT version_num FROM alembic_version")
                current = str(versions[0][0]) if versions else None
            judge_schema(str(path), tables, current)
        except BaseException:
            connection.close()
            raise
        return reader

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def _rows(self, sql: str, parameters: Sequence[object] = ()) -> list[tuple[object, ...]]:
        """One query in its own read transaction (BEGIN: a reader takes no write lock)."""
        return self.together([(sql, parameters)])[0]

    def together(self, queries: Sequence[tuple[str, Sequence[object]]]
                 ) -> list[list[tuple[object, ...]]]:
        """Each query's rows, all read in one transaction: one state of the store."""
        try:
            self._connection.execute("BEGIN")
            try:
                return [list(self._connection.execute(sql, parameters))
                        for sql, parameters in queries]
            finally:
                self._connection.execute("COMMIT")
        except sqlite3.Error as exc:
            raise _translated(exc, self.path) from None

    def listings(self) -> dict[str, dict[str, datetime | None]]:
        """Per host, every listing scope's last success (None: not one yet): state.listings."""
        result: dict[str, dict[str, datetime | None]] = {}
        for host, scope, listed_until in self._rows(
                "SELECT host, scope, listed_until FROM poll_watermarks"):
            result.setdefault(str(host), {})[str(scope)] = utc(
                None if listed_until is None else str(listed_until))
        return result

    def jobs(self, *, states: Iterable[str] | None = None, repo: str | None = None
             ) -> list[PendingJob]:
        """The reply jobs in `states` (all: None) of `repo` (all: None), by id: jobs.listing."""
        where, parameters = _filters(states, repo)
        return [PendingJob(str(key), str(host), str(repo_), int(str(iid)), str(reason),
                           str(state), int(str(attempts)), str(error), at(str(created)),
                           at(str(next_at)))
                for key, host, repo_, iid, reason, state, attempts, error, created, next_at
                in self._rows(
                    "SELECT key, host, repo, iid, reason, state, attempts, last_error, "  # noqa: S608 - _filters formats in placeholders only
                    f"comment_created_at, next_attempt_at FROM reply_jobs{where} ORDER BY id",
                    parameters)]

    def unfinished(self, repo: str | None = None) -> list[PendingRun]:
        """Review runs still open, and those that gave up: reviews.unfinished."""
        states = [s.value for s in ReviewState if s.open] + [ReviewState.FAILED.value]
        where, parameters = _filters(states, repo)
        return [PendingRun(str(key), str(host), str(repo_), int(str(iid)), str(trigger),
                           str(state), int(str(attempts)), str(error), at(str(created)),
                           at(str(next_at)))
                for key, host, repo_, iid, trigger, state, attempts, error, created, next_at
                in self._rows(
                    "SELECT key, host, repo, iid, trigger, state, attempts, last_error, "  # noqa: S608 - _filters formats in placeholders only
                    f"created_at, next_attempt_at FROM review_runs{where} ORDER BY id",
                    parameters)]


    def replied(self, key: MRKey) -> dict[str, Replied]:
        """The MR's answered comments by comment id: replied.replied_in."""
        low, high = job_key_range(key)
        jobs: list[JobMark] = [
            (str(comment), None if reply is None else str(reply),
             utc(None if at is None else str(at)), str(state))
            for comment, reply, at, state in self._rows(
                "SELECT host_message_id, posted_message_id, posted_at, state FROM reply_jobs "
                "WHERE key >= ? AND key < ? AND host = ? AND repo = ? AND iid = ?",
                (low, high, key.host, key.repo, key.iid))]
        tools: list[ToolMark] = [
            (str(comment), None if reply is None else str(reply),
             utc(None if at is None else str(at)))
            for comment, reply, at in self._rows(
                "SELECT comment_id, reply_id, replied_at FROM tool_replies WHERE host = ? "
                "AND repo = ? AND iid = ? AND replied_at IS NOT NULL",
                (key.host, key.repo, key.iid))]
        return fold(key, jobs, tools)


def _filters(states: Iterable[str] | None, repo: str | None) -> tuple[str, list[object]]:
    clauses: list[str] = []
    parameters: list[object] = []
    if states is not None:
        wanted = list(states)
        clauses.append(f"state IN ({', '.join('?' * len(wanted))})" if wanted else "0")
        parameters += wanted
    if repo is not None:
        clauses.append("repo = ?")
        parameters.append(repo)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), parameters


def _translated(exc: sqlite3.Error, path: Path) -> StoreError:
    """What engine.translate says of the same failure through SQLAlchemy."""
    if getattr(exc, "sqlite_errorname", "").startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return StoreCorrupt(damaged(path, str(exc)))
    return StoreError(f"database sqlite:///{path}: {' '.join(str(exc).split())}"
                      f"{read_only_hint(path)}")
