"""Why a reply job or a review run did not finish, in one line: a bounded cause label for
metrics and logs, and a description an operator can act on — for an error nobody expected,
its type and the file:line where it was raised.

Shared by the reply worker and the review runner, so a failed review is described as well
as a failed reply. The description is stored (`last_error`, shown by `pending` and
`review --json`) as well as logged, so it hides the same secrets the log does.
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence

import structlog

from livereview.hosts.base import AuthFailed, Forbidden, HostError, RateLimited
from livereview.jobs.llm import LLMError
from livereview.log_setup import Redactor

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
