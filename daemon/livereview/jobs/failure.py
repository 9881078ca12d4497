"""Why a reply job or a review run did not finish, in one line: a bounded cause label for
metrics and logs, and a description an operator can act on — for an error nobody expected,
its type and the file:line where it was raised.

Shared by the reply worker and the review runner, so a failed review is described as well
as a failed reply. The description is stored (`last_error`, shown by `pending` and
`review --json`) as well as logged, so it hides the same secrets the log does.
"""

from __future__ import annotations

import asyncio
import contextlib
import traceback
from collections.abc import AsyncIterator, Sequence

import structlog

from livereview.hosts.base import AuthFailed, Forbidden, HostError, RateLimited
from livereview.jobs.llm import LLMError
from livereview.log_setup import Redactor


class StepTimedOut(TimeoutError):
    """One step of a job (a host request, the model's answer) took longer than
    `step_timeout_seconds`: the soft limit, after which the job is retried."""


class JobTimedOut(TimeoutError):
    """A whole run of a job took longer than `job_timeout_seconds`: the hard limit, for a
    run whose steps each kept to theirs (or a step no soft limit covers)."""


@contextlib.asynccontextmanager
async def step_limit(seconds: float, what: str) -> AsyncIterator[None]:
    """The soft limit of one step: past it, `StepTimedOut` names the step and the key (the
    job's hard limit firing meanwhile reaches the step as a cancellation, and passes)."""
    limit = asyncio.timeout(seconds)
    try:
        async with limit:
            yield
    except TimeoutError:
        if not limit.expired():  # raised inside the step: its own error, not this limit
            raise
        raise StepTimedOut(f"{what}: no answer within step_timeout_seconds "
                           f"({seconds:g} s)") from None


@contextlib.asynccontextmanager
async def job_limit(seconds: float) -> AsyncIterator[None]:
    """The hard limit of one run of a job: past it, `JobTimedOut` (a step's own soft limit
    passes as the `StepTimedOut` it is)."""
    limit = asyncio.timeout(seconds)
    try:
        async with limit:
            yield
    except TimeoutError:
        if not limit.expired():  # a step's own soft limit, or another step error
            raise
        raise JobTimedOut(f"the job ran longer than job_timeout_seconds ({seconds:g} s) "
                          "and was cut") from None


Causes = Sequence[tuple[type[BaseException], str]]
# First match wins: a subclass before its base (RateLimited is a HostError).
CAUSES: Causes = ((AuthFailed, "auth"), (Forbidden, "auth"), (RateLimited, "rate_limited"),
                  (HostError, "host"), (LLMError, "llm"), (TimeoutError, "timeout"))


def cause(exc: BaseException, causes: Causes = CAUSES) -> str:
    """A bounded label for why a run did not finish (metrics, logs)."""
    return next((label for kind, label in causes if isinstance(exc, kind)), "unexpected")


def describe(exc: BaseException, causes: Causes = CAUSES) -> str:
    """One line: the error, and for an unexpected one its type and where it was raised."""
    text = str(exc) or type(exc).__name__
    if cause(exc, causes) == "unexpected":
        frames = traceback.extract_tb(exc.__traceback__)
        where = (f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}"
                 if frames else "")
        text = f"unexpected {type(exc).__name__}: {text}{where}"
    return _redacted(text)


def _redacted(text: str) -> str:
    """`text` with every secret masked, by the redactor the process configured its log
    with (it knows the hosts' tokens and the API key): a token an unexpected error quotes
    must not reach the store, where the log's own redaction never looks."""
    for processor in structlog.get_config()["processors"]:
        if isinstance(processor, Redactor):
            scrubbed: str = processor.scrub(text)
            return scrubbed
    return text
