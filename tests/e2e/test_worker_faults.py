"""Whatever a reply job's step raises, the job ends its run in a recorded state, the worker
goes on serving other jobs, and nothing loops hot (docs/DESIGN.md §4).

Faults are injected at each step through stand-ins of the interfaces the worker talks to —
a Host that wraps the real GitLab adapter, an Answerer, a Store — never by patching the
worker's own functions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Concatenate, ParamSpec, TypeVar

import pytest
from freezegun import freeze_time
from sqlmodel import Session

from livereview.app.daemon import App
from livereview.core.prompt import Prompt
from livereview.core.triggers import replied_to
from livereview.hosts.base import Host
from livereview.jobs.llm import Answer
from livereview.metrics import Metrics
from livereview.settings import load
from livereview.store.db import Store
from tests.databases import execute, query
from tests.e2e.conftest import BACKSTOP_SECONDS, PROJECT, Sandbox, write_config

P = ParamSpec("P")
R = TypeVar("R")
STEPS = ("react", "diff", "answer", "reply", "mark_posted")
LOOKS = ("due", "claim_due_jobs")  # the worker's look for due jobs (PostgreSQL: claims them)


class Boom(Exception):
    """Something no handler expects."""


class FaultyHost:
    """The real adapter, except that `method` raises `error` the next `times` calls."""

    def __init__(self, real: Host, method: str, error: BaseException, times: int) -> None:
        self._real, self._method, self._error, self.left = real, method, error, times

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._real, name)
        if name != self._method:
            return attribute

        async def failing(*args: Any, **kwargs: Any) -> Any:
            if self.left > 0:
                self.left -= 1
                raise self._error
            return await attribute(*args, **kwargs)
        return failing


class FaultyAnswerer:
    def __init__(self, real: Any, times: int) -> None:
        self._real, self.left = real, times

    async def answer(self, prompt: Prompt) -> Answer:
        if self.left > 0:
            self.left -= 1
            raise Boom("the model client broke")
        answer: Answer = await self._real.answer(prompt)
        return answer

    async def close(self) -> None:
        await self._real.close()


class CountingStore(Store):
    """The real store; counts calls per function and can fail one function a few times."""

    def __init__(self, real: Store, fail: str = "", times: int = 0) -> None:
        super().__init__(real.engine)
        self.calls: dict[str, int] = {}
        self.found: list[int] = []  # how many due jobs each look for them found
        self.fail, self.left = fail, times

    async def run(self, fn: Callable[Concatenate[Session, P], R], *args: P.args,
                  **kwargs: P.kwargs) -> R:
        self.calls[fn.__name__] = self.calls.get(fn.__name__, 0) + 1
        if fn.__name__ == self.fail and self.left > 0:
            self.left -= 1
            raise Boom(f"{fn.__name__} failed")
        result = await super().run(fn, *args, **kwargs)
        if fn.__name__ in LOOKS and isinstance(result, list):
            self.found.append(len(result))
        return result


def app_for(sandbox: Sandbox, **daemon: object) -> App:
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 retry_base_seconds=0.01, **daemon)
    return App.create(load(sandbox.config), metrics=Metrics())


def job_rows(sandbox: Sandbox) -> list[tuple[Any, ...]]:
    return query(sandbox.db, "SELECT state, attempts, last_error FROM reply_jobs ORDER BY id")


def answers(sandbox: Sandbox, note_id: object) -> list[dict[str, object]]:
    return [n for n in sandbox.bot_notes() if replied_to(str(n["body"])) == str(note_id)]


async def run_until_settled(app: App, rounds: int = 12) -> None:
    """`once`, again and again, as the daemon's ticks would (retries are 10 ms apart)."""
    for _ in range(rounds):
        await app.once()
        await asyncio.sleep(0.05)


def inject(app: App, step: str, error: BaseException, times: int) -> CountingStore | None:
    if step == "answer":
        app.worker.answerer = app.worker.composer.answerer = FaultyAnswerer(
            app.worker.answerer, times)
        return None
    if step == "mark_posted":
        store = CountingStore(app.store, fail="mark_posted", times=times)
        app.store = app.worker.store = app.worker.composer.store = store
        for poller in app.pollers.values():
            poller.store = store
        return store
    app.hosts["gl"] = FaultyHost(app.hosts["gl"], step, error, times)
    return None


@pytest.mark.parametrize("step", STEPS)
async def test_an_unexpected_error_at_any_step_is_retried_and_answers_once(
        sandbox: Sandbox, step: str) -> None:
    app = app_for(sandbox)
    await app.cycle(cold=True)  # identities known: the pollers exist before faults go in
    inject(app, step, Boom(f"{step} broke"), times=2)
    note = sandbox.note("@livereview is this lock needed?")
    try:
        await run_until_settled(app)
    finally:
        await app.close()
    assert len(answers(sandbox, note["id"])) == 1  # never twice, even after a lost commit
    [(state, attempts, _)] = job_rows(sandbox)
    assert state == "posted" and attempts == 3  # two failed runs, then the one that posted


@pytest.mark.parametrize("step", STEPS)
async def test_a_step_that_always_fails_ends_failed_with_its_reason(sandbox: Sandbox,
                                                                    step: str) -> None:
    app = app_for(sandbox, max_attempts=3)
    await app.cycle(cold=True)
    inject(app, step, KeyError("created_at"), times=1_000)
    sandbox.note("@livereview is this lock needed?")
    try:
        await run_until_settled(app)
    finally:
        await app.close()
    [(state, attempts, reason)] = job_rows(sandbox)
    assert (state, attempts) == ("failed", 3)
    assert reason.startswith("unexpected ") and "at " in reason  # what, and where


def _ran(found: list[int]) -> int:
    """The index of the first look that found a due job (past the end: none yet)."""
    return next((i for i, count in enumerate(found) if count), len(found))


async def test_a_failing_job_does_not_loop_and_others_are_served(sandbox: Sandbox) -> None:
    app = app_for(sandbox)
    await app.cycle(cold=True)
    store = CountingStore(app.store)
    app.store = app.worker.store = app.worker.composer.store = store
    app.leases.store = store  # on PostgreSQL the worker claims its due jobs through these
    # Every react raises; the retry backs off past the backstop, so the job runs once.
    app.worker.daemon = app.settings.daemon.__class__(
        **{**app.settings.daemon.__dict__, "retry_base_seconds": 900.0})
    app.hosts["gl"] = FaultyHost(app.hosts["gl"], "react", Boom("react broke"), 1_000)
    sandbox.note("@livereview is this lock needed?")
    await app.cycle()
    stop = asyncio.Event()
    serving = asyncio.create_task(app.worker.serve(stop))
    try:  # until the job ran and its run is over, then until the worker's next look
        async with asyncio.timeout(BACKSTOP_SECONDS):
            while _ran(store.found) == len(store.found) or app.worker.slots.running:
                await asyncio.sleep(0.05)
            ended = len(store.found)  # a look while it still ran would not count it anyway
            while len(store.found) == ended:
                await asyncio.sleep(0.05)
    finally:
        stop.set()
        await serving
        await app.close()
    # The reported hot loop found the job due again at once, and ran it 1 160 times a
    # second: the failed run left it due (`claim_due_jobs` on PostgreSQL).
    assert store.found[ended] == 0
    [(state, attempts, reason)] = job_rows(sandbox)
    assert (state, attempts) == ("pending", 1) and "react broke" in reason


async def test_a_job_whose_host_left_the_config_fails_with_the_reason(
        sandbox: Sandbox) -> None:
    app = app_for(sandbox)
    sandbox.note("@livereview is this lock needed?")
    await app.cycle(cold=True)  # the job exists; no worker has run it yet
    await app.close()
    text = sandbox.config.read_text().replace('name = "gl"', 'name = "gl2"').replace(
        'host = "gl"', 'host = "gl2"')
    sandbox.config.write_text(text)
    renamed = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await renamed.worker.drain()
    finally:
        await renamed.close()
    [(state, attempts, reason)] = job_rows(sandbox)
    assert (state, attempts) == ("failed", 1)
    assert reason == "host 'gl' is not in the configuration any more"
    assert sandbox.bot_notes() == []


async def test_a_403_on_the_reply_is_retried_slowly_until_access_returns(
        sandbox: Sandbox) -> None:
    start = datetime.now(UTC)
    with freeze_time(start, tick=True, real_asyncio=True) as clock:
        app = app_for(sandbox)
        note = sandbox.note("@livereview is this lock needed?")
        sandbox.gitlab.inject_fault("POST", r"/discussions/[0-9a-f]+/notes$", status=403,
                                    body='{"message":"403 Forbidden"}')
        try:
            await app.once()
            [(state, attempts, reason)] = job_rows(sandbox)
            assert (state, attempts) == ("answered", 1) and "HTTP 403" in reason
            with app.store.engine.connect() as db:
                due = db.exec_driver_sql("SELECT next_attempt_at FROM reply_jobs").scalar_one()
            assert datetime.fromisoformat(str(due)).replace(tzinfo=UTC) >= start + timedelta(
                minutes=4)  # slow: a person has to give the access back
            assert app.metrics.job_retries.labels("gitlab", "auth")._value.get() == 1
            await app.once()  # not due yet: nothing happens
            assert answers(sandbox, note["id"]) == []
            clock.move_to(start + timedelta(minutes=6))
            await app.once()
        finally:
            await app.close()
    assert len(answers(sandbox, note["id"])) == 1
    assert job_rows(sandbox)[0][:2] == ("posted", 2)



async def test_a_job_row_this_version_cannot_read_is_failed_not_fatal(
        sandbox: Sandbox) -> None:
    """A reason a newer version wrote made every run of `once` and `run` end in a
    traceback; the row is failed with the reason and the other jobs are served."""
    app = app_for(sandbox)
    odd = sandbox.note("@livereview first?")
    fine = sandbox.note("@livereview second?")
    await app.cycle(cold=True)
    execute(sandbox.db, "UPDATE reply_jobs SET reason = 'from-a-newer-version' "
                        "WHERE host_message_id = :id", id=str(odd["id"]))
    try:
        await app.worker.drain()
    finally:
        await app.close()
    assert answers(sandbox, odd["id"]) == []
    assert len(answers(sandbox, fine["id"])) == 1
    rows = {state: reason for state, _, reason in job_rows(sandbox)}
    assert rows["failed"].startswith("unreadable job row: 'from-a-newer-version'")


async def test_a_question_deleted_before_its_answer_is_skipped(sandbox: Sandbox) -> None:
    """The thread stays (it has other notes), the question in it is gone."""
    app = app_for(sandbox)
    first = sandbox.note("A lock here?", thread=True)
    discussion = next(str(d["id"]) for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid)
                      if d["notes"][0]["id"] == first["id"])
    note = sandbox.note("@livereview is this lock needed?", reply_to_discussion=discussion)
    try:
        await app.cycle(cold=True)  # the job exists
        sandbox.gitlab.delete_note(PROJECT, sandbox.iid, int(str(note["id"])))
        await app.cycle()  # the store sees it gone
        await app.worker.drain()
    finally:
        await app.close()
    [(state, _, reason)] = job_rows(sandbox)
    assert (state, reason) == ("skipped", "the message to answer was deleted")
    assert sandbox.bot_notes() == []
