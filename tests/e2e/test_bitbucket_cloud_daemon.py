"""The real daemon against the fake Bitbucket Cloud, killed with SIGKILL at seeded random
moments while it acknowledges and answers: every question still ends with exactly one
acknowledging reply and one answer, in its thread, and a clean run then stops on SIGTERM.

The fake answers with latency and the fake LLM slowly, so kills land while an ack, an LLM
call, a reply POST or a store commit is in flight."""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.bitbucket_cloud_sandbox import BitbucketSandbox, sandbox
from tests.e2e.conftest import wait_for

SEED = int(os.environ.get("LIVEREVIEW_CRASH_SEED", "20241124"))
KILLS = 8


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
        process = bb.daemon(bb.config.with_name(f"daemon-{kill}.log"))
        time.sleep(rng.uniform(0.3, 2.5))
        process.send_signal(signal.SIGKILL)
        process.wait()
        if kill == KILLS // 2:  # a follow-up without a mention, in the bot's thread
            questions.append(bb.comment("And under contention?", parent=questions[0]["id"]))
    log = bb.config.with_name("daemon-final.log")
    final = bb.daemon(log)

    def all_answered() -> bool:
        return all(bb.answers_to(q["id"]) for q in questions)

    wait_for(all_answered, timeout=60)
    wait_for(lambda: "daemon_started" in log.read_text(encoding="utf-8"), timeout=30)
    final.send_signal(signal.SIGTERM)
    assert final.wait(timeout=45) == 0
    for question in questions:
        assert len(bb.acks_of(question["id"])) == 1, question["content"]["raw"]
        [answer] = bb.answers_to(question["id"])
        root = question.get("parent", {}).get("id", question["id"])
        assert answer["parent"]["id"] == root  # in the question's thread
    assert len(bb.bitbucket.comments_by("livereview")) == 2 * len(questions)
