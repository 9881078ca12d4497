"""The scheduling the reply worker and the review runner share (jobs/job_slots.py)."""

from __future__ import annotations

import asyncio

import structlog
from structlog.testing import capture_logs

from livereview.jobs.job_slots import Slots
from livereview.log_setup import FailureLog


def slots() -> Slots:
    return Slots("review", "review_runner_error", 2, FailureLog(structlog.get_logger("t")),
                 lambda exc: f"unexpected {type(exc).__name__}", idle_wait_seconds=0.01)


async def test_an_unexpected_failure_to_find_work_is_said_once_and_serving_goes_on() -> None:
    """The review runner's loop had its own copy of this, which let a bug end it for good."""
    queue = asyncio.Queue[int]()
    stop = asyncio.Event()
    calls = 0
    box = slots()

    async def run_due() -> int:
        nonlocal calls
        calls += 1
        if calls <= 3:
            raise KeyError("a bug")
        if calls == 4:
            box.start(7, queue.put(7))
            return 1
        stop.set()
        return 0

    with capture_logs() as logs:
        await asyncio.wait_for(box.serve(stop, run_due), timeout=10)
    assert await queue.get() == 7
    said = [e["event"] for e in logs if e["event"].startswith("review_runner_error")]
    assert said == ["review_runner_error", "review_runner_error_recovered"]  # once, then over


async def test_a_resting_item_is_busy_until_its_rest_ends() -> None:
    box = slots()
    box.rest(3, 60)
    box.rest(4, -1)
    assert box.busy() == [3]
    assert box.free() == 2
