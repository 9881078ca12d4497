"""The migrated template the tests' SQLite stores are copies of (tests/sqlite_template.py) is
what the real `Store.open` makes of a new file: the newest revision, every table, index and
setting the same; and a test marked `creates_database` still gets a bare path."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from livereview.store import engine as engines
from livereview.store.db import Store
from livereview.store.faults import revisions
from tests.databases import url_for
from tests.sqlite_template import TEMPLATE

pytestmark = pytest.mark.sqlite_only("the template stands in for SQLite files")


def schema(path: Path) -> tuple[list[tuple[str, str, str]], str, int]:
    """Every table, index and trigger with its SQL, the journal mode, the user version."""
    with sqlite3.connect(path) as connection:
        objects = connection.execute(
            "SELECT type, name, sql FROM sqlite_master ORDER BY type, name").fetchall()
        [(journal,)] = connection.execute("PRAGMA journal_mode").fetchall()
        [(version,)] = connection.execute("PRAGMA user_version").fetchall()
    connection.close()
    return objects, journal, version


def test_a_seeded_file_is_at_the_newest_revision(tmp_path: Path) -> None:
    url = url_for(tmp_path / "state" / "livereview.db")
    engine = engines.create(url, read_only=True)
    try:
        assert engines.check_schema(engine) == revisions()[1]
    finally:
        engine.dispose()


@pytest.mark.creates_database("migrates a new file the real way to compare the template with")
def test_the_template_is_what_store_open_makes_of_a_new_file(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.db"
    Store.open(url_for(fresh)).close()
    seeded = tmp_path / "seeded.db"
    TEMPLATE.seed(seeded)
    assert schema(seeded) == schema(fresh)
    assert schema(seeded)[1] == "wal"
    objects = {name for kind, name, _ in schema(seeded)[0] if kind == "table"}
    assert {"alembic_version", "reply_jobs", "leases"} <= objects


def test_a_seeded_file_is_private_as_store_open_makes_it(tmp_path: Path) -> None:
    db = tmp_path / "state" / "livereview.db"
    url_for(db)
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    store = Store.open(url_for(db))  # opens it as it is: no upgrade, no warning
    store.close()
    assert not engines.readable_by_others(db)


def test_a_file_already_there_is_never_overwritten(tmp_path: Path) -> None:
    db = tmp_path / "livereview.db"
    db.write_bytes(b"not a database")
    assert url_for(db) == f"sqlite:///{db}"
    assert db.read_bytes() == b"not a database"


@pytest.mark.creates_database("checks the opt-out itself")
def test_a_test_marked_creates_database_gets_a_bare_path(tmp_path: Path) -> None:
    db = tmp_path / "state" / "livereview.db"
    assert url_for(db) == f"sqlite:///{db}"
    assert not db.parent.exists()


def test_a_url_is_kept_as_it_is(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'named.db'}"
    assert url_for(url) == url
    assert not (tmp_path / "named.db").exists()
