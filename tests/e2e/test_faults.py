"""Faults an operator meets over months: the daemon answers once, late, or not at all — and
says why — but never twice and never half."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import structlog

from livereview.app.daemon import App
from livereview.core.triggers import replied_to
from livereview.metrics import Metrics
from livereview.sandbox.llm_server import LLMFault
from livereview.settings import load
from tests.databases import query
from tests.e2e.conftest import (
    PROJECT,
    TAKEOVER,
    TOKEN,
    Daemon,
    Sandbox,
    fill,
    leases_expired,
    retries_due,
    wait_for,
    write_config,
)


def answers(sandbox: Sandbox, note_id: object) -> list[dict[str, object]]:
    return [n for n in sandbox.bot_notes() if replied_to(str(n["body"])) == str(note_id)]


def quick_retries(sandbox: Sandbox, **extra: object) -> None:
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 retry_base_seconds=0.05, **extra)


def job_states(sandbox: Sandbox) -> list[tuple[Any, ...]]:
    return query(sandbox.db, "SELECT state, last_error FROM reply_jobs ORDER BY id")


def test_a_truncated_answer_is_never_posted_and_is_retried(sandbox: Sandbox) -> None:
    quick_retries(sandbox)
    note = sandbox.note("@livereview is this lock needed?")
    sandbox.llm.llm.faults += [LLMFault(content="Yes, because", finish_reason="length"),
                               LLMFault(content="")]
    sandbox.once()
    assert sandbox.bot_notes() == []
    assert job_states(sandbox) == [("acked", "LLM answer was cut by the token limit")]
    retries_due(sandbox.db)
    sandbox.once()  # empty answer: still nothing posted
    retries_due(sandbox.db)
    assert sandbox.once() == 0
    [reply] = answers(sandbox, note["id"])
    assert "sandbox answer engine" in str(reply["body"])


def test_an_mr_merged_while_its_job_waits_is_skipped_with_a_reason(sandbox: Sandbox) -> None:
    quick_retries(sandbox)
    sandbox.note("@livereview is this lock needed?")
    sandbox.llm.llm.faults += [LLMFault(status=503)] * 3  # the call and the client's 2 retries
    sandbox.once()
    sandbox.gitlab.set_state(PROJECT, sandbox.iid, "merged")
    retries_due(sandbox.db)
    assert sandbox.once() == 0
    assert sandbox.bot_notes() == []
    assert job_states(sandbox) == [("skipped", "the MR is merged")]


def test_answer_closed_mrs_still_answers(sandbox: Sandbox) -> None:
    quick_retries(sandbox)
    sandbox.config.write_text(sandbox.config.read_text() + "\n[bot]\nanswer_closed_mrs = true\n")
    note = sandbox.note("@livereview is this lock needed?")
    sandbox.llm.llm.faults += [LLMFault(status=503)] * 3  # the call and the client's 2 retries
    sandbox.once()
    sandbox.gitlab.set_state(PROJECT, sandbox.iid, "closed")
    retries_due(sandbox.db)
    assert sandbox.once() == 0
    assert len(answers(sandbox, note["id"])) == 1


def test_another_bot_answering_instantly_does_not_loop_forever(sandbox: Sandbox) -> None:
    note = sandbox.note("@livereview is this lock needed?")
    sandbox.once()
    discussion = str(next(d["id"] for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid)
                          if d["notes"][0]["id"] == note["id"]))
    for _ in range(8):  # an echo bot (not in ignore_users) answers every reply within 1 s
        last = datetime.fromisoformat(str(sandbox.bot_notes()[-1]["created_at"]))
        sandbox.gitlab.add_note(PROJECT, sandbox.iid, author="echo", body="Interesting!",
                                reply_to_discussion=discussion,
                                created_at=last + timedelta(seconds=1))
        sandbox.once()
    assert len(sandbox.bot_notes()) == 5  # bot.max_consecutive_replies
    assert ("skipped", "loop guard: 5 bot replies in this thread without a human in "
            "between") in job_states(sandbox)


def test_a_forbidden_repo_is_unhealthy_and_recovers_by_itself(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    sandbox.gitlab.add_project("acme/gadgets")
    other = sandbox.gitlab.add_mr("acme/gadgets", title="Other", author="bob",
                                  files={"a.py": ("x = 1\n", "x = 2\n")})
    sandbox.config.write_text(sandbox.config.read_text()
                              + '\n[[repos]]\nhost = "gl"\npath = "acme/gadgets"\n')
    blocked = sandbox.gitlab.add_note("acme/gadgets", other, author="alice",
                                      body="@livereview over here?")
    ok = sandbox.note("@livereview is this lock needed?")
    sandbox.gitlab.inject_fault("GET", r"/projects/acme%2Fgadgets$", status=403,
                                body='{"message":"403 Forbidden"}')
    assert sandbox.once() == 0
    assert len(answers(sandbox, ok["id"])) == 1  # the healthy repo goes on
    assert answers(sandbox, blocked["id"]) == []
    assert sandbox.once() == 0  # the token was fixed: the cold cycle re-checks the repo
    assert len(answers(sandbox, blocked["id"])) == 1


def test_a_second_sigterm_exits_at_once_and_loses_nothing(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> None:
    quick_retries(sandbox, **TAKEOVER)
    sandbox.llm.llm.delay_seconds = 8.0  # the answer is slow: the job is in flight
    note = sandbox.note("@livereview is this lock needed?")
    daemon = start_daemon()
    wait_for(lambda: bool(sandbox.gitlab.awards_on(PROJECT, sandbox.iid, note["id"])))
    wait_for(lambda: len(sandbox.llm.llm.prompts) == 1)
    stops = daemon.output().count("stopping")
    daemon.process.send_signal(signal.SIGTERM)
    # The second SIGTERM once the first was handled (app.py logs `stopping`): sent sooner,
    # the two could arrive as one signal, and the daemon would stop gracefully instead.
    wait_for(lambda: daemon.output().count("stopping") > stops)
    daemon.process.send_signal(signal.SIGTERM)
    assert daemon.process.wait(timeout=30) == 1
    assert answers(sandbox, note["id"]) == []  # did not wait for the 8 s answer
    assert "forced_exit" in daemon.output()
    if sandbox.database_url.startswith("sqlite"):
        assert query(sandbox.db, "PRAGMA integrity_check") == [("ok",)]
    sandbox.llm.llm.delay_seconds = 0.0
    leases_expired(sandbox.db)
    assert sandbox.once() == 0
    assert len(answers(sandbox, note["id"])) == 1


@pytest.mark.sqlite_only("SQLite's file write lock (busy_timeout)")
def test_a_locked_database_is_one_clear_line_not_a_hang(sandbox: Sandbox) -> None:
    quick_retries(sandbox, busy_timeout_seconds=0.5)
    assert sandbox.once() == 0
    holder = sqlite3.connect(sandbox.db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    try:
        result = subprocess.run(  # noqa: S603 - our own CLI
            [sys.executable, "-m", "livereview", "--config", str(sandbox.config), "once"],
            capture_output=True, text=True, timeout=60, check=False,
            env={**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].endswith("database is locked")
    assert "Traceback" not in result.stderr


async def test_a_broken_host_is_logged_once_not_every_cycle(sandbox: Sandbox,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle()
        sandbox.gitlab.inject_fault("GET", r"/api/v4/merge_requests$", status=401, times=5,
                                    body='{"message":"401 Unauthorized"}')
        with structlog.testing.capture_logs() as logs:
            reports = [(await app.cycle())["gl"] for _ in range(6)]
    finally:
        await app.close()
    assert [r.ok for r in reports] == [False] * 5 + [True]
    assert [e["event"] for e in logs if "listing" in e["event"]] == [
        "host_listing_failed", "host_listing_failed_recovered"]
    assert "AuthFailed" in next(e["reason"] for e in logs if e["event"] == "host_listing_failed")




@pytest.mark.sqlite_only("the database file on a full disk")
def test_a_full_disk_loses_nothing_and_posts_nothing_twice(
        sandbox: Sandbox, tiny_disk: Path, start_daemon: Callable[[], Daemon]) -> None:
    db = tiny_disk / "livereview.db"
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, db,
                 retry_base_seconds=0.05, log_format="json")
    first = sandbox.note("@livereview is this lock needed?")
    daemon = start_daemon()
    wait_for(lambda: len(answers(sandbox, first["id"])) == 1)
    sandbox.llm.llm.delay_seconds = 2.0  # the next answer is in flight when the disk fills
    second = sandbox.note("@livereview and for writes?")
    wait_for(lambda: len(sandbox.llm.llm.prompts) == 2)
    filler = fill(tiny_disk)
    third = sandbox.note("@livereview one more?")  # arrives while nothing can be stored
    # Until the daemon met the full disk (an event, not a nap long enough on a quiet machine)
    wait_for(lambda: "database or disk is full" in daemon.output(), timeout=120)
    sandbox.llm.llm.delay_seconds = 0.0
    filler.unlink()
    wait_for(lambda: len(answers(sandbox, third["id"])) == 1, timeout=30)
    wait_for(lambda: len(answers(sandbox, second["id"])) == 1, timeout=30)
    assert daemon.stop() == 0
    assert "database or disk is full" in daemon.output()
    for note in (first, second, third):
        assert len(answers(sandbox, note["id"])) == 1
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert {s for (s,) in conn.execute("SELECT state FROM reply_jobs")} == {"posted"}


@pytest.mark.sqlite_only("the database file on a read-only filesystem")
def test_a_read_only_database_is_one_clear_line(sandbox: Sandbox, tiny_disk: Path) -> None:
    """As root, file modes do not stop writes: the database sits on a filesystem that is
    then remounted read-only, which stops everyone."""
    db = tiny_disk / "livereview.db"
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, db)
    assert sandbox.once() == 0
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_disk)], check=True)  # noqa: S603, S607
    result = subprocess.run(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(sandbox.config), "once"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN})
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("livereview: database sqlite:")
    assert last.endswith("is read-only: the database and its -wal/-shm files must be writable)")
    assert "Traceback" not in result.stderr
