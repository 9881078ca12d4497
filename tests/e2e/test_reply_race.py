"""The daemon and an agent's `livereview mr reply` racing to answer one comment, on the
GitLab sandbox, on SQLite and on PostgreSQL: whichever claims the comment first posts, the
other posts nothing and says so — the daemon's job ends superseded, the tool answers
already_answered. A claimant killed mid-POST holds the comment only until its claim lapses;
its taker adopts the reply if that POST landed, and posts it once if it did not."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from livereview.cli.commands import main
from livereview.core.triggers import replied_to
from tests.databases import job_rows
from tests.e2e.conftest import PROJECT, TOKEN, Daemon, Sandbox, wait_for
from tests.e2e.test_tools_daemon import enable_writes

pytestmark = pytest.mark.usefixtures("sandbox_database")
REPLY_POST = r"/merge_requests/\d+/discussions/[0-9a-f]+/notes$"  # a reply in a thread


def _mr(sandbox: Sandbox) -> str:
    return f"gl:{PROJECT}!{sandbox.iid}"


def _replies(sandbox: Sandbox, question: dict[str, Any]) -> list[dict[str, object]]:
    return [n for n in sandbox.bot_notes() if replied_to(str(n["body"])) == str(question["id"])]


def _reply_in_process(sandbox: Sandbox, question: dict[str, Any]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--config", str(sandbox.config), "mr", "reply", _mr(sandbox),
                     str(question["id"]), "--body", "Yes: two readers race here.", "--json"])
    return code, out.getvalue(), err.getvalue()


def _reply_process(sandbox: Sandbox, question: dict[str, Any]) -> subprocess.Popen[str]:
    """An agent's `livereview mr reply` in a process of its own (one the test may kill)."""
    return subprocess.Popen(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(sandbox.config), "mr", "reply",
         _mr(sandbox), str(question["id"]), "--body", "Yes: two readers race here.",
         "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN})


def _job(url: str) -> dict[str, object]:
    (job,) = job_rows(url)
    return job


def _short_claims(sandbox: Sandbox) -> None:
    """Claims lapse after 2 s (max of lease and step timeout): a dead claimant's comment
    is free again soon."""
    text = sandbox.config.read_text(encoding="utf-8")
    sandbox.config.write_text(text.replace(
        "[daemon]\n", "[daemon]\nstep_timeout_seconds = 2\nlease_seconds = 1\n"
        "retry_base_seconds = 0.05\n"),
        encoding="utf-8")


def test_a_tool_reply_while_the_daemon_posts_posts_nothing(
        sandbox: Sandbox, sandbox_database: str, start_daemon: Callable[[], Daemon]) -> None:
    enable_writes(sandbox)
    held = sandbox.gitlab.hold("POST", REPLY_POST)
    daemon = start_daemon()
    question = sandbox.note("@livereview is this lock needed at all?")
    wait_for(held.arrived.is_set, timeout=60)  # the daemon's reply is in flight

    code, out, err = _reply_in_process(sandbox, question)
    held.release()
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "already answered" in err
    said = json.loads(out)
    assert (said["already_answered"], said["answered_by"], said["in_progress"]) == (
        True, "daemon", True)
    wait_for(lambda: _job(sandbox_database)["state"] == "posted", timeout=30)
    (reply,) = _replies(sandbox, question)
    assert str(reply["id"]) == _job(sandbox_database)["posted_message_id"]

    code, out, err = _reply_in_process(sandbox, question)  # later: the reply is known
    assert code == 2 and json.loads(out)["id"] == str(reply["id"]), err
    assert daemon.stop() == 0
    assert len(_replies(sandbox, question)) == 1


def test_the_daemon_posts_nothing_while_a_tool_reply_is_in_flight(
        sandbox: Sandbox, sandbox_database: str, start_daemon: Callable[[], Daemon]) -> None:
    enable_writes(sandbox)
    question = sandbox.note("@livereview is this lock needed at all?")
    held = sandbox.gitlab.hold("POST", REPLY_POST)
    agent = _reply_process(sandbox, question)
    wait_for(held.arrived.is_set, timeout=60)  # the tool's reply is in flight
    daemon = start_daemon()
    # The daemon reaches the comment: it waits for the claim (or, unfixed, posts its own).
    wait_for(lambda: "reply_claimed_elsewhere" in daemon.output()
             or len(_replies(sandbox, question)) > 0, timeout=60)
    held.release()
    out, err = agent.communicate(timeout=60)
    assert agent.returncode == 0, err
    posted = json.loads(out)
    assert not posted["already_answered"] and not posted["adopted"]

    wait_for(lambda: _job(sandbox_database)["state"] == "skipped", timeout=30)
    (reply,) = _replies(sandbox, question)
    assert str(reply["id"]) == posted["id"]
    job = _job(sandbox_database)
    assert str(job["last_error"]).startswith("answered elsewhere: a tool call posted reply "
                                             f"{posted['id']}")
    assert job["answer"] is None  # the model was not asked for an answer nobody posts
    assert daemon.stop() == 0
    logged = daemon.output()
    assert logged.count("job_superseded") == 1 and "Traceback" not in logged
    assert len(_replies(sandbox, question)) == 1


@contextlib.contextmanager
def _model_unreachable(sandbox: Sandbox) -> Iterator[None]:
    text = sandbox.config.read_text(encoding="utf-8")
    sandbox.config.write_text(text.replace(sandbox.llm.url, "http://127.0.0.1:9/v1"),
                              encoding="utf-8")
    try:
        yield
    finally:
        sandbox.config.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("landed", [False, True], ids=["post_lost", "post_landed"])
def test_a_killed_tools_claim_lapses_and_the_daemon_answers_once(
        sandbox: Sandbox, sandbox_database: str, start_daemon: Callable[[], Daemon],
        landed: bool) -> None:
    enable_writes(sandbox)
    _short_claims(sandbox)
    question = sandbox.note("@livereview is this lock needed at all?")
    with _model_unreachable(sandbox):
        assert sandbox.once() == 0  # the job is acked; its answer waits for a retry
    assert _job(sandbox_database)["state"] == "acked"
    held = sandbox.gitlab.hold("POST", REPLY_POST)
    agent = _reply_process(sandbox, question)
    wait_for(held.arrived.is_set, timeout=60)
    agent.send_signal(signal.SIGKILL)  # killed mid-POST: its claim stays, unanswered
    agent.wait(timeout=30)
    if not landed:
        sandbox.gitlab.inject_fault("POST", REPLY_POST, status=0)  # the POST never lands
    held.release()
    assert held.answered.wait(30)
    assert len(_replies(sandbox, question)) == int(landed)

    daemon = start_daemon()  # the job's retry: the claim lapses, the daemon takes it over
    wait_for(lambda: _job(sandbox_database)["state"] == "posted", timeout=60)
    (reply,) = _replies(sandbox, question)
    assert str(reply["id"]) == _job(sandbox_database)["posted_message_id"]
    assert daemon.stop() == 0
    assert ("reply_adopted" in daemon.output()) is landed
    assert len(_replies(sandbox, question)) == 1


def test_a_killed_daemons_claim_lapses_and_a_tool_reply_answers_once(
        sandbox: Sandbox, sandbox_database: str, start_daemon: Callable[[], Daemon]) -> None:
    enable_writes(sandbox)
    _short_claims(sandbox)
    held = sandbox.gitlab.hold("POST", REPLY_POST)
    daemon = start_daemon()
    question = sandbox.note("@livereview is this lock needed at all?")
    wait_for(held.arrived.is_set, timeout=60)
    daemon.stop(signal.SIGKILL)  # killed mid-POST, which then never lands
    sandbox.gitlab.inject_fault("POST", REPLY_POST, status=0)
    held.release()
    assert held.answered.wait(30)

    def tool_posts() -> bool:  # refused while the dead daemon's claim holds, then posted
        code, out, err = _reply_in_process(sandbox, question)
        assert code in (0, 2), err
        return code == 0 and not json.loads(out)["already_answered"]
    wait_for(tool_posts, timeout=30)
    (reply,) = _replies(sandbox, question)

    restarted = start_daemon()  # the job resumes, finds the comment answered, posts nothing
    wait_for(lambda: _job(sandbox_database)["state"] == "skipped", timeout=60)
    assert restarted.stop() == 0
    assert "job_superseded" in restarted.output()
    assert [r["id"] for r in _replies(sandbox, question)] == [reply["id"]]
