"""Both database back ends for the tests that must hold on each (docs/DESIGN.md §12).

Two ways a test runs on PostgreSQL:
- `database_url` is parametrized over SQLite and PostgreSQL: those tests run on both in
  every test run.
- LIVEREVIEW_TEST_BACKEND=postgresql switches a whole run: every config a test writes for
  a SQLite path (`url_for(path)`: the e2e sandboxes, subprocess daemons, crash tests) points
  at a fresh migrated PostgreSQL database of that test's own instead, dropped after it;
  `database_url` then runs only its PostgreSQL param. Tests about SQLite itself carry
  `@pytest.mark.sqlite_only("why")` and are skipped, with that reason. Locally (what
  `.ci/run` runs after the README's command):

      eval "$(bash .ci/postgres start)"
      LIVEREVIEW_TEST_BACKEND=postgresql .venv/bin/python -m pytest -m pg
      bash .ci/postgres stop

  `-m pg` selects what tests/conftest.py's PG_PASS names: what the back end changes and
  the other run did not already put on PostgreSQL through `database_url`/`postgres_url`.

The PostgreSQL server is the one named by LIVEREVIEW_TEST_POSTGRES_URL (`.ci/postgres
start` starts one and prints the export); each test gets a database of its own, copied from
a template migrated once per session with whatever migrations exist (`CREATE DATABASE …
TEMPLATE` takes milliseconds, migrating takes seconds). Outside CI a missing server skips
with how to get one; under CI=true it fails: CI must run these suites on PostgreSQL.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool

from livereview.store.db import Store
from tests.sqlite_template import MARKER, MARKER_HELP, TEMPLATE

ENV = "LIVEREVIEW_TEST_POSTGRES_URL"
HOW = (f"no PostgreSQL server for the tests: run `eval \"$(bash .ci/postgres start)\"` "
       f"(Debian's postgresql package; `bash .ci/postgres stop` ends it), or set {ENV}="
       "postgresql+psycopg://USER@HOST:PORT/postgres for a server where USER may create "
       "databases")
BACKEND_ENV = "LIVEREVIEW_TEST_BACKEND"
BACKENDS = ("sqlite", "postgresql")
BACKEND = os.environ.get(BACKEND_ENV, "") or "sqlite"
ON_POSTGRESQL = BACKEND == "postgresql"
_serial = itertools.count()


class Postgres:
    """A server the tests may create and drop databases on."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = make_url(admin_url)
        self.admin: Engine = create_engine(self.admin_url, isolation_level="AUTOCOMMIT")
        self.template = f"lr_template_{os.getpid()}"

    def url(self, database: str) -> str:
        return self.admin_url.set(database=database).render_as_string(hide_password=False)

    def create(self, name: str, template: str | None = None) -> str:
        with self.admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            suffix = f' TEMPLATE "{template}"' if template else ""
            connection.execute(text(f'CREATE DATABASE "{name}"{suffix}'))
        return self.url(name)

    def drop(self, name: str) -> None:
        with self.admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))

    def fresh(self, *, migrated: bool = True) -> tuple[str, str]:
        """A new database (name, URL): a copy of the migrated template, or empty."""
        name = f"lr_test_{os.getpid()}_{next(_serial)}"
        return name, self.create(name, self.template if migrated else None)


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    url = os.environ.get(ENV, "")
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"CI=true but {ENV} is not set: .ci/run starts PostgreSQL and sets it")
        pytest.skip(HOW)
    server = Postgres(url)
    try:
        store = Store.open(server.create(server.template))  # every migration there is
    except OperationalError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL at {ENV} does not answer: {exc.orig}")
        pytest.skip(f"PostgreSQL at {ENV} does not answer ({exc.orig}); {HOW}")
    store.close()
    yield server
    server.drop(server.template)
    server.admin.dispose()


@pytest.fixture
def postgres_url(postgres: Postgres) -> Iterator[str]:
    """A migrated PostgreSQL database of this test's own."""
    name, url = postgres.fresh()
    yield url
    postgres.drop(name)


@pytest.fixture(params=["postgresql"] if ON_POSTGRESQL else ["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The test runs once per back end, each database migrated already (SQLite's a copy of
    the template unless the test is marked `creates_database`: then a path). A
    PostgreSQL run (LIVEREVIEW_TEST_BACKEND) runs only the PostgreSQL param: the SQLite one
    ran in the SQLite pass already."""
    if request.param == "sqlite":
        return url_for(tmp_path / "db" / "livereview.db")
    return str(request.getfixturevalue("postgres_url"))


def job_rows(database_url: str | Path) -> list[dict[str, object]]:
    """Every reply job as a dict, read with a connection of its own (on SQLite: read-only,
    and nothing yet when the daemon was killed before creating or migrating the file); a
    path stands for `url_for(path)`."""
    url = make_url(url_for(database_url))
    if url.get_backend_name() == "sqlite":
        path = Path(str(url.database))
        if not path.exists():
            return []
        url = url.set(database=f"file:{path}?mode=ro", query={"uri": "true"})
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            if "reply_jobs" not in inspect(connection).get_table_names():
                return []  # killed before the first migration
            result = connection.execute(text("SELECT * FROM reply_jobs ORDER BY id"))
            return [dict(row._mapping) for row in result]
    finally:
        engine.dispose()


def pytest_configure(config: pytest.Config) -> None:
    if BACKEND not in BACKENDS:
        raise pytest.UsageError(f"{BACKEND_ENV}={BACKEND!r}: expected one of {BACKENDS}")
    config.addinivalue_line(
        "markers", "sqlite_only(reason): about SQLite itself (files, WAL, a full disk…); "
        f"skipped, with that reason, when {BACKEND_ENV}=postgresql")
    config.addinivalue_line("markers", MARKER_HELP)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    marker = item.get_closest_marker("sqlite_only")
    if ON_POSTGRESQL and marker is not None:
        reason = marker.args[0] if marker.args else marker.kwargs.get("reason", "")
        pytest.skip(f"SQLite only: {reason}")


class Databases:
    """This test's PostgreSQL databases, one per SQLite path its configs name."""

    def __init__(self, server: Postgres) -> None:
        self.server = server
        self.by_path: dict[Path, tuple[str, str]] = {}
        self.lock = threading.Lock()  # some tests set up their cases in threads

    def url(self, path: Path) -> str:
        with self.lock:
            if path not in self.by_path:
                self.by_path[path] = self.server.fresh()
            return self.by_path[path][1]

    def drop(self) -> None:
        for name, _ in self.by_path.values():
            self.server.drop(name)


_databases: Databases | None = None
_seeding = False  # SQLite files `url_for` names are copies of the template (this test's)


@pytest.fixture(autouse=True)
def _backend(request: pytest.FixtureRequest) -> Iterator[None]:
    """In a PostgreSQL run, `url_for` hands out this test's databases; dropped after it. In
    a SQLite run it seeds each file it names with the migrated template (tests/
    sqlite_template.py), unless the test is marked `creates_database`."""
    global _databases, _seeding
    if not ON_POSTGRESQL:
        _seeding = request.node.get_closest_marker(MARKER) is None
        try:
            yield
        finally:
            _seeding = False
        return
    if request.node.get_closest_marker("sqlite_only") is not None:
        yield
        return
    _databases = Databases(request.getfixturevalue("postgres"))
    try:
        yield
    finally:
        databases, _databases = _databases, None
        databases.drop()


def url_for(db: Path | str) -> str:
    """The database URL a config names for the SQLite file `db` (a URL is kept as it is):
    that file, or in a PostgreSQL run a database standing for it. Either is migrated: a
    missing file becomes a copy of the template (tests/sqlite_template.py) unless the test
    is marked `creates_database`, as a PostgreSQL database is a copy of its template."""
    if isinstance(db, str):
        return db
    if _databases is None:
        if _seeding:
            TEMPLATE.seed(db)
        return f"sqlite:///{db}"
    return _databases.url(db)


def query(db: Path | str, sql: str, **params: object) -> list[tuple[Any, ...]]:
    """Rows of `sql` (`:name` parameters) in the database `url_for(db)` names, read with a
    connection of its own so the test sees what another process committed. The values are
    whatever raw SQL gives on that back end (as sqlite3's rows are): `Any`."""
    engine = create_engine(url_for(db), poolclass=NullPool)
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(sql), params)]
    finally:
        engine.dispose()


def execute(db: Path | str, sql: str, **params: object) -> None:
    """Run one write statement in the database `url_for(db)` names, and commit it."""
    engine = create_engine(url_for(db), poolclass=NullPool)
    try:
        with engine.begin() as connection:
            connection.execute(text(sql), params)
    finally:
        engine.dispose()


def instant(value: object) -> datetime:
    """A timestamp column read with raw SQL: ISO text on SQLite, a datetime on PostgreSQL."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def dump(db: Path | str) -> str:
    """Every row of every table in the database `url_for(db)` names, as text: to check
    what was stored (a secret must not be) on either back end."""
    engine = create_engine(url_for(db), poolclass=NullPool)
    try:
        with engine.connect() as connection:
            return "\n".join(
                repr(tuple(row)) for table in inspect(connection).get_table_names()
                for row in connection.execute(text(f'SELECT * FROM "{table}"')))  # noqa: S608
    finally:
        engine.dispose()
