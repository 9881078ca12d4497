"""What one answer costs the host, counted on the fake GitLab (docs/performance.md, bench
figure 6): the 👀, the MR's diff once per version of the MR, the reply — and the 👀 goes out
while the answer is written, not before it."""

from __future__ import annotations

import asyncio
import re
import threading
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from livereview.app.daemon import App
from livereview.core.triggers import replied_to
from livereview.metrics import Metrics
from livereview.sandbox.llm_server import LLMFault
from livereview.settings import load
from tests.databases import execute
from tests.e2e.conftest import BACKSTOP_SECONDS, PROJECT, Sandbox

AWARD = "POST award_emoji"
DIFF = "GET diffs"
REPLY = "POST reply"


def kind(method: str, path: str) -> str:
    """A request as what it does: the 👀, the diff, a reply in a thread, or its own path."""
    if method == "POST" and path.endswith("/award_emoji"):
        return AWARD
    if method == "GET" and path.endswith("/diffs"):
        return DIFF
    if method == "POST" and re.search(r"/discussions/[^/]+/notes$", path):
        return REPLY
    return f"{method} {path}"


def kinds_since(sandbox: Sandbox, start: int) -> Counter[str]:
    return Counter(kind(method, path) for method, path, _ in sandbox.gitlab.requests[start:])


@pytest.fixture
async def app(sandbox: Sandbox) -> AsyncIterator[App]:
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        yield app
    finally:
        await app.close()


def answered(sandbox: Sandbox) -> Counter[str | None]:
    return Counter(replied_to(str(n["body"])) for n in sandbox.bot_notes())


async def test_an_answer_costs_the_host_its_eyes_the_diff_and_the_reply_and_nothing_else(
        sandbox: Sandbox, app: App) -> None:
    question = sandbox.note("@livereview why a lock and not a queue?")
    await app.cycle(cold=True)  # the poll that finds the question is not the answer's cost
    start = len(sandbox.gitlab.requests)
    await app.worker.drain()
    assert kinds_since(sandbox, start) == Counter({AWARD: 1, DIFF: 1, REPLY: 1})
    assert answered(sandbox)[str(question["id"])] == 1


async def test_questions_on_one_version_of_an_mr_read_its_diff_once(
        sandbox: Sandbox, app: App) -> None:
    asked = [sandbox.note("@livereview why a lock?"),
             sandbox.note("@livereview is this still fast?",
                          position={"new_path": "src/cache.py", "new_line": 4}),
             sandbox.note("@livereview and the readers?")]
    await app.cycle(cold=True)
    start = len(sandbox.gitlab.requests)
    await app.worker.drain()
    assert kinds_since(sandbox, start) == Counter({AWARD: 3, DIFF: 1, REPLY: 3})
    assert all(answered(sandbox)[str(q["id"])] == 1 for q in asked)
    prompts = [p[-1]["content"] for p in sandbox.llm.llm.prompts[-3:]]
    assert sum(">>    4 +lock = threading.Lock()" in p for p in prompts) == 1  # the hunk
    assert sum("src/cache.py | +3 -1" in p for p in prompts) == 2  # the diffstat


async def test_after_a_push_the_next_answer_reads_the_new_diff(
        sandbox: Sandbox, app: App) -> None:
    sandbox.note("@livereview why a lock?")
    await app.once()
    sandbox.gitlab.push(PROJECT, sandbox.iid, files={"src/queue.py": ("", "import queue\n")},
                        title="Add a queue")
    sandbox.note("@livereview and now?")
    await app.cycle(cold=True)
    start = len(sandbox.gitlab.requests)
    await app.worker.drain()
    assert kinds_since(sandbox, start)[DIFF] == 1
    assert "src/queue.py | +1 -0" in sandbox.llm.llm.prompts[-1][-1]["content"]


async def test_the_eyes_go_out_while_the_answer_is_written_not_before_it(
        sandbox: Sandbox, app: App) -> None:
    """The 👀 request is held on the host until the model has been asked: the answer does
    not wait for it (it did, one request's time for every answer)."""
    question = sandbox.note("@livereview why a lock?")
    await app.cycle(cold=True)
    award = sandbox.gitlab.hold("POST", r"/award_emoji$", timeout=BACKSTOP_SECONDS)
    answering = threading.Event()
    model = LLMFault(status=200, hang=answering)
    sandbox.llm.llm.faults.append(model)
    draining = asyncio.create_task(app.worker.drain())
    try:
        asked = await asyncio.to_thread(model.arrived.wait, BACKSTOP_SECONDS)
        acking = await asyncio.to_thread(award.arrived.wait, BACKSTOP_SECONDS)
        assert asked and acking and not award.answered.is_set()
    finally:
        award.release()
        answering.set()
        await draining
    assert [a["name"] for a in sandbox.gitlab.awards_on(PROJECT, sandbox.iid,
                                                        question["id"])] == ["eyes"]
    assert answered(sandbox)[str(question["id"])] == 1


async def test_an_answer_that_failed_is_retried_without_a_second_ack(
        sandbox: Sandbox, app: App) -> None:
    """The ack is recorded once it has ended even when writing the answer beside it failed
    (here the model refuses): the retry writes the answer, it does not ack again."""
    question = sandbox.note("@livereview why a lock?")
    await app.cycle(cold=True)
    sandbox.llm.llm.faults.append(LLMFault(status=400, message="context too long"))
    start = len(sandbox.gitlab.requests)
    await app.worker.drain()
    assert answered(sandbox)[str(question["id"])] == 0
    execute(sandbox.db, "UPDATE reply_jobs SET next_attempt_at = created_at")
    await app.worker.drain()
    assert kinds_since(sandbox, start) == Counter({AWARD: 1, DIFF: 1, REPLY: 1})
    assert answered(sandbox)[str(question["id"])] == 1
