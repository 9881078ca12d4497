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
    "tests/e2e/test_cli_fuzz_commands.py", "tests/e2e/test_cli_promises.py",
    "tests/e2e/test_crash.py", "tests/e2e/test_local_concurrency.py",
    "tests/e2e/test_web_browser.py",
    "tests/e2e/test_demo.py", "tests/e2e/test_faults.py", "tests/e2e/test_gitlab_daemon.py",
    "tests/e2e/test_github_many_repos.py", "tests/e2e/test_long_threads.py",
    "tests/e2e/test_mcp_no_config.py", "tests/e2e/test_mcp_stdio.py",
    "tests/e2e/test_operations.py",
    "tests/e2e/test_redaction.py", "tests/e2e/test_replicas.py",
    "tests/e2e/test_reply_race.py", "tests/e2e/test_review_crash.py", "tests/e2e/test_sandbox.py",
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
    # one subprocess CLI (or script) each, in modules of in-process tests
    "tests/e2e/test_first_sight.py::"
    "test_a_daemon_stopped_mid_sweep_exits_within_its_grace_and_the_next_start_resumes",
    "tests/e2e/test_first_sight.py::test_a_daemon_stopped_while_it_lists_a_big_instance_exits_at_once",
    "tests/e2e/test_local_review.py::test_wait_in_another_process_gets_a_person_s_reply",
    "tests/e2e/test_web_command.py::test_livereview_help_does_not_import_the_web_stack",
    "tests/unit/test_release.py::"
    "test_livereview_version_prints_the_one_version_the_package_and_its_metadata_share",
    "tests/unit/test_settings_files.py::test_a_file_the_user_may_not_read",
    "tests/unit/test_config_reference.py::test_the_script_reports_a_stale_page_with_exit_1",
    "tests/unit/test_docs.py::test_the_site_builds_without_a_broken_link",
})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module, _, rest = item.nodeid.partition("::")
        if module in SLOW_MODULES or f"{module}::{rest.split('[')[0]}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)
