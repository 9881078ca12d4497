"""A model made to answer unreadably forever (an answer over the size cap, every attempt)
cannot keep a review retrying: after `review.max_attempts` the run ends failed, visibly —
one short marked note on the MR says it gave up and why, with no mention; the metric
counts it by cause; `livereview pending` says why; a new request starts a fresh run."""

from __future__ import annotations

import json
import socket
import urllib.request
from collections.abc import Callable

import pytest

from livereview.cli.commands import main
from livereview.core.findings import MAX_ANSWER_CHARS
from livereview.review.render import marked
from livereview.sandbox.llm_server import LLMFault
from tests.databases import execute
from tests.e2e.conftest import PROJECT, Daemon, Sandbox, wait_for
from tests.e2e.test_review_crash import reviews_due
from tests.e2e.test_review_unusable import configure, runs
from tests.render_oracles import live_mentions

OVER_CAP = "x" * (MAX_ANSWER_CHARS + 1)
WHY = f"the answer is {MAX_ANSWER_CHARS + 1} characters long"


def failed_notes(sandbox: Sandbox) -> list[str]:
    return [str(n["body"]) for n in sandbox.bot_notes()
            if (marked(str(n["body"])) or ("", ""))[1] == "failed"]


def fail_three_times(sandbox: Sandbox) -> None:
    configure(sandbox, review="max_attempts = 3\n")
    # Each attempt asks twice (the second time told why): six answers over the cap.
    sandbox.llm.llm.faults += [LLMFault(content=OVER_CAP) for _ in range(6)]
    sandbox.note("@livereview review")
    for _ in range(3):
        assert sandbox.once() == 0
        reviews_due(sandbox.db)


def test_an_answer_over_the_cap_every_time_fails_the_run_with_one_note(
        sandbox: Sandbox) -> None:
    fail_three_times(sandbox)
    [(state, verdict, error)] = runs(sandbox)
    assert (state, verdict) == ("failed", "")
    assert error == f"the model's answer about 1 file(s) is not findings ({WHY})"
    assert len(sandbox.llm.llm.prompts) == 6  # bounded by review.max_attempts (2 asks each)
    [note] = failed_notes(sandbox)
    assert "could not be completed after 3 attempts" in note and WHY in note
    assert live_mentions(note) == {}
    assert sandbox.gitlab.approvers(PROJECT, sandbox.iid) == []
    assert sandbox.once() == 0  # nothing more: no retry, no second note
    assert len(sandbox.llm.llm.prompts) == 6 and len(failed_notes(sandbox)) == 1


def test_a_note_posted_before_a_lost_state_write_is_adopted_not_posted_twice(
        sandbox: Sandbox) -> None:
    fail_three_times(sandbox)
    # As if the attempt had crashed after posting its note, before recording the failure.
    execute(sandbox.db, "UPDATE review_runs SET state = 'reviewing', attempts = 2")
    sandbox.llm.llm.faults += [LLMFault(content=OVER_CAP) for _ in range(2)]
    assert sandbox.once() == 0
    assert runs(sandbox)[0][0] == "failed" and len(failed_notes(sandbox)) == 1


def test_pending_says_why_the_review_gave_up(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    fail_three_times(sandbox)
    capsys.readouterr()
    assert main(["--config", str(sandbox.config), "pending"]) == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if ":review:" in x]
    assert line.startswith("failed") and "attempts=3" in line and WHY in line
    assert main(["--config", str(sandbox.config), "pending", "--json"]) == 0
    [item] = [i for i in json.loads(capsys.readouterr().out) if ":review:" in i["key"]]
    assert (item["state"], item["reason"]) == ("failed", "review (mention)")
    assert WHY in item["last_error"]


def test_a_new_request_after_the_failure_starts_a_fresh_review(sandbox: Sandbox) -> None:
    fail_three_times(sandbox)
    sandbox.note("@livereview review")  # the model reads well again
    assert sandbox.once() == 0
    assert [r[:2] for r in runs(sandbox)] == [("failed", ""), ("done", "approved")]
    assert len(failed_notes(sandbox)) == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _failures(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = str(response.read().decode())
    return "\n".join(line for line in text.splitlines()
                     if line.startswith("livereview_review_failures_total{"))


def test_the_daemon_counts_the_run_that_gave_up_by_its_cause(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> None:
    configure(sandbox, review="max_attempts = 2\n")
    port = _free_port()
    sandbox.config.write_text(sandbox.config.read_text().replace(
        'metrics_listen = ""', f'metrics_listen = "127.0.0.1:{port}"'))
    sandbox.llm.llm.faults += [LLMFault(content=OVER_CAP) for _ in range(4)]
    sandbox.note("@livereview review")
    start_daemon()
    wait_for(lambda: bool(failed_notes(sandbox)), timeout=120)
    wait_for(lambda: 'cause="unreadable",host_type="gitlab"} 1.0' in _failures(port),
             timeout=120)
    assert 'cause="llm",host_type="gitlab"} 0.0' in _failures(port)
