"""The store: migrations match the tables, snapshots round-trip, jobs are idempotent."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text
from sqlmodel import SQLModel

from livereview.model import JobReason, ReplyRequest
from livereview.store import jobs, snapshots
from livereview.store.db import Store
from livereview.sync.diff import diff
from tests.factories import ALICE, IDENTITY, KEY, T0, msg, snapshot, thread


def open_store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'db' / 'livereview.db'}")


def test_migrations_create_exactly_the_tables_the_code_uses(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    with store.engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection),
                                       SQLModel.metadata)
        assert differences == []
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    store.close()
    open_store(tmp_path).close()  # migrating again is a no-op


def test_snapshot_round_trips_and_diffs_to_nothing(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    snap = snapshot(thread("t1", msg("1", body="@livereview hi"), msg("2", ALICE, "more", at=1)))
    store.transaction(snapshots.ingest, snap, diff(None, snap), [], IDENTITY, T0)
    loaded = store.transaction(snapshots.load, KEY)
    assert loaded == snap
    assert diff(loaded, snap) == []
    store.close()


def test_a_second_trigger_for_the_same_message_is_a_no_op(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    request = ReplyRequest(KEY, "t1", "1", JobReason.MENTION, T0)
    snap = snapshot(thread("t1", msg("1")))
    [(job_id, key)] = store.transaction(snapshots.ingest, snap, [], [request], IDENTITY, T0)
    assert key == request.key and job_id > 0
    assert store.transaction(snapshots.ingest, snap, [], [request, request], IDENTITY, T0) == []
    assert store.transaction(jobs.counts) == {"pending": 1}
    store.close()
