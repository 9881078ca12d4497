"""Figure 14 (informational): what an answer's wider context costs (docs/DESIGN.md §10.1).

One MR of 200 threads (half on lines of its 20 files, 40 answered by the bot) after a push,
so the anchored threads are outdated. The question, in one of them, names a place
(`src/m7.py:42`) and a function defined in another file. Per answer, with and without the
new context (the other threads, the bot's answers elsewhere, the code the question names,
the interdiff at the anchor): the requests to the host, the time to gather and assemble
the prompt (against the fake GitLab at LATENCY per request), and the prompt's size. The
second answer on the same head reads the code from the per-sha cache.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import structlog
from common import LATENCY, BenchGitLab, Row, settings, timed
from structlog.typing import FilteringBoundLogger

from livereview.app.daemon import App
from livereview.core.model import (
    Actor,
    Identity,
    JobReason,
    JobState,
    MergeRequest,
    Message,
    MRKey,
    ReplyJob,
    Snapshot,
    Thread,
)
from livereview.core.prompt import Prompt
from livereview.core.triggers import reply_marker
from livereview.hosts.base import Host
from livereview.jobs.llm import Answer
from livereview.reply.code_context import Surroundings
from livereview.reply.moved import Moved
from livereview.reply.other_threads import gather
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.settings import AnswerSettings

PATH = "bench/context"
THREADS = 200


def module(n: int) -> str:
    body = [f'"""Module {n}."""\n', "import os\n"]
    for f in range(12):
        body.append(f"\n\ndef load_record_{n}_{f}(db, key):\n    row = db.get(key)\n"
                    f"    if row is None:\n        raise KeyError(key)\n    return row + {f}\n")
    return "".join(body)


class Recorder:
    """An answerer that keeps the prompt and answers at once."""

    def __init__(self) -> None:
        self.prompts: list[Prompt] = []

    async def answer(self, prompt: Prompt) -> Answer:
        self.prompts.append(prompt)
        return Answer('{"mode": "help", "answer": "ok"}', "bench", len(prompt.user) // 4)

    async def close(self) -> None:
        return None


def populate(gitlab: BenchGitLab) -> tuple[int, str, str]:
    """The MR; the thread and the note that asks."""
    gitlab.add_project(PATH)
    files = {f"src/m{n}.py": ("", module(n)) for n in range(20)}
    iid = gitlab.add_mr(PATH, title="records", author="bob", files=files)
    asked = None
    for t in range(THREADS):
        line = 15 if t == 7 else 5 + t % 30  # the asked thread: on a line the push changes
        position = {"new_path": f"src/m{t % 20}.py", "new_line": line} if t % 2 else None
        note = gitlab.add_note(PATH, iid, author="alice", body=f"Remark {t}: is this right? "
                               "The error path looks untested.", position=position)
        discussion = next(str(d["id"]) for d in gitlab.discussions(PATH, iid)
                          if d["notes"][0]["id"] == note["id"])
        if t % 5 == 0:
            gitlab.add_note(PATH, iid, author="livereview", reply_to_discussion=discussion,
                            body=f"It is, see line {t}.\n\n{reply_marker(str(note['id']))}")
        if t == 7:
            asked = discussion
    gitlab.push(PATH, iid, title="fix", files={"src/m7.py": ("", module(7).replace(
        "raise KeyError(key)", "return None"))})
    assert asked is not None
    question = gitlab.add_note(PATH, iid, author="alice", reply_to_discussion=asked,
                               body="@livereview is this fixed now? What does `src/m7.py:42` "
                               "do, and does load_record_3_5() still raise?")
    return iid, asked, str(question["id"])


async def nothing(job: ReplyJob, host: Host, stored: Snapshot, thread: Thread,
                  question: Message, identity: Identity, diff: str | None,
                  answers: AnswerSettings, log: FilteringBoundLogger
                  ) -> tuple[Surroundings, Moved | None]:
    """The composer's `_surroundings` without any: the answer's context without the rest."""
    return Surroundings(), None


async def answer(app: App, stored: Snapshot, identity: Identity, thread: str,
                 message: str) -> tuple[float, int]:
    host = app.hosts["gl"]
    job = ReplyJob(1, f"gl:{PATH}:{stored.mr.key.iid}:{message}", stored.mr.key, thread,
                   message, JobReason.MENTION, JobState.ACKED, 0, datetime.now(UTC))
    before, started = host.requests_sent, time.perf_counter()
    await app.worker.composer.compose(job, host, stored, identity,
                                      structlog.get_logger("bench"))
    return time.perf_counter() - started, host.requests_sent - before


async def measure(state_dir: Path, with_context: bool, repeat: int
                  ) -> tuple[float, float, int, int, Prompt, float]:
    gitlab = BenchGitLab()
    iid, thread, message = populate(gitlab)
    with FakeGitLabServer(gitlab, latency_seconds=LATENCY) as server:
        recorder = Recorder()
        name = "with" if with_context else "without"
        app = App.create(settings(server.url, [PATH], state_dir / f"context-{name}.db"),
                         answerer=recorder)
        composer = app.worker.composer
        if not with_context:
            composer._surroundings = nothing  # type: ignore[method-assign]
        try:
            host = app.hosts["gl"]
            identity = await host.whoami()
            stored = await host.fetch_mr(PATH, iid)
            assert stored.mr.key == MRKey("gl", PATH, iid)
            first, first_requests = await answer(app, stored, identity, thread, message)
            warm = [await answer(app, stored, identity, thread, message)
                    for _ in range(repeat)]
            pure = timed(lambda: gather(stored, thread, identity, "gitlab"), 5)
        finally:
            await app.close()
    return (first, statistics.median(w for w, _ in warm), first_requests, warm[0][1],
            recorder.prompts[-1], pure)


def long_thread(notes: int) -> float:
    """The rest of the conversation when another thread of the MR holds `notes` notes, half
    of them the bot's: one pass, only the newest answers rendered (pure, best of 3)."""
    when = datetime(2026, 1, 1, tzinfo=UTC)
    alice, bot = Actor("1", "alice"), Actor("99", "livereview")
    messages = tuple(Message(str(i), "big", bot if i % 2 else alice, "words " * 30,
                             when + timedelta(seconds=i), when + timedelta(seconds=i))
                     for i in range(notes))
    mr = MergeRequest(MRKey("gl", PATH, 1), "t", "", alice, "f", "main", "opened", "h", "b",
                      "b", "https://gitlab.example/x/-/merge_requests/1", when, when)
    here = Thread("here", (Message("q", "here", alice, "q", when, when),))
    snapshot = Snapshot(mr, (Thread("big", messages), here), ())
    identity = Identity("gl", "99", "livereview")
    return timed(lambda: gather(snapshot, "here", identity, "gitlab"), 3)


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    repeat = 1 if quick else 5
    print(f"\n## 14. one answer's context on an MR of {THREADS} threads "
          f"({LATENCY * 1000:.0f} ms per request; warm: median of {repeat})")
    rows = []
    for with_context in (False, True):
        first, warm, requests, warm_requests, prompt, pure = asyncio.run(
            measure(state_dir, with_context, repeat))
        label = "with the new context" if with_context else "without (thread, hunk, refs)"
        print(f"{label:>30}: first {first * 1000:6.0f} ms, {requests} requests; same head "
              f"again {warm * 1000:6.0f} ms, {warm_requests} requests; prompt "
              f"{len(prompt.user):,} chars, sections: {', '.join(prompt.sections)}")
        if with_context:
            print(f"{'':>30}  the other threads and the bot's answers, from the snapshot of "
                  f"{THREADS} threads: {pure * 1000:.1f} ms (pure, best of 5)")
        if prompt.truncated:
            print(f"{'':>30}  cut: {'; '.join(prompt.truncated)}")
        rows.append(Row(f"14. answer on a {THREADS}-thread MR, {label}",
                        f"{first * 1000:.0f} ms / {requests} requests first, "
                        f"{warm * 1000:.0f} ms / {warm_requests} on the same head; "
                        f"prompt {len(prompt.user):,} chars"))
    notes = 20_000 if quick else 100_000
    took = long_thread(notes)
    print(f"{'':>30}  ... and beside a thread of {notes:,} notes: {took * 1000:.0f} ms (pure)")
    rows.append(Row(f"14. the rest of the conversation beside a {notes:,}-note thread",
                    f"{took * 1000:.0f} ms (pure, in the event loop)"))
    return rows


if __name__ == "__main__":
    import tempfile

    from common import quiet
    quiet()
    with tempfile.TemporaryDirectory() as tmp:
        run(Path(tmp), quick=True)
