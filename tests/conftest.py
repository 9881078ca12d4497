"""Every test starts with structlog's defaults: a command run in-process (`main([...])`)
configures logging for the whole process, and a later test's `capture_logs` would then
miss the events that configuration filters out (the demo logs warnings only)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import structlog


@pytest.fixture(autouse=True)
def _structlog_defaults() -> Iterator[None]:
    yield
    structlog.reset_defaults()


pytest_plugins = ["tests.databases"]  # `database_url`: SQLite and PostgreSQL (docs/DESIGN.md §12)

# The `slow` tier, named in one place: what starts real daemons or CLIs as subprocesses
# (each a fresh interpreter, seconds of CPU), kills them with SIGKILL in loops, or reads
# MRs of thousands of files. `pytest -m "not slow"` is the fast tier; CI runs both.
SLOW_MODULES = frozenset({
    "tests/e2e/test_bitbucket_cloud_daemon.py", "tests/e2e/test_bitbucket_server_crash.py",
    "tests/e2e/test_cli.py", "tests/e2e/test_cli_fuzz.py", "tests/e2e/test_cli_imports.py",
    "tests/e2e/test_crash.py",
    "tests/e2e/test_demo.py", "tests/e2e/test_faults.py", "tests/e2e/test_gitlab_daemon.py",
    "tests/e2e/test_github_many_repos.py", "tests/e2e/test_long_threads.py",
    "tests/e2e/test_mcp_no_config.py", "tests/e2e/test_mcp_stdio.py",
    "tests/e2e/test_operations.py", "tests/e2e/test_progress.py",
    "tests/e2e/test_redaction.py", "tests/e2e/test_replicas.py",
    "tests/e2e/test_reply_race.py", "tests/e2e/test_review_crash.py", "tests/e2e/test_sandbox.py",
    "tests/e2e/test_review_requested_daemon.py",
    "tests/e2e/test_settings_cli.py", "tests/e2e/test_sick_database.py",
    "tests/e2e/test_systemd.py", "tests/e2e/test_tls.py", "tests/e2e/test_tools_daemon.py",
    "tests/contract/test_listing_large.py", "tests/contract/test_tools_large.py",
})
SLOW_TESTS = frozenset({
    "tests/contract/test_review_contract.py::test_an_mr_of_3000_files_is_read_one_file_at_a_time",
    # property tests of hundreds of examples, each a store or a daemon cycle: minutes loaded
    "tests/unit/test_snapshot_save.py::test_whatever_changed_loading_gives_the_new_snapshot",
    "tests/e2e/test_attacks.py::test_whatever_a_comment_says_the_reply_is_safe",
    "tests/e2e/test_run_web.py::test_run_serves_the_console_while_it_polls_and_stops_with_it",
    "tests/e2e/test_moved_lines_gitlab.py::"
    "test_a_daemon_killed_between_the_note_and_the_answer_posts_each_once",
})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module, _, rest = item.nodeid.partition("::")
        if module in SLOW_MODULES or f"{module}::{rest.split('[')[0]}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
