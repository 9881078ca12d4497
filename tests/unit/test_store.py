"""The store: migrations match the tables, snapshots round-trip, jobs are idempotent."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlmodel import SQLModel

from livereview.core.model import Actor, Commit, JobReason, Reaction, ReplyRequest
from livereview.store import jobs, snapshots
from livereview.store.db import Store
from livereview.store.engine import MIGRATIONS
from livereview.sync.diff import diff
from tests.databases import Postgres
from tests.factories import ALICE, BOT, IDENTITY, KEY, T0, msg, snapshot, thread


def test_the_migrations_form_one_line_numbered_in_order() -> None:
    """Work merged from parallel branches once left two heads (0008 and 0009): every
    database open then failed with Alembic's 'multiple heads'."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    scripts = ScriptDirectory.from_config(config)
    assert len(scripts.get_heads()) == 1
    chain = [s.revision for s in scripts.walk_revisions()]  # newest first
    assert chain == [f"{n:04d}" for n in range(len(chain), 0, -1)]


@pytest.mark.creates_database("the migrations themselves, from an empty file")
def test_migrations_create_exactly_the_tables_the_code_uses(database_url: str) -> None:
    store = Store.open(database_url)
    with store.engine.connect() as connection:
        # compare_type: a column whose type differs between the migration and the model
        # (a String that should be Text, a naive DateTime) counts too.
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, SQLModel.metadata)
        assert differences == []
        if store.engine.dialect.name == "sqlite":
            assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    store.close()
    Store.open(database_url).close()  # migrating again is a no-op


def test_migrations_run_from_an_empty_postgresql_database(postgres: Postgres) -> None:
    """The template the other PostgreSQL tests copy is migrated once; this migrates from
    nothing, the way a new installation does, and then not at all the second time."""
    name, url = postgres.fresh(migrated=False)
    try:
        store = Store.open(url)
        with store.engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            assert compare_metadata(context, SQLModel.metadata) == []
        store.close()
        Store.open(url).close()
    finally:
        postgres.drop(name)


def test_snapshot_round_trips_and_diffs_to_nothing(database_url: str) -> None:
    store = Store.open(database_url)
    snap = snapshot(thread("t1", msg("1", body="@livereview hi"), msg("2", ALICE, "more", at=1)))
    store.transaction(snapshots.ingest, snap, diff(None, snap), [], IDENTITY, T0)
    loaded = store.transaction(snapshots.load, KEY)
    assert loaded == snap
    assert diff(loaded, snap) == []
    store.close()


def test_commit_messages_authors_and_reaction_times_round_trip(database_url: str) -> None:
    """What the model keeps of the host (migration 0014): a commit's whole message and its
    author, and when a reaction was made — or that the host did not say (Bitbucket)."""
    store = Store.open(database_url)
    bot, alice = Actor(BOT.id, BOT.username), Actor(ALICE.id, ALICE.username)  # kept of them
    question = replace(msg("1", body="@livereview hi"), reactions=(
        Reaction("eyes", bot, "r1", T0 + timedelta(seconds=3)), Reaction("heart", alice, "r2")))
    snap = replace(snapshot(thread("t1", question)), commits=(
        Commit("c2", "Guard the cache", T0, ("c1",), "Guard the cache\n\nReaders saw torn "
               "writes.", "Bob Builder"), Commit("c1", "Start", T0)))
    store.transaction(snapshots.ingest, snap, diff(None, snap), [], IDENTITY, T0)
    loaded = store.transaction(snapshots.load, KEY)
    assert loaded == snap
    assert loaded is not None and loaded.commits and loaded.commits[0].author == "Bob Builder"
    [dated, undated] = loaded.messages()["1"].reactions
    assert dated.created_at == T0 + timedelta(seconds=3) and undated.created_at is None
    store.close()


def test_the_conversation_row_keeps_the_newest_human_activity_and_touch_moves_only_the_read_time(
        database_url: str) -> None:
    """The row written without the ORM (store/snapshots.py): a new MR's row, its update
    over the stored one, and `touch` of a re-read that changed nothing."""
    store = Store.open(database_url)
    minutes = [T0 + timedelta(minutes=n) for n in range(60)]
    first = snapshot(thread("t1", msg("1", ALICE, "a question", at=10)))
    store.transaction(snapshots.ingest, first, diff(None, first), [], IDENTITY, minutes[20])
    assert store.transaction(snapshots.active_mrs, "gl", minutes[10]) == {KEY}
    assert store.transaction(snapshots.active_mrs, "gl", minutes[11]) == set()
    assert store.transaction(snapshots.fetch_marks, "gl") == {KEY: (T0, minutes[20])}
    # Alice's note deleted, the bot's added, the title edited: the activity stays hers.
    second = replace(snapshot(thread("t2", msg("2", BOT, "an answer", thread="t2", at=30))),
                     mr=replace(first.mr, title="Add a lock, reviewed", updated_at=minutes[30]))
    store.transaction(snapshots.ingest, second, diff(first, second), [], IDENTITY,
                      minutes[40], first)
    assert store.transaction(snapshots.load, KEY) == second
    assert store.transaction(snapshots.active_mrs, "gl", minutes[10]) == {KEY}
    assert store.transaction(snapshots.active_mrs, "gl", minutes[11]) == set()
    store.transaction(snapshots.touch, KEY, minutes[50])
    store.transaction(snapshots.touch, replace(KEY, iid=8), minutes[50])  # none stored
    assert store.transaction(snapshots.fetch_marks, "gl") == {KEY: (minutes[30], minutes[50])}
    assert store.transaction(snapshots.load, KEY) == second
    store.close()


def test_a_second_trigger_for_the_same_message_is_a_no_op(database_url: str) -> None:
    store = Store.open(database_url)
    request = ReplyRequest(KEY, "t1", "1", JobReason.MENTION, T0)
    snap = snapshot(thread("t1", msg("1")))
    [(job_id, key)] = store.transaction(snapshots.ingest, snap, [], [request], IDENTITY, T0)
    assert key == request.key and job_id > 0
    assert store.transaction(snapshots.ingest, snap, [], [request, request], IDENTITY, T0) == []
    assert store.transaction(jobs.counts) == {"pending": 1}
    store.close()


@pytest.mark.parametrize("apart", [False, True], ids=["in-process", "daemon-child"])
def test_replicas_starting_together_migrate_an_empty_postgresql_database_once(
        postgres: Postgres, apart: bool) -> None:
    """Without a lock each would CREATE the tables and all but one fail (a unique
    violation in PostgreSQL's catalog): the daemons started together must all come up,
    whether they upgrade in-process (`db migrate`, the tools) or in a child (the daemon:
    store/migrate_apart.py)."""
    name, url = postgres.fresh(migrated=False)
    try:
        pool = ThreadPoolExecutor(4)
        futures = [pool.submit(Store.open, url, apart=apart) for _ in range(4)]
        try:  # bounded: without the lock the losers may also wait on each other's DDL
            stores = [future.result(timeout=60) for future in futures]
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        for store in stores:
            assert store.transaction(jobs.counts) == {}
            store.close()
    finally:
        postgres.drop(name)


def test_commits_not_read_are_stored_and_loaded_as_not_read_and_then_as_read(
        database_url: str) -> None:
    """Migration 0016: a snapshot stored without its commits loads without them (None),
    not as an MR with no commits; stored again with them, it loads with them."""
    store = Store.open(database_url)
    unread = replace(snapshot(thread("t1", msg("1"))), commits=None)
    store.transaction(snapshots.ingest, unread, diff(None, unread), [], IDENTITY, T0)
    assert store.transaction(snapshots.load, KEY) == unread
    none = replace(unread, commits=())
    store.transaction(snapshots.ingest, none, [], [], IDENTITY, T0, unread)
    assert store.transaction(snapshots.load, KEY) == none
    read = replace(unread, commits=(Commit("c1", "Start", T0),))
    store.transaction(snapshots.ingest, read, [], [], IDENTITY, T0, none)
    assert store.transaction(snapshots.load, KEY) == read
    store.close()


def test_diff_refs_not_read_are_stored_and_loaded_as_not_read_and_then_as_read(
        database_url: str) -> None:
    """Migration 0017: an MR stored from its listing row (no diff refs) loads with them None,
    never as empty shas; stored again with them, or touched with them, it loads with them."""
    store = Store.open(database_url)
    read = snapshot(thread("t1", msg("1")))
    unread = replace(read, mr=replace(read.mr, base_sha=None, start_sha=None))
    store.transaction(snapshots.ingest, unread, diff(None, unread), [], IDENTITY, T0)
    loaded = store.transaction(snapshots.load, KEY)
    assert loaded == unread and loaded is not None and not loaded.mr.refs_read
    store.transaction(snapshots.ingest, read, [], [], IDENTITY, T0, unread)
    assert store.transaction(snapshots.load, KEY) == read
    store.transaction(snapshots.ingest, unread, [], [], IDENTITY, T0, read)
    store.transaction(snapshots.touch, KEY, T0, read.mr)
    assert store.transaction(snapshots.load, KEY) == read
    store.close()
