"""A step that hangs is cut by the soft limit (`step_timeout_seconds`), a run of a job by the
hard one (`job_timeout_seconds`): the job ends its run recorded with the cause, the next job
still runs, and nothing is asked or posted twice (docs/DESIGN.md §4).

The tests wait on events — a request arriving at a fake, a run ending — never on a duration;
the limits are the smallest the settings allow, so a run is cut soon after it hangs."""

from __future__ import annotations

import threading
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


def all_due(sandbox: Sandbox) -> None:
    execute(sandbox.db, "UPDATE reply_jobs SET next_attempt_at = created_at")


async def test_a_hanging_model_is_cut_by_the_step_limit_and_the_next_job_still_runs(
        sandbox: Sandbox) -> None:
    limits(sandbox)
    hang = threading.Event()
    sandbox.llm.llm.faults.append(LLMFault(hang=hang))
    first = sandbox.note("@livereview is this lock needed?")
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
        await app.worker.drain()  # the model never answers: the step is cut
        assert jobs_of(sandbox) == [(str(first["id"]), "acked", "the model's answer: no "
                                     "answer within step_timeout_seconds (1 s)")]
        assert app.metrics.job_retries.labels("gitlab", "timeout")._value.get() == 1
        second = sandbox.note("@livereview and is the cache bounded?")
        await app.cycle()
        await app.worker.drain()  # the next job runs while the first waits for its retry
        assert len(answers(sandbox, second["id"])) == 1
        assert answers(sandbox, first["id"]) == []
        all_due(sandbox)
        await app.worker.drain()
    finally:
        hang.set()
        await app.close()
    assert len(answers(sandbox, first["id"])) == 1
    assert len(sandbox.gitlab.awards_on(PROJECT, sandbox.iid, first["id"])) == 1  # acked once
    assert [state for _, state, _ in jobs_of(sandbox)] == ["posted", "posted"]
    assert len(sandbox.llm.llm.prompts) == 3  # the cut question, the second, the retry


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
        for _ in range(MAX_RUNS):  # each run records its step; one reaches the POST
            await app.worker.drain()
            if held.arrived.is_set():
                break
            all_due(sandbox)
        assert held.arrived.is_set()
        [(_, state, reason)] = jobs_of(sandbox)
        assert (state, reason) == (
            "answered", "the job ran longer than job_timeout_seconds (2 s) and was cut")
        assert app.metrics.job_retries.labels("gitlab", "timeout")._value.get() >= 1
        held.release()
        assert held.answered.wait(BACKSTOP_SECONDS)  # the late POST landed on GitLab
        all_due(sandbox)
        await app.worker.drain()
        other = sandbox.note("@livereview and is the cache bounded?")
        await app.cycle()
        await app.worker.drain()
    finally:
        held.release()
        await app.close()
    assert len(answers(sandbox, question["id"])) == 1  # adopted, not posted again
    assert len(answers(sandbox, other["id"])) == 1
    assert [state for _, state, _ in jobs_of(sandbox)] == ["posted", "posted"]
    assert len(sandbox.llm.llm.prompts) == 2  # the answer was kept, not asked for again


async def test_a_hanging_reaction_is_cut_and_the_answer_still_goes_out(
        sandbox: Sandbox) -> None:
    limits(sandbox)
    question = sandbox.note("@livereview is this lock needed?")
    held = sandbox.gitlab.hold("POST", r"/award_emoji$", timeout=BACKSTOP_SECONDS)
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
        await app.worker.drain()
    finally:
        held.release()
        await app.close()
    assert held.arrived.is_set()
    assert len(answers(sandbox, question["id"])) == 1
    assert app.metrics.acks.labels("gitlab", "error")._value.get() == 1
