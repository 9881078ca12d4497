"""`livereview db migrate` and `db copy` (docs/DESIGN.md §12): a user moves from SQLite to
PostgreSQL without losing history or answering anything twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from livereview.cli.commands import main
from livereview.core.triggers import replied_to
from tests.databases import Postgres, job_rows
from tests.e2e.conftest import Sandbox


def _use(sandbox: Sandbox, url: str) -> None:
    text_ = sandbox.config.read_text(encoding="utf-8")
    sandbox.config.write_text(text_.replace(sandbox.database_url, url), encoding="utf-8")


def _count(url: str, table: str) -> int:
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as connection:
            return int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())  # noqa: S608
    finally:
        engine.dispose()


@pytest.mark.sqlite_only("`db copy` from a SQLite file (to PostgreSQL in the SQLite pass)")
def test_copy_to_postgresql_keeps_history_and_answers_nothing_twice(
        sandbox: Sandbox, postgres: Postgres, capsys: pytest.CaptureFixture[str]) -> None:
    first = sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    assert len(sandbox.bot_notes()) == 1
    name, target = postgres.fresh(migrated=False)  # `db copy` migrates it first
    try:
        source = f"sqlite:///{sandbox.db}"
        capsys.readouterr()
        assert main(["db", "copy", "--from", source, "--to", target]) == 0
        out = capsys.readouterr().out
        assert "every table's row count matches the source" in out
        for table in ("reply_jobs", "mr_messages", "mr_conversations", "poll_watermarks"):
            assert _count(target, table) == _count(source, table) > 0
        assert main(["db", "copy", "--from", source, "--to", target]) == 0  # idempotent
        assert "nothing written" in capsys.readouterr().out

        _use(sandbox, target)
        second = sandbox.note("@livereview and what about writes?")
        assert sandbox.once() == 0
        answered = sorted(str(replied_to(str(n["body"]))) for n in sandbox.bot_notes())
        assert answered == sorted([str(first["id"]), str(second["id"])])  # once each
        # The new job got a fresh id: PostgreSQL's sequence starts after the copied rows.
        assert {r["id"] for r in job_rows(target)} == {1, 2}  # ids are unique: two rows
    finally:
        postgres.drop(name)


@pytest.mark.sqlite_only("`db copy` from a SQLite file (to PostgreSQL in the SQLite pass)")
def test_copy_refuses_a_target_holding_other_data(
        sandbox: Sandbox, postgres_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    _use(sandbox, postgres_url)
    sandbox.note("@livereview a question only the target has")
    assert sandbox.once() == 0
    before = job_rows(postgres_url)
    capsys.readouterr()
    assert main(["db", "copy", "--from", f"sqlite:///{sandbox.db}", "--to",
                 postgres_url]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already holds other data" in err
    assert job_rows(postgres_url) == before


@pytest.mark.parametrize(("argv", "says"), [
    (["db", "copy", "--from", "mysql://x/y", "--to", "sqlite:///x.db"], "--from: expected"),
    (["db", "copy", "--from", "sqlite:///a.db", "--to", "nonsense"], "--to: expected"),
    (["db", "copy", "--from", "sqlite:///a.db", "--to", "sqlite:///a.db"], "the same"),
    (["db", "migrate", "--url", "postgres:/x"], "--url: expected"),
])
def test_bad_urls_are_one_line_and_exit_2(argv: list[str], says: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err


def test_copy_from_a_missing_file_is_one_line_and_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none.db"
    assert main(["db", "copy", "--from", f"sqlite:///{missing}", "--to",
                 f"sqlite:///{tmp_path / 'to.db'}"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no database at" in err
    assert not missing.exists()


@pytest.mark.creates_database("`db migrate` creates and migrates the file")
def test_migrate_brings_an_empty_database_to_the_schema_and_is_idempotent(
        sandbox: Sandbox, database_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    _use(sandbox, database_url)
    assert main(["--config", str(sandbox.config), "db", "migrate"]) == 0
    assert main(["db", "migrate", "--url", database_url]) == 0
    assert capsys.readouterr().out.count("schema is current") == 2
    assert _count(database_url, "reply_jobs") == 0
