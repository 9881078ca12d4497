"""Engine creation and migrations.

SQLite is the embedded default: WAL (readers never block the writer), a busy timeout, and
`BEGIN IMMEDIATE` for every transaction so two writers queue on the lock instead of
failing half-way with "database is locked" at commit. PostgreSQL works unchanged.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

MIGRATIONS = Path(__file__).with_name("migrations")


class StoreError(Exception):
    """The database cannot be opened or used; the message says why."""


def _sqlite_pragmas(engine: Engine, busy_timeout_seconds: float) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        # Hand transaction control to the "begin" hook below (pysqlite's own is lazy).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_seconds * 1000)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def create(database_url: str, busy_timeout_seconds: float = 10.0) -> Engine:
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        if url.database and url.database != ":memory:":
            path = Path(url.database)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"database_url: cannot create {path.parent}: "
                                 f"{exc.strerror}") from None
        engine = create_engine(url, connect_args={"check_same_thread": False})
        _sqlite_pragmas(engine, busy_timeout_seconds)
        return engine
    return create_engine(url, pool_pre_ping=True)


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest revision (idempotent)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    try:
        with engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    except OperationalError as exc:
        raise StoreError(f"database {engine.url.render_as_string(hide_password=True)}: "
                         f"{exc.orig}{_read_only_hint(engine)}") from None


def _read_only_hint(engine: Engine) -> str:
    """SQLite says 'unable to open database file' when it cannot create its WAL files: say
    why when the reason is a read-only directory or filesystem."""
    database = engine.url.database
    if engine.url.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return ""
    directory = Path(database).parent
    try:
        read_only_fs = bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        return ""
    if read_only_fs or not os.access(directory, os.W_OK):
        return (f" ({directory} is read-only: the database and its -wal/-shm files must be "
                "writable)")
    return ""
