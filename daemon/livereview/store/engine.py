"""Engine creation, migrations, and what a sick database means for the operator.

SQLite is the embedded default: WAL (readers never block the writer), a busy timeout, and
`BEGIN IMMEDIATE` for every transaction so two writers queue on the lock instead of
failing half-way with "database is locked" at commit. PostgreSQL works unchanged.

The database holds every comment the bot read, so its directory is created 0700 and the
file 0600 (SQLite gives the -wal and -shm files the database file's mode). Only `open`
for writing creates anything; read-only commands (`check`, `health`, `pending`) open an
existing file or report that there is none.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from sqlalchemy import URL, Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, NoSuchModuleError, OperationalError

# Re-exported: the store's errors and revisions are engine's names for every caller.
from livereview.store.faults import MIGRATIONS as MIGRATIONS
from livereview.store.faults import StoreCorrupt as StoreCorrupt
from livereview.store.faults import StoreError as StoreError
from livereview.store.faults import StoreFatal as StoreFatal
from livereview.store.faults import StoreFull as StoreFull
from livereview.store.faults import StoreGone as StoreGone
from livereview.store.faults import StoreMissing as StoreMissing
from livereview.store.faults import damaged as damaged
from livereview.store.faults import judge_schema
from livereview.store.faults import read_only_hint as read_only_hint
from livereview.store.faults import revisions as revisions

if TYPE_CHECKING:  # alembic (and its mako) is imported by `migrate` only: a read-only
    from alembic.config import Config  # command starts without it (check_schema below)

CACHE_KIB = 512  # SQLite's page cache per connection (negative cache_size: KiB)
MIGRATION_LOCK = 0x6C69766572657669  # "livervi": the advisory lock migrations take


def sqlite_file(url: URL | str) -> Path | None:
    """The SQLite file behind a URL; None for PostgreSQL or an in-memory database."""
    url = make_url(url) if isinstance(url, str) else url
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    if url.query.get("uri"):  # the form `create` makes: file:<quoted path>?mode=rw
        return Path(unquote(url.database.removeprefix("file:")))
    return Path(url.database)


def file_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file, None if it is gone: a new inode means it was replaced."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    return info.st_dev, info.st_ino


def _sqlite_pragmas(engine: Engine, busy_timeout_seconds: float, *, read_only: bool) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: sqlite3.Connection, _record: Any) -> None:
        # Hand transaction control to the "begin" hook below (pysqlite's own is lazy).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(busy_timeout_seconds * 1000)}")
        if read_only:
            # Not `mode=ro`: that leaves -wal/-shm files behind; this connection simply
            # refuses to write, and the last one to close removes them as usual.
            cursor.execute("PRAGMA query_only = ON")
        else:
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        # 512 KiB of page cache per connection, not SQLite's default 2 MiB: the daemon's
        # one store connection would hold ~2 MiB of RSS it barely needs (figure 5, the
        # memory budget), since the OS's page cache keeps the file's pages anyway;
        # figure 16 (CPU per MR read) measured no cost (docs/performance.md).
        cursor.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        # A reader takes no write lock: `check` never delays the running daemon.
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def _create_private(path: Path) -> None:
    """The directory (0700 when we create it) and an empty database file (0600), so that
    SQLite never creates either with the process's umask."""
    created = not path.parent.exists()
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if created:  # mkdir's mode is masked by the umask
            path.parent.chmod(0o700)
    except OSError as exc:
        raise StoreError(f"database_url: cannot create {path.parent}: {exc.strerror}") from None
    if path.is_dir():
        raise StoreError(f"database_url: {path} is a directory, not a database file")
    if path.exists():
        return
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:  # another process created it meanwhile
        return
    except OSError as exc:
        raise StoreError(f"database_url: cannot create {path}: {exc.strerror}"
                         f"{read_only_hint(path)}") from None


def create(database_url: str, busy_timeout_seconds: float = 10.0, *,
           read_only: bool = False) -> Engine:
    """An engine for the URL. Writable: creates the SQLite file (private) if missing.
    Read-only: the file must exist (`StoreMissing` otherwise) and is never written."""
    url = make_url(database_url)
    path = sqlite_file(url)
    if url.get_backend_name() != "sqlite":
        try:
            return create_engine(url, pool_pre_ping=True)
        except (ImportError, NoSuchModuleError) as exc:
            raise StoreError(f"database_url {url.render_as_string(hide_password=True)}: "
                             f"{exc}; PostgreSQL needs `pip install 'livereview[postgres]'` "
                             "and a postgresql+psycopg:// URL") from None
    if path is not None:
        if not read_only:
            _create_private(path)
        elif not path.exists():
            raise StoreMissing(f"no database at {path} yet (`livereview once` or `run` "
                               "creates it)")
        elif path.is_dir():
            raise StoreError(f"database_url: {path} is a directory, not a database file")
        # mode=rw: a connection opened after the file was deleted fails instead of
        # silently creating an empty database in its place.
        url = url.set(database=f"file:{quote(str(path))}", query={"mode": "rw", "uri": "true"})
    engine = create_engine(url, connect_args={"check_same_thread": False})
    _sqlite_pragmas(engine, busy_timeout_seconds, read_only=read_only)
    return engine


def _config() -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return config


def _where(engine: Engine) -> str:
    path = sqlite_file(engine.url)
    return str(path) if path is not None else engine.url.render_as_string(hide_password=True)


def migrate(engine: Engine) -> None:
    """Bring the schema to the newest revision (idempotent)."""
    if check_schema(engine, newer_only=True) == revisions()[1]:
        return  # already the newest: every start of a command, without importing alembic
    from alembic import command

    config = _config()
    try:
        with engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                # Replicas started together would each create the tables (and all but
                # one fail): one migrates, the others wait here, then find it done.
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                                   {"key": MIGRATION_LOCK})
            config.attributes["connection"] = connection
            command.upgrade(config, "head")
    except DBAPIError as exc:
        error = translate(exc, engine)
        if error is None:
            raise
        raise error from None


def check_schema(engine: Engine, *, newer_only: bool = False) -> str | None:
    """The database's schema is this version's (read-only commands cannot upgrade it, and
    an older one lacks columns they read); `newer_only`: it is not a later version's.
    Returns the database's revision (None: a new database)."""
    try:
        with engine.connect() as connection:
            tables = set(inspect(connection).get_table_names())
            current = connection.execute(text(
                "SELECT version_num FROM alembic_version")).scalar_one_or_none() \
                if "alembic_version" in tables else None
    except DBAPIError as exc:
        error = translate(exc, engine)
        if error is None:
            raise
        raise error from None
    return judge_schema(_where(engine), tables, current, newer_only=newer_only)


def translate(exc: DBAPIError, engine: Engine) -> StoreError | None:
    """A database failure as the operator should read it. Damage is fatal (`StoreCorrupt`);
    a full database is `StoreFull`, a locked or read-only one a `StoreError`: both may pass.
    None for the rest (an IntegrityError is a bug, not an unusable database: keep its
    traceback)."""
    path = sqlite_file(engine.url)
    name = getattr(exc.orig, "sqlite_errorname", "")
    if path is not None and name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return StoreCorrupt(damaged(path, str(exc.orig)))
    if not isinstance(exc, OperationalError):
        return None
    where = f"sqlite:///{path}" if path is not None else _where(engine)
    hint = read_only_hint(path) if path is not None else ""
    message = f"database {where}: {_one_line(str(exc.orig), engine.url)}{hint}"
    # SQLite: SQLITE_FULL (sqlite3.h); PostgreSQL: SQLSTATE 53100 (Appendix A, "disk_full").
    if name.startswith("SQLITE_FULL") or getattr(exc.orig, "sqlstate", None) == "53100":
        return StoreFull(message)
    return StoreError(message)


def _one_line(message: str, url: URL) -> str:
    """libpq's messages span lines ("…Connection refused\n\tIs the server running…"): one
    line for the CLI and the log, and never the password, should a driver echo it."""
    flat = " ".join(message.split())
    return flat.replace(url.password, "***") if url.password else flat


def readable_by_others(path: Path) -> bool:
    """A database made by an older version (or copied in) may be readable by everyone."""
    try:
        return bool(path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO))
    except OSError:
        return False
