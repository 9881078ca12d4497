"""An error nobody expected in a review run is described as a failed reply is: its type,
its text and the file:line where it was raised, in the log and in the run's recorded
`last_error` — and a token the error happens to quote shows in neither.

The fault comes from a stand-in for the model client the runner talks to, never from
patching the runner's own functions."""

from __future__ import annotations

import inspect
import io

from livereview import log_setup as logs
from livereview.app.daemon import App
from livereview.core.prompt import Prompt
from livereview.jobs.llm import Answer
from livereview.metrics import Metrics
from livereview.settings import load
from tests.databases import query
from tests.e2e.conftest import TOKEN, Sandbox, write_config


class LeakyModelClient:
    """A model client that breaks with the bot's token in its message (as a misconfigured
    client quoting its own request might)."""

    async def answer(self, prompt: Prompt) -> Answer:
        raise RuntimeError(f"request refused: Authorization: Bearer {TOKEN}")

    async def close(self) -> None:
        return None


def raised_at() -> int:
    """The line of this file that raises (what the description must point to)."""
    lines, start = inspect.getsourcelines(LeakyModelClient.answer)
    return start + next(i for i, text in enumerate(lines) if "raise RuntimeError" in text)


def app_for(sandbox: Sandbox) -> App:
    """The retry is due in minutes: one `once` makes one attempt however slow the machine
    (with the 10 ms of test_worker_faults, a loaded machine's drain took the retry too)."""
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 retry_base_seconds=300)
    return App.create(load(sandbox.config), metrics=Metrics())


def run_row(sandbox: Sandbox) -> tuple[str, int, str]:
    [row] = query(sandbox.db, "SELECT state, attempts, last_error FROM review_runs")
    return str(row[0]), int(row[1]), str(row[2])


async def test_an_unexpected_error_in_a_review_is_logged_and_recorded_with_its_file_line(
        sandbox: Sandbox) -> None:
    stream = io.StringIO()
    logs.configure("json", [TOKEN], stream=stream)  # as `livereview run` does
    app = app_for(sandbox)
    app.reviewer.reader.answerer = LeakyModelClient()
    sandbox.note("@livereview review")
    try:
        await app.once()
    finally:
        await app.close()
    state, attempts, recorded = run_row(sandbox)
    assert (state, attempts) == ("reviewing", 1)  # retried later, not lost
    where = f" at test_review_faults.py:{raised_at()}"
    assert recorded.startswith("unexpected RuntimeError: request refused")
    assert recorded.endswith(where)
    assert TOKEN not in recorded and logs.REDACTED in recorded
    log = stream.getvalue()
    [retry] = [line for line in log.splitlines() if '"review_retry"' in line]
    assert where in retry and '"cause": "unexpected"' in retry
    assert TOKEN not in log
