"""A sick database is said once, in one line, with what to do — and the daemon stops where
nothing can work (a damaged file, a file deleted under it) instead of running on mute."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, MutableMapping
from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog
from sqlalchemy.exc import OperationalError
from sqlmodel import Session

from livereview.core.model import JobReason, MRKey, ReplyRequest
from livereview.log_setup import FailureLog
from livereview.store import db, jobs, state
from livereview.store import engine as engines
from livereview.store.db import Store
from livereview.store.engine import StoreCorrupt, StoreError, StoreFull, StoreGone
from livereview.store.faults import revisions
from tests.e2e.conftest import TOKEN, Daemon, Sandbox, StartDaemon, fill, wait_for, write_config

# Another program's file, a full disk, a damaged page: each meets the daemon's own creation
# and migration of its file, not a copy of the migrated template (tests/sqlite_template.py).
pytestmark = pytest.mark.creates_database("the daemon creates and migrates its own file")


def damage(db: Path, *tables: str) -> None:
    """Overwrite the root pages of each table and its indexes with garbage, as a failing
    disk would."""
    with contextlib.closing(sqlite3.connect(db)) as conn:
        roots = [page for (name, page) in conn.execute(
            "SELECT tbl_name, rootpage FROM sqlite_master WHERE rootpage > 0") if name in tables]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    assert roots
    with db.open("r+b") as handle:
        for page in roots:
            handle.seek((page - 1) * page_size)
            handle.write(b"\xff" * page_size)


def sandbox_cli(sandbox: Sandbox) -> list[str]:
    return [sys.executable, "-m", "livereview", "--config", str(sandbox.config)]


def events(daemon: Daemon) -> list[str]:
    return [json.loads(line)["event"] for line in daemon.output().splitlines()
            if line.startswith("{")]


def said(logs: list[MutableMapping[str, object]]) -> list[object]:
    """The events of captured logs an operator reads (INFO and above)."""
    return [entry["event"] for entry in logs if entry["log_level"] != "debug"]


def started(daemon: Daemon) -> bool:
    return "daemon_started" in events(daemon)


@pytest.mark.sqlite_only("a damaged page of the database file")
def test_a_damaged_page_stops_the_daemon_with_one_line_saying_what_to_do(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> None:
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 log_format="json")
    sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    daemon = start_daemon()
    wait_for(lambda: started(daemon))
    damage(sandbox.db, "mr_messages", "reply_jobs", "poll_watermarks")
    sandbox.note("@livereview and now?")  # the next cycle must read and write those pages
    assert daemon.process.wait(timeout=30) == 1
    output = daemon.output()
    assert "Traceback" not in output
    last = output.strip().splitlines()[-1]
    assert last.startswith(f"livereview: database {sandbox.db} is damaged (database disk "
                           "image is malformed")
    assert f"restore {sandbox.db} from a backup" in last
    assert len(output.strip().splitlines()) <= 5  # was: 1 581 lines and 40 tracebacks in 21 s


@pytest.mark.sqlite_only("a damaged database file")
def test_a_damaged_file_at_start_is_one_line_saying_what_to_do(sandbox: Sandbox) -> None:
    assert sandbox.once() == 0
    damage(sandbox.db, "provider_identities")
    result = subprocess.run(  # noqa: S603 - our own CLI
        [*sandbox_cli(sandbox), "run"], capture_output=True, text=True, timeout=60,
        check=False, env={**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN})
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"livereview: database {sandbox.db} is damaged (database disk "
                           "image is malformed")
    assert f"restore {sandbox.db} from a backup" in line


@pytest.mark.sqlite_only("another program's SQLite file")
@pytest.mark.parametrize("command", ["once", "pending"])
def test_another_programs_database_is_refused_not_upgraded(sandbox: Sandbox,
                                                           command: str) -> None:
    """A database_url pointing at another program's SQLite file got "older than this
    version: `livereview once` upgrades it" — and once wrote our tables into it."""
    sandbox.db.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(sandbox.db)) as conn, conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    result = subprocess.run(  # noqa: S603 - our own CLI
        [*sandbox_cli(sandbox), command], capture_output=True, text=True, timeout=60,
        check=False, env={**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN})
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"livereview: database {sandbox.db} holds tables livereview did not create "
        "(invoices): point database_url at a database of its own")
    with contextlib.closing(sqlite3.connect(sandbox.db)) as conn:
        assert [name for (name,) in conn.execute("SELECT name FROM sqlite_master")] == [
            "invoices"]


@pytest.mark.sqlite_only("the database file deleted under the daemon")
def test_a_database_deleted_under_the_daemon_stops_it(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> None:
    daemon = start_daemon()
    wait_for(lambda: "daemon_started" in daemon.output())
    for path in sandbox.db.parent.glob("livereview.db*"):
        path.unlink()
    assert daemon.process.wait(timeout=30) == 1
    last = daemon.output().strip().splitlines()[-1]
    assert last == (f"livereview: database {sandbox.db} was deleted or replaced while "
                    "livereview was using it: restore it from a backup or let the restart "
                    "create a new one (the bot's reply markers keep it from answering twice)")
    assert not sandbox.db.exists()  # nothing recreated in its place



@pytest.mark.sqlite_only("the database file on a full disk")
def test_a_full_disk_is_said_once_and_once_more_when_it_passes(
        sandbox: Sandbox, tiny_disk: Path, start_daemon: StartDaemon) -> None:
    db = tiny_disk / "livereview.db"
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, db,
                 log_format="json")
    daemon = start_daemon("--log-level", "DEBUG")  # each failed transaction, said or not
    wait_for(lambda: started(daemon))
    filler = fill(tiny_disk)
    sandbox.note("@livereview is this lock needed?")  # each cycle now fails to store it
    wait_for(lambda: "store_unavailable" in events(daemon))
    ticks = events(daemon).count("store_unavailable")
    failed = events(daemon).count("store_transaction_failed")
    # Three more transactions fail the same way (the cycles' reads between them work).
    wait_for(lambda: events(daemon).count("store_transaction_failed") >= failed + 3)
    filler.unlink()
    wait_for(lambda: "store_unavailable_recovered" in events(daemon), timeout=30)
    assert daemon.stop() == 0
    seen = events(daemon)
    assert (ticks, seen.count("store_unavailable"), seen.count("store_unavailable_recovered")
            ) == (1, 1, 1)  # was: one line per cycle, 28 in 30 s


@pytest.mark.sqlite_only("the database file on a full disk")
async def test_a_full_disk_is_not_over_when_a_kind_that_failed_to_write_only_reads(
        tiny_disk: Path) -> None:
    """A full disk fails writes, not reads: `watermark` of a scope it has stored reads, of a
    new scope writes. Its read working was taken for the disk's recovery, and the next write
    said the full disk again: two lines per cycle with many merge requests."""
    store = Store.open(f"sqlite:///{tiny_disk / 'livereview.db'}")
    now = datetime.now(UTC)
    await store.run(state.watermark, "gl", "acme/known", now)
    filler = fill(tiny_disk)
    with structlog.testing.capture_logs() as logs:
        for _ in range(2):
            with pytest.raises(StoreFull):
                await store.run(state.watermark, "gl", "acme/new", now)
            await store.run(state.watermark, "gl", "acme/known", now)  # the same kind reads
        filler.unlink()
        await store.run(state.watermark, "gl", "acme/known", now)  # a read proves nothing
        assert said(logs) == ["store_unavailable"]
        await store.run(state.watermark, "gl", "acme/new", now)  # the write works again
    store.close()
    assert said(logs) == ["store_unavailable", "store_unavailable_recovered"]


@pytest.mark.sqlite_only("the database file on a full disk")
async def test_a_full_disk_is_over_when_a_kind_that_failed_writes_rows_with_returning(
        tiny_disk: Path) -> None:
    """Review s6: `jobs.enqueue` of two new jobs flushes `INSERT … RETURNING id` (SQLAlchemy's
    insertmanyvalues); on SQLite the cursor's rowcount is 0 until the rows are fetched, so
    the `after_cursor_execute` count never sees these writes and the episode never ends."""
    store = Store.open(f"sqlite:///{tiny_disk / 'livereview.db'}")
    now = datetime.now(UTC)
    mr = MRKey("gl", "acme/app", 1)

    def two(n: int) -> list[ReplyRequest]:
        return [ReplyRequest(mr, f"t{n}-{k}", f"m{n}-{k}", JobReason.MENTION, now)
                for k in range(2)]

    filler = fill(tiny_disk)
    with structlog.testing.capture_logs() as logs:
        with pytest.raises(StoreFull):
            await store.run(jobs.enqueue, two(0), now)
        filler.unlink()
        assert len(await store.run(jobs.enqueue, two(1), now)) == 2  # two rows written
    store.close()
    assert said(logs) == ["store_unavailable", "store_unavailable_recovered"]


@pytest.mark.sqlite_only("the database file on a full disk")
async def test_a_full_disk_is_over_when_any_kind_writes_though_the_one_that_failed_never_comes_back(
        tiny_disk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review s6: a kind that failed on a full disk may never run again (a one-shot mark,
    a watermark of a scope now stored elsewhere): once it has not been tried for a while, a
    write of another kind proves the disk writable, and the episode is over."""
    monkeypatch.setattr(db, "UNTRIED_KIND_FORGOTTEN_SECONDS", 0.0)
    store = Store.open(f"sqlite:///{tiny_disk / 'livereview.db'}")
    now = datetime.now(UTC)
    mr = MRKey("gl", "acme/app", 1)
    filler = fill(tiny_disk)
    with structlog.testing.capture_logs() as logs:
        with pytest.raises(StoreFull):
            await store.run(state.watermark, "gl", "acme/new", now)
        filler.unlink()
        request = ReplyRequest(mr, "t", "m", JobReason.MENTION, now)
        assert len(await store.run(jobs.enqueue, [request], now)) == 1  # another kind writes
    store.close()
    assert said(logs) == ["store_unavailable", "store_unavailable_recovered"]


class _BigWrite:
    """A kind of transaction whose write does not fit on a nearly full disk (SQLite says
    SQLITE_FULL, as sqlite3 reports it) until `fits`, while small writes still do."""

    def __init__(self) -> None:
        self.fits = False

    def __call__(self, session: Session, now: datetime) -> None:
        if not self.fits:
            full = sqlite3.OperationalError("database or disk is full")
            full.sqlite_errorname = "SQLITE_FULL"
            raise OperationalError("INSERT INTO mr_conversations …", {}, full)
        state.watermark(session, "gl", "acme/big", now)


async def test_a_nearly_full_disk_is_said_once_while_small_writes_fit_and_a_big_one_does_not(
        tmp_path: Path) -> None:
    """Review s6: with any write ending the episode, small writes that still fit said the
    disk recovered every cycle, and the big one said it full again: a pair of lines a
    cycle. The episode ends when the kind that failed writes."""
    store = Store.open(f"sqlite:///{tmp_path / 'livereview.db'}")
    now = datetime.now(UTC)
    big = _BigWrite()
    with structlog.testing.capture_logs() as logs:
        for cycle in range(3):
            with pytest.raises(StoreFull):
                await store.run(big, now)
            await store.run(state.watermark, "gl", f"acme/small-{cycle}", now)  # fits
        assert said(logs) == ["store_unavailable"]
        big.fits = True
        await store.run(big, now)
    store.close()
    assert said(logs) == ["store_unavailable", "store_unavailable_recovered"]


def test_a_failure_log_says_a_failure_once_per_cause_and_once_when_it_ends() -> None:
    failures = FailureLog(structlog.get_logger("test"))
    with structlog.testing.capture_logs() as logs:
        for _ in range(3):
            failures.failed("store", "store_unavailable", "disk full")
        failures.failed("store", "store_unavailable", "read-only")
        failures.ok("store", "store_unavailable")
        failures.ok("store", "store_unavailable")
    assert [(e["event"], e.get("reason")) for e in logs] == [
        ("store_unavailable", "disk full"), ("store_unavailable", "read-only"),
        ("store_unavailable_recovered", None)]


@pytest.mark.sqlite_only("the database file after a fatal error")
def test_after_a_fatal_error_the_store_does_not_touch_the_file_again(tmp_path: Path) -> None:
    db = tmp_path / "livereview.db"
    Store.open(f"sqlite:///{db}").close()
    damage(db, "reply_jobs")
    store = Store.open(f"sqlite:///{db}")
    with pytest.raises(StoreCorrupt) as first:
        store.transaction(jobs.listing)
    db.unlink()
    with pytest.raises(StoreCorrupt) as second:  # the first verdict stands
        store.transaction(jobs.listing)
    assert second.value is first.value
    store.close()
    other = Store.open(f"sqlite:///{tmp_path / 'other.db'}")
    (tmp_path / "other.db").rename(tmp_path / "moved.db")
    with pytest.raises(StoreGone):
        other.transaction(jobs.listing)
    other.close()


def _older(db: Path) -> None:
    """A database at the revision before this version's head, as the previous release left
    it (WAL mode, as every livereview database is)."""
    from alembic import command

    known, head = revisions()
    engine = engines.create(f"sqlite:///{db}")
    config = engines._config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, f"{head}-1")
    engine.dispose()
    assert engines.check_schema(engines.create(f"sqlite:///{db}"), newer_only=True) in known


@pytest.mark.sqlite_only("a SQLite write lock held by another process")
def test_an_upgrade_in_the_child_process_fails_with_the_line_an_in_process_one_says(
        tmp_path: Path) -> None:
    """The daemon upgrades in a child (store/migrate_apart.py): its StoreError reaches the
    daemon as the same class and the same one line, and the database stays as it was."""
    said: list[tuple[type[Exception], str]] = []
    for apart in (False, True):
        db = tmp_path / f"apart-{apart}" / "livereview.db"
        db.parent.mkdir()
        _older(db)
        with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as writer:
            writer.execute("BEGIN IMMEDIATE")  # another writer holds the lock throughout
            with pytest.raises(StoreError) as refused:
                Store.open(f"sqlite:///{db}", busy_timeout_seconds=0.05, apart=apart)
            writer.execute("ROLLBACK")
        said.append((type(refused.value), str(refused.value).replace(str(db), "DB")))
        assert engines.check_schema(engines.create(f"sqlite:///{db}"), newer_only=True) \
            != revisions()[1]
    assert said[0] == said[1]
    assert said[1] == (StoreError, "database sqlite:///DB: database is locked")
