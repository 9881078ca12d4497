"""The real daemon against the fake Bitbucket Cloud, killed with SIGKILL at seeded random
moments while it acknowledges and answers: every question still ends with exactly one
acknowledging reply and one answer, in its thread, and a clean run then stops on SIGTERM.

The fake answers with latency and the fake LLM slowly, so kills land while an ack, an LLM
call, a reply POST or a store commit is in flight."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.bitbucket_cloud_sandbox import BitbucketSandbox, sandbox
from tests.e2e.conftest import wait_for

SEED = int(os.environ.get("LIVEREVIEW_CRASH_SEED", "20241124"))
KILLS = 8
# Only a backstop against a hang: every wait here is for an event, however slow the machine.
BACKSTOP = 300.0
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def started(process: subprocess.Popen[str], log: Path) -> None:
    """Wait until the daemon logged `daemon_started` (failing at once if it exited)."""
    def up() -> bool:
        if process.poll() is not None:
            pytest.fail(f"the daemon exited ({process.returncode}):\n{log.read_text()[-3000:]}")
        return "daemon_started" in log.read_text(encoding="utf-8")
    wait_for(up, timeout=BACKSTOP)


@pytest.fixture
def bb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BitbucketSandbox]:
    yield from sandbox(tmp_path, monkeypatch, access_token=False, llm_delay=0.3)


def test_kill_9_never_loses_or_duplicates_an_ack_or_an_answer(bb: BitbucketSandbox) -> None:
    print(f"LIVEREVIEW_CRASH_SEED={SEED}")
    rng = random.Random(SEED)
    bb.server.latency_seconds = 0.03
    questions = [bb.inline("@livereview why hold the lock for a read?"),
                 bb.comment("@livereview is this lock needed?"),
                 bb.inline("@livereview what about writes?", line=4)]
    for kill in range(KILLS):
        log = bb.config.with_name(f"daemon-{kill}.log")
        process = bb.daemon(log)
        # Killed at a random moment after it started (start-up alone takes seconds on a
        # busy machine: a kill timed from the spawn would land before it polled at all).
        started(process, log)
        if kill == KILLS // 2:  # a follow-up without a mention, in the bot's thread:
            # a reply to the bot is one only once the bot spoke there (triggers.py)
            wait_for(lambda: bool(bb.acks_of(questions[0]["id"])), timeout=BACKSTOP)
            questions.append(bb.comment("And under contention?", parent=questions[0]["id"]))
        time.sleep(rng.uniform(0.0, 2.2))
        process.send_signal(signal.SIGKILL)
        process.wait()
    log = bb.config.with_name("daemon-final.log")
    final = bb.daemon(log)

    def all_answered() -> bool:
        return all(bb.answers_to(q["id"]) for q in questions)

    started(final, log)
    wait_for(all_answered, timeout=BACKSTOP)
    final.send_signal(signal.SIGTERM)
    assert final.wait(timeout=45) == 0
    for question in questions:
        assert len(bb.acks_of(question["id"])) == 1, question["content"]["raw"]
        [answer] = bb.answers_to(question["id"])
        root = question.get("parent", {}).get("id", question["id"])
        assert answer["parent"]["id"] == root  # in the question's thread
    assert len(bb.bitbucket.comments_by("livereview")) == 2 * len(questions)
