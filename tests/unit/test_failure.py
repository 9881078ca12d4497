"""The one description of a failed run that replies and reviews share (jobs/failure.py)."""

from __future__ import annotations

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
