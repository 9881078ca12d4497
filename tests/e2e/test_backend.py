"""The run's back end (LIVEREVIEW_TEST_BACKEND, docs/DESIGN.md §12): a sandbox's config, and so the
CLI and its daemons, use the database the sandbox names — PostgreSQL in a PostgreSQL run."""

from __future__ import annotations

import pytest

from tests.databases import ON_POSTGRESQL, query
from tests.e2e.conftest import GitHubSandbox, Sandbox


@pytest.mark.creates_database("`once` creates the SQLite file the config names")
def test_the_sandbox_config_names_the_run_s_back_end_and_once_writes_there(
        sandbox: Sandbox) -> None:
    assert sandbox.database_url.startswith("postgresql" if ON_POSTGRESQL else "sqlite:///")
    assert f'database_url = "{sandbox.database_url}"' in sandbox.config.read_text()
    sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    assert query(sandbox.db, "SELECT state FROM reply_jobs") == [("posted",)]
    assert sandbox.db.exists() is not ON_POSTGRESQL  # no SQLite file beside PostgreSQL


def test_the_github_sandbox_follows_the_back_end_too(gh: GitHubSandbox) -> None:
    assert f'database_url = "{gh.database_url}"' in gh.config.read_text()
    assert gh.database_url.startswith("postgresql" if ON_POSTGRESQL else "sqlite:///")


@pytest.mark.sqlite_only("checks that the marker skips in a PostgreSQL run")
def test_a_sqlite_only_test_never_runs_on_postgresql() -> None:
    assert not ON_POSTGRESQL
