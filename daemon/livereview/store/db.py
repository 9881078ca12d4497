"""The Store: one engine, one writer thread.

All database work runs on a single dedicated thread, so the event loop never blocks on
SQLite (a busy timeout, an fsync) and the daemon's own writes never contend with each
other. `await store.run(fn, *args)` runs `fn(session, *args)` in one transaction there.

A sick database is reported, not retried blindly: a locked, full or read-only one raises
`StoreError` (and `run` logs `store_unavailable` once, `store_unavailable_recovered` when
it passes: for a full one, when what failed writes again); a damaged file,
or one deleted or replaced under the process, is `StoreFatal` and every later transaction
raises it again without touching the file.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Concatenate, ParamSpec, TypeVar

import structlog
from sqlalchemy import Connection, Engine, event
from sqlalchemy.engine.default import DefaultExecutionContext
from sqlalchemy.engine.interfaces import DBAPICursor, ExecutionContext
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session

from livereview.log_setup import FailureLog
from livereview.store import engine as engines
from livereview.store.engine import StoreError, StoreFatal, StoreFull, StoreGone

# With a full disk, a kind that failed and has not been tried again for this long is not
# waited for (a one-shot mark): another kind's write then ends the episode without it.
UNTRIED_KIND_FORGOTTEN_SECONDS = 300.0

P = ParamSpec("P")
R = TypeVar("R")
log = structlog.get_logger("livereview.store")


class Store:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="livereview-store")
        self.path = engines.sqlite_file(engine.url)
        self._identity = engines.file_identity(self.path) if self.path else None
        self.fatal: StoreFatal | None = None
        self.failures = FailureLog(log)
        self._failed: dict[str, float] = {}  # failing kinds → when each last failed
        self._full = False  # a full database among its causes: only a write proves it over
        self._writes = 0  # statements that changed rows, on the store thread
        event.listen(engine, "after_cursor_execute", self._count_write)

    def _count_write(self, _conn: Connection, cursor: DBAPICursor, _statement: str,
                     _parameters: object, context: ExecutionContext | None,
                     _executemany: bool) -> None:
        if isinstance(context, DefaultExecutionContext) and (
                context.isinsert or context.isupdate or context.isdelete):
            # -1: the driver cannot tell; count it. With RETURNING, SQLite's rowcount stays 0
            # until the rows are fetched (SQLAlchemy's multi-row INSERT … RETURNING id):
            # count it too — at worst a statement that changed nothing ends an episode early.
            returning = context.compiled is not None and bool(
                getattr(context.compiled, "effective_returning", None))
            self._writes += cursor.rowcount != 0 or returning

    @classmethod
    def open(cls, database_url: str, busy_timeout_seconds: float = 10.0, *,
             apart: bool = False) -> Store:
        """Open for the daemon: create the database (private) if missing, migrate it.
        `apart` (the long-running daemon): an upgrade runs in a child process, so that
        alembic never weighs on this one (store/migrate_apart.py)."""
        engine = engines.create(database_url, busy_timeout_seconds)
        try:
            if apart:
                from livereview.store import migrate_apart

                migrate_apart.upgrade(database_url, busy_timeout_seconds, engine)
            else:
                engines.migrate(engine)
        except StoreError:
            engine.dispose()
            raise
        store = cls(engine)
        if store.path is not None and engines.readable_by_others(store.path):
            log.warning("database_readable_by_others", path=str(store.path),
                        fix=f"chmod 600 {store.path}*  (it holds every comment read)")
        return store

    @classmethod
    def open_existing(cls, database_url: str, busy_timeout_seconds: float = 10.0, *,
                      read_only: bool = True) -> Store:
        """Open a database that must exist (`StoreMissing` otherwise), never creating one.
        Read-only (the default) also never writes; a writable one is migrated."""
        if not read_only:  # a writable SQLite engine would create the missing file
            engines.create(database_url, busy_timeout_seconds, read_only=True).dispose()
        engine = engines.create(database_url, busy_timeout_seconds, read_only=read_only)
        try:
            if read_only:
                engines.check_schema(engine)
            else:
                engines.migrate(engine)
        except StoreError:
            engine.dispose()
            raise
        return cls(engine)

    def _check_file(self) -> None:
        """SQLite keeps writing to a deleted file's inode, and all of it vanishes at exit:
        a database deleted or replaced under us is fatal, not a silent loss."""
        if self.path is None or self._identity is None:
            return
        if engines.file_identity(self.path) != self._identity:
            self.fatal = StoreGone(
                f"database {self.path} was deleted or replaced while livereview was using "
                "it: restore it from a backup or let the restart create a new one (the "
                "bot's reply markers keep it from answering twice)")

    def transaction(
        self, fn: Callable[Concatenate[Session, P], R], *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """Run `fn` in one transaction, synchronously (CLI commands, tests)."""
        if self.fatal is None:
            self._check_file()
        if self.fatal is not None:
            raise self.fatal
        try:
            with Session(self.engine, expire_on_commit=False) as session, session.begin():
                return fn(session, *args, **kwargs)
        except DBAPIError as exc:
            error = engines.translate(exc, self.engine)
            if error is None:
                raise
            if isinstance(error, StoreFatal):
                self.fatal = error
            raise error from exc

    def _counted(self, call: Callable[[], R]) -> tuple[R, bool]:
        """`call`'s result and whether it changed a row: measured on the store thread, so
        no other transaction's writes count."""
        writes = self._writes
        return call(), self._writes > writes

    async def run(
        self, fn: Callable[Concatenate[Session, P], R], *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """Run `fn` in one transaction on the store thread. A failure that is not fatal is
        logged here once while it lasts, so callers need not log it again."""
        loop = asyncio.get_running_loop()
        call = partial(self.transaction, fn, *args, **kwargs)
        kind = getattr(fn, "__qualname__", repr(fn))
        try:
            result, wrote = await loop.run_in_executor(self._executor, self._counted, call)
        except StoreFatal:
            raise  # the daemon stops and says why in one line
        except StoreError as exc:
            self._failed[kind] = time.monotonic()
            self._full = self._full or isinstance(exc, StoreFull)
            log.debug("store_transaction_failed", kind=kind)  # each one, said or not
            self.failures.failed("store", "store_unavailable", str(exc))
            raise
        if self._failed and self._over(kind, wrote):
            self._failed.clear()
            self._full = False
            self.failures.ok("store", "store_unavailable")
        return result

    def _over(self, kind: str, wrote: bool) -> bool:
        """Whether this success ends the failure. A locked or read-only database: when a
        kind that failed works again. A full disk lets reads through between the writes it
        fails, a kind that failed to write (a load-or-store) may only read on its next
        call, and small writes may fit where a big one does not: there each failed kind
        must write again — or not have been tried for a while (it may never come back)."""
        if not self._full:
            return kind in self._failed
        if not wrote:
            return False
        self._failed.pop(kind, None)
        untried = time.monotonic() - UNTRIED_KIND_FORGOTTEN_SECONDS
        self._failed = {k: at for k, at in self._failed.items() if at > untried}
        return not self._failed

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        self.engine.dispose()

