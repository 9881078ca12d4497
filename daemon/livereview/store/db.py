"""The Store: one engine, one writer thread.

All database work runs on a single dedicated thread, so the event loop never blocks on
SQLite (a busy timeout, an fsync) and the daemon's own writes never contend with each
other. `await store.run(fn, *args)` runs `fn(session, *args)` in one transaction there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Concatenate, ParamSpec, TypeVar

from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError
from sqlmodel import Session

from livereview.settings import DaemonSettings
from livereview.store import engine as engines
from livereview.store.engine import StoreError

P = ParamSpec("P")
R = TypeVar("R")


class Store:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="livereview-store")

    @classmethod
    def open(cls, database_url: str, busy_timeout_seconds: float = 10.0) -> Store:
        engine = engines.create(database_url, busy_timeout_seconds)
        engines.migrate(engine)
        return cls(engine)

    @classmethod
    def for_settings(cls, settings: DaemonSettings) -> Store:
        return cls.open(settings.database_url, settings.busy_timeout_seconds)

    def transaction(
        self, fn: Callable[Concatenate[Session, P], R], *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """Run `fn` in one transaction, synchronously (CLI commands, tests)."""
        try:
            with Session(self.engine, expire_on_commit=False) as session, session.begin():
                return fn(session, *args, **kwargs)
        except OperationalError as exc:
            raise StoreError(f"database: {exc.orig}") from exc

    async def run(
        self, fn: Callable[Concatenate[Session, P], R], *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """Run `fn` in one transaction on the store thread."""
        loop = asyncio.get_running_loop()
        call = partial(self.transaction, fn, *args, **kwargs)
        return await loop.run_in_executor(self._executor, call)

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        self.engine.dispose()
