"""A step that hangs is cut by the soft limit (`step_timeout_seconds`), a run of a job by the
hard one (`job_timeout_seconds`): the job ends its run recorded with the cause, the next job
still runs, and nothing is asked or posted twice (docs/DESIGN.md §4).

The tests wait on events — a request arriving at a fake, a run ending — never on a duration;
the limits are the smallest the settings allow, so a run is cut soon after it hangs."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from livereview.app.daemon import App
from livereview.core.triggers import replied_to
from livereview.metrics import Metrics
from livereview.sandbox.llm_server import LLMFault
from livereview.settings import load
from tests.databases import execute, query
from tests.e2e.conftest import BACKSTOP_SECONDS, PROJECT, Sandbox, write_config

MAX_RUNS = 50  # a job reaching its POST needs a handful of runs even on a crowded machine


def limits(sandbox: Sandbox, **daemon: object) -> None:
    # A long retry delay: a retried job runs again only when the test makes it due.
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 step_timeout_seconds=1, retry_base_seconds=600, **daemon)


def jobs_of(sandbox: Sandbox) -> list[tuple[Any, ...]]:
    return query(sandbox.db, "SELECT host_message_id, state, last_error FROM reply_jobs "
                             "ORDER BY id")


def answers(sandbox: Sandbox, note_id: object) -> list[dict[str, Any]]:
    return [n for n in sandbox.bot_notes() if replied_to(str(n["body"])) == str(note_id)]


def all_due(sandbox: Sandbox, message_id: object = None) -> None:
    """Make the open jobs (or the one of `message_id`) due now."""
    execute(sandbox.db, "UPDATE reply_jobs SET next_attempt_at = created_at "
                        "WHERE :any OR host_message_id = :mid",
            any=message_id is None, mid=str(message_id))


async def run_until(app: App, sandbox: Sandbox, done: Callable[[], bool],
                    message_id: object = None) -> None:
    """Run the due jobs until `done`: on a crowded machine any step may pass the 1 s limit
    and be retried, so the test waits for what it asserts, not for a number of runs."""
    for _ in range(MAX_RUNS):
        await app.worker.drain()
        if done():
            return
        all_due(sandbox, message_id)
    raise AssertionError(f"not done after {MAX_RUNS} runs")


async def test_a_hanging_model_is_cut_by_the_step_limit_and_the_next_job_still_runs(
        sandbox: Sandbox) -> None:
    limits(sandbox)
    hang = LLMFault(hang=threading.Event())
    sandbox.llm.llm.faults.append(hang)
    first = sandbox.note("@livereview is this lock needed?")
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
        await run_until(app, sandbox, hang.arrived.is_set)  # the model never answers
        assert jobs_of(sandbox) == [(str(first["id"]), "acked", "the model's answer: no "
                                     "answer within step_timeout_seconds (1 s)")]
        assert app.metrics.job_retries.labels("gitlab", "timeout")._value.get() >= 1
        second = sandbox.note("@livereview and is the cache bounded?")
        await app.cycle()
        # The next job runs while the first waits for its retry.
        await run_until(app, sandbox, lambda: bool(answers(sandbox, second["id"])),
                        second["id"])
        assert answers(sandbox, first["id"]) == []
        await run_until(app, sandbox, lambda: bool(answers(sandbox, first["id"])))
    finally:
        assert hang.hang is not None
        hang.hang.set()
        await app.close()
    assert len(answers(sandbox, first["id"])) == 1
    assert len(answers(sandbox, second["id"])) == 1
    assert len(sandbox.gitlab.awards_on(PROJECT, sandbox.iid, first["id"])) == 1  # acked once
    assert [state for _, state, _ in jobs_of(sandbox)] == ["posted", "posted"]


async def test_a_host_that_never_answers_the_post_is_cut_by_the_job_limit_and_nothing_doubles(
        sandbox: Sandbox) -> None:
    """The answer's POST hangs; no step limit covers it (it is bounded by the reply claim,
    docs/DESIGN.md §4), so the job's hard limit cuts the run. The POST then lands late:
    the retry finds it by its marker instead of posting a second answer."""
    limits(sandbox, job_timeout_seconds=2)
    question = sandbox.note("@livereview is this lock needed?")
    held = sandbox.gitlab.hold("POST", r"/discussions/[0-9a-f]+/notes$",
                               timeout=BACKSTOP_SECONDS)
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
        await run_until(app, sandbox, held.arrived.is_set)  # a run reaches the POST
        [(_, state, reason)] = jobs_of(sandbox)
        assert (state, reason) == (
            "answered", "the job ran longer than job_timeout_seconds (2 s) and was cut")
        assert app.metrics.job_retries.labels("gitlab", "timeout")._value.get() >= 1
        held.release()
        assert held.answered.wait(BACKSTOP_SECONDS)  # the late POST landed on GitLab
        all_due(sandbox)
        await run_until(app, sandbox, lambda: jobs_of(sandbox)[0][1] == "posted")
        other = sandbox.note("@livereview and is the cache bounded?")
        await app.cycle()
        await run_until(app, sandbox, lambda: bool(answers(sandbox, other["id"])))
    finally:
        held.release()
        await app.close()
    assert len(answers(sandbox, question["id"])) == 1  # adopted, not posted again
    assert len(answers(sandbox, other["id"])) == 1
    assert [state for _, state, _ in jobs_of(sandbox)] == ["posted", "posted"]
    # The kept answer was not asked for again (the other question's may have been retried).
    asked = [p for p in sandbox.llm.llm.prompts
             if "is this lock needed?" in p[-1]["content"].split("THE MESSAGE TO ANSWER")[-1]]
    assert len(asked) == 1


async def test_a_hanging_reaction_is_cut_and_the_answer_still_goes_out(
        sandbox: Sandbox) -> None:
    limits(sandbox)
    question = sandbox.note("@livereview is this lock needed?")
    held = sandbox.gitlab.hold("POST", r"/award_emoji$", timeout=BACKSTOP_SECONDS)
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
        await run_until(app, sandbox, lambda: bool(answers(sandbox, question["id"])))
    finally:
        held.release()
        await app.close()
    assert held.arrived.is_set()
    assert len(answers(sandbox, question["id"])) == 1
    assert app.metrics.acks.labels("gitlab", "error")._value.get() == 1
