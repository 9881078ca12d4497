"""The one description of a failed run that replies and reviews share (jobs/failure.py)."""

from __future__ import annotations

import asyncio
import io

import pytest

from livereview import log_setup as logs
from livereview.hosts.base import AuthFailed, Forbidden, HostError, NotFound, RateLimited
from livereview.jobs import failure
from livereview.jobs.llm import LLMError
from livereview.review.notify import NotifyFailed
from livereview.review.runner import CAUSES as REVIEW_CAUSES

SECRET = "glpat-unit-SECRET-0099"


@pytest.mark.parametrize(("error", "label"), [
    (AuthFailed("x"), "auth"), (Forbidden("x"), "auth"), (RateLimited("x", 1.0), "rate_limited"),
    (NotFound("x"), "host"), (HostError("x"), "host"), (LLMError("x"), "llm"),
    (TimeoutError(), "timeout"), (NotifyFailed("x"), "unexpected"), (KeyError("x"), "unexpected"),
])
def test_causes_are_the_reply_workers_labels(error: BaseException, label: str) -> None:
    assert failure.cause(error) == label


def test_a_review_also_names_a_failed_notifier() -> None:
    assert failure.cause(NotifyFailed("hook: exit 3"), REVIEW_CAUSES) == "notifier"
    assert failure.describe(NotifyFailed("hook: exit 3"), REVIEW_CAUSES) == "hook: exit 3"
    assert failure.cause(RateLimited("x", 1.0), REVIEW_CAUSES) == "rate_limited"


def test_an_expected_error_is_its_own_line() -> None:
    assert failure.describe(NotFound("GET /x: HTTP 404")) == "GET /x: HTTP 404"
    assert failure.describe(TimeoutError()) == "TimeoutError"


def test_an_unexpected_error_says_where_it_was_raised() -> None:
    try:
        empty: dict[str, int] = {}
        empty["position"]
    except KeyError as exc:
        text = failure.describe(exc)
        line = exc.__traceback__.tb_lineno if exc.__traceback__ else 0
    assert text == f"unexpected KeyError: 'position' at test_failure.py:{line}"


def test_configured_secrets_are_masked_in_the_description() -> None:
    error = RuntimeError(f"Bearer {SECRET} refused")
    assert SECRET in failure.describe(error)  # nothing configured: nothing to mask
    logs.configure("json", [SECRET], stream=io.StringIO())
    text = failure.describe(error)
    assert SECRET not in text and text == f"unexpected RuntimeError: Bearer {logs.REDACTED} refused"


async def never() -> None:
    await asyncio.Event().wait()  # a step that hangs: nothing will ever set it


async def test_a_hanging_step_is_cut_by_its_limit_and_says_which_step() -> None:
    with pytest.raises(failure.StepTimedOut) as cut:
        async with failure.step_limit(0.01, "the model's answer"):
            await never()
    assert str(cut.value) == ("the model's answer: no answer within step_timeout_seconds "
                              "(0.01 s)")
    assert failure.cause(cut.value) == "timeout"


async def test_a_timeout_raised_inside_a_step_is_its_own_not_the_limits() -> None:
    with pytest.raises(TimeoutError) as raised:
        async with failure.step_limit(3600, "a request to the host"):
            raise TimeoutError("the client's own")
    assert type(raised.value) is TimeoutError and str(raised.value) == "the client's own"


async def hang_within(job: float, step: float) -> None:
    async with failure.job_limit(job), failure.step_limit(step, "a request to the host"):
        await never()


async def test_the_job_limit_cuts_a_step_that_its_own_limit_has_not_yet() -> None:
    with pytest.raises(failure.JobTimedOut) as cut:
        await hang_within(job=0.01, step=3600)
    assert "job_timeout_seconds (0.01 s)" in str(cut.value)


async def test_a_step_cut_inside_a_job_stays_a_step_timeout() -> None:
    with pytest.raises(failure.StepTimedOut):
        await hang_within(job=3600, step=0.01)
