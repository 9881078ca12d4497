"""kill -9 the real daemon while it answers on Bitbucket Data Center: every mention still
gets exactly one answer, and — on a server without reactions — at most one ack reply.

Seeded (`LIVEREVIEW_CRASH_SEED`): the kill schedule is fixed; where a kill lands in the
daemon's work still depends on timing. The fake answers with latency and the fake LLM with
a delay, so kills land while an ack, an LLM call, a reply POST or a commit is in flight.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from livereview.core.triggers import acked_for, replied_to
from livereview.hosts.bitbucket_server.payloads import incoming
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.sandbox.llm_server import FakeLLM, FakeLLMServer
from tests.e2e.conftest import wait_for
from tests.e2e.test_bitbucket_server_once import FILES, REPO, TOKEN, write_config

KILLS = 6
MENTIONS = 6


def start(config: Path, log: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "LIVEREVIEW_E2E_BITBUCKET_TOKEN": TOKEN, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(config), "run"],
        stdout=log.open("a", encoding="utf-8"), stderr=subprocess.STDOUT, env=env, text=True)


@pytest.mark.parametrize("reactions", [True, False], ids=["reactions", "no-reactions"])
def test_kill_9_never_loses_or_duplicates_an_answer_or_an_ack(
        tmp_path: Path, reactions: bool) -> None:
    seed = int(os.environ.get("LIVEREVIEW_CRASH_SEED", "20240611"))
    print(f"LIVEREVIEW_CRASH_SEED={seed}")
    rng = random.Random(seed)
    fake = FakeBitbucketDC(token=TOKEN, reactions=reactions)
    fake.add_user("alice", "Alice")
    prs = [fake.add_pr(REPO, title=f"Change {i}", author="bob", files=FILES) for i in range(2)]
    questions: dict[int, int] = {}  # comment id -> its pull request
    log = tmp_path / "daemon.log"
    with FakeBitbucketDCServer(fake, latency_seconds=0.03) as server, \
            FakeLLMServer(FakeLLM(delay_seconds=0.3)) as llm:
        config = tmp_path / "livereview.toml"
        write_config(config, server.url, llm.url, tmp_path / "state" / "lr.db",
                     retry_base_seconds=0.05)
        for kill in range(KILLS):
            if len(questions) < MENTIONS:
                pr = rng.choice(prs)
                path, line = ("src/cache.py", 9) if kill % 2 else (None, None)  # inline or not
                asked = fake.add_comment(REPO, pr, author="alice", path=path, line=line,
                                         text=f"@livereview question {kill}?")
                questions[int(asked["id"])] = pr
            process = start(config, log)
            time.sleep(rng.uniform(0.5, 2.5))
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
        final_log = tmp_path / "final.log"
        process = start(config, final_log)
        try:
            def answered() -> bool:
                done = Counter(replied_to(incoming(str(c["text"])))
                               for c in fake.comments_by("livereview"))
                return all(done[str(q)] >= 1 for q in questions)

            def listings() -> int:
                return sum(1 for m, path, _ in fake.requests
                           if m == "GET" and path.endswith("/pull-requests"))

            # Up (signal handlers installed) and answering, then a few more cycles: a late
            # duplicate would show up meanwhile.
            wait_for(lambda: "daemon_started" in final_log.read_text(encoding="utf-8"),
                     timeout=60)
            wait_for(answered, timeout=90)
            polled = listings()
            wait_for(lambda: listings() >= polled + 3, timeout=30)
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=60) == 0, final_log.read_text(encoding="utf-8")[-3000:]
    mine = fake.comments_by("livereview")
    answers = Counter(replied_to(incoming(str(c["text"]))) for c in mine)
    acks = Counter(a for c in mine if (a := acked_for(incoming(str(c["text"])))) is not None)
    assert {q: answers[str(q)] for q in questions} == dict.fromkeys(questions, 1)
    if reactions:
        assert not acks
        for q, pr in questions.items():
            assert fake.reactions_on(REPO, pr, q) == [("thinking_face", "livereview")]
    else:
        assert all(acks[str(q)] <= 1 for q in questions), acks
    assert "Traceback" not in log.read_text(encoding="utf-8") + final_log.read_text(
        encoding="utf-8")
