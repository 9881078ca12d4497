"""Every test starts with structlog's defaults: a command run in-process (`main([...])`)
configures logging for the whole process, and a later test's `capture_logs` would then
miss the events that configuration filters out (the demo logs warnings only)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from hypothesis import settings

from tests.hypothesis_tiers import FAST

# Each xdist worker imports every test module, and pytest rewrites a module's asserts again
# unless it may keep the result in __pycache__ (git ignores it): under PYTHONDONTWRITEBYTECODE
# that was 6 of the 10 CPU seconds each worker spends collecting (docs/development.md).
sys.dont_write_bytecode = False


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
    "tests/e2e/test_demo.py", "tests/e2e/test_deferred_imports.py", "tests/e2e/test_faults.py",
    "tests/e2e/test_gitlab_daemon.py",
    "tests/e2e/test_github_many_repos.py", "tests/e2e/test_long_threads.py",
    "tests/e2e/test_mcp_no_config.py", "tests/e2e/test_mcp_stdio.py",
    "tests/e2e/test_operations.py", "tests/e2e/test_progress.py",
    "tests/e2e/test_redaction.py", "tests/e2e/test_replicas.py",
    "tests/e2e/test_reply_race.py", "tests/e2e/test_review_crash.py", "tests/e2e/test_sandbox.py",
    "tests/e2e/test_review_requested_daemon.py",
    "tests/e2e/test_settings_cli.py", "tests/e2e/test_sick_database.py",
    "tests/e2e/test_systemd.py", "tests/e2e/test_tls.py", "tests/e2e/test_tools_daemon.py",
    "tests/contract/test_listing_large.py", "tests/contract/test_tools_large.py",
    "tests/contract/test_tools_one_file.py",  # 3 000-file MRs; test_tools_hosts: --path
})
SLOW_TESTS = frozenset({
    "tests/contract/test_review_contract.py::test_an_mr_of_3000_files_is_read_one_file_at_a_time",
    # property tests of hundreds of examples, each a store or a daemon cycle: minutes loaded
    "tests/unit/test_snapshot_save.py::test_whatever_changed_loading_gives_the_new_snapshot",
    "tests/e2e/test_attacks.py::test_whatever_a_comment_says_the_reply_is_safe",
    "tests/e2e/test_run_web.py::test_run_serves_the_console_while_it_polls_and_stops_with_it",
    "tests/e2e/test_moved_lines_gitlab.py::"
    "test_a_daemon_killed_between_the_note_and_the_answer_posts_each_once",
    # one subprocess CLI (or script) each, in modules of in-process tests
    "tests/e2e/test_first_sight.py::"
    "test_a_daemon_stopped_mid_sweep_exits_within_its_grace_and_the_next_start_resumes",
    "tests/e2e/test_first_sight.py::test_a_daemon_stopped_while_it_lists_a_big_instance_exits_at_once",
    "tests/e2e/test_local_review.py::test_wait_in_another_process_gets_a_person_s_reply",
    "tests/e2e/test_web_command.py::test_livereview_help_does_not_import_the_web_stack",
    "tests/unit/test_logging.py::"
    "test_a_configuration_given_before_structlog_is_loaded_applies_when_it_is",
    "tests/unit/test_release.py::"
    "test_livereview_version_prints_the_one_version_the_package_and_its_metadata_share",
    "tests/unit/test_settings_files.py::test_a_file_the_user_may_not_read",
    # four daemon-style upgrades in child interpreters (store/migrate_apart.py)
    "tests/unit/test_store.py::"
    "test_replicas_starting_together_migrate_an_empty_postgresql_database_once",
    "tests/unit/test_config_reference.py::test_the_script_reports_a_stale_page_with_exit_1",
    "tests/unit/test_docs.py::test_the_site_builds_without_a_broken_link",
})


# The PostgreSQL pass (`LIVEREVIEW_TEST_BACKEND=postgresql pytest -m pg`, docs/DESIGN.md §12):
# what the back end changes and the SQLite pass did not run on PostgreSQL already. A test
# taking `database_url` or `postgres_url` runs on PostgreSQL in every run where a server is
# up (CI's first pass): the store and lease suites, test_leases, test_reply_claims,
# test_crash (kill -9), test_replicas, test_replica_polling, test_health_shards,
# test_reply_race, test_db_commands (`db copy`, `db migrate`), test_unstorable_text; the
# PostgreSQL pass would only repeat them. Listed here, with why: tests whose databases
# come from `url_for` (the sandboxes, subprocess daemons), which only this pass puts there.
PG_PASS: dict[str, str] = {
    "tests/e2e/test_backend.py": "the switch itself: a sandbox config names the run's back end",
    # one module per host through the whole reply path, and one through the review path
    "tests/e2e/test_gitlab_once.py": "GitLab: ack, answer, threads, retries in the store",
    "tests/e2e/test_github_once.py": "GitHub: the reply path",
    "tests/e2e/test_bitbucket_cloud_once.py": "Bitbucket Cloud: ack replies and answers",
    "tests/e2e/test_bitbucket_server_once.py": "Bitbucket Data Center: the reply path",
    "tests/e2e/test_review_gitlab.py": "GitLab: review runs, findings, verdict rows",
    "tests/e2e/test_review_github.py": "GitHub: the review path",
    "tests/e2e/test_review_bitbucket_cloud.py": "Bitbucket Cloud: the review path",
    "tests/e2e/test_review_bitbucket_server.py": "Bitbucket Data Center: the review path",
    # crashes and restarts: a killed daemon's leases outlive it on PostgreSQL only
    "tests/e2e/test_gitlab_daemon.py": "a restarted daemon answers nothing again",
    "tests/e2e/test_bitbucket_server_crash.py": "kill -9 while it answers",
    "tests/e2e/test_bitbucket_cloud_daemon.py": "kill -9 while it acks and answers",
    "tests/e2e/test_review_crash.py": "kill -9 and lost responses in a review",
    "tests/e2e/test_faults.py::test_a_second_sigterm_exits_at_once_and_loses_nothing":
        "a stopped daemon's leases expire before the next takes its jobs over",
    "tests/e2e/test_tools_daemon.py": "tool replies and the daemon's, across processes",
    "tests/e2e/test_lessons.py": "lessons merged on import by their unique key",
    "tests/unit/test_tools_replied.py": "replied state read back from the store",
    # hostile text into PostgreSQL's text type: this pass found NUL and lone surrogates
    "tests/e2e/test_attacks.py::test_whatever_a_comment_says_the_reply_is_safe":
        "any comment text stored and answered",
    "tests/unit/test_snapshot_save.py::test_whatever_changed_loading_gives_the_new_snapshot":
        "any snapshot change saved as row diffs",
}
PG_MODULES = frozenset(name.partition("::")[0] for name in PG_PASS)


def pytest_configure(config: pytest.Config) -> None:
    """The fast tier runs each property on fewer examples (tests/hypothesis_tiers.py); a
    profile named on the command line wins."""
    if config.option.markexpr == "not slow" and not config.getoption("hypothesis_profile"):
        settings.load_profile(FAST)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """`-m pg` alone does not import the modules that hold no test of the pass, nor the fast
    tier `-m "not slow"` the modules whose every test is slow (each xdist worker collects
    on its own: seconds of CPU each)."""
    tier = config.option.markexpr
    if tier not in ("pg", "not slow") or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    module = collection_path.relative_to(config.rootpath).as_posix()
    if tier == "pg":
        return module not in PG_MODULES or None
    return module in SLOW_MODULES or None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module, _, rest = item.nodeid.partition("::")
        test = f"{module}::{rest.split('[')[0]}"
        # a browser test starts Chromium and its driver: processes of seconds of CPU each
        if module in SLOW_MODULES or test in SLOW_TESTS or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)
        if module in PG_PASS or test in PG_PASS:
            item.add_marker(pytest.mark.pg)
