"""Both database back ends for the tests that must hold on each (issue 18).

`database_url` is parametrized over SQLite and PostgreSQL. The PostgreSQL server is the one
named by LIVEREVIEW_TEST_POSTGRES_URL (`.ci/postgres start` starts one and prints the
export); each test gets a database of its own, copied from a template migrated once per
session with whatever migrations exist (`CREATE DATABASE … TEMPLATE` takes milliseconds,
migrating takes seconds). Outside CI a missing server skips with how to get one; under
CI=true it fails: CI must run these suites on PostgreSQL.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import NullPool

from livereview.store.db import Store

ENV = "LIVEREVIEW_TEST_POSTGRES_URL"
HOW = (f"no PostgreSQL server for the tests: run `eval \"$(bash .ci/postgres start)\"` "
       f"(Debian's postgresql package; `bash .ci/postgres stop` ends it), or set {ENV}="
       "postgresql+psycopg://USER@HOST:PORT/postgres for a server where USER may create "
       "databases")
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


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The test runs once per back end; PostgreSQL's database is migrated already."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'db' / 'livereview.db'}"
    return str(request.getfixturevalue("postgres_url"))


def job_rows(database_url: str) -> list[dict[str, object]]:
    """Every reply job as a dict, read with a connection of its own (on SQLite: read-only,
    and nothing yet when the daemon was killed before creating or migrating the file)."""
    url = make_url(database_url)
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
