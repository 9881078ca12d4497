"""`livereview demo`: the whole loop on one machine, no account, no API key.

A sandbox GitLab (the same fake the tests use) serves a sample merge request on loopback;
a scripted colleague asks questions in it; the real daemon — adapter, store, scheduler,
worker — notices, acks and answers. Answers come from the sandbox answer engine (clearly
labelled) unless `--llm` points the daemon at the configured model (probed first, so an
unreachable endpoint is said at once). Ctrl-C or SIGTERM stops it within a second or two;
its temporary database is removed on exit unless `--keep` asks to keep it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from livereview.app.daemon import App
from livereview.core.triggers import replied_to
from livereview.jobs.llm import probe
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.sandbox.llm_server import FakeLLMServer
from livereview.settings import AISettings, Settings, parse
from livereview.sync.cycle_report import CycleReport

PROJECT = "demo/webshop"
TOKEN = "glpat-demo-sandbox-token"  # noqa: S105 - the sandbox's own token
OLD, NEW = (
    "import threading\n\n_cache = {}\n\n\ndef price(sku):\n    return _cache.get(sku)\n",
    "import threading\n\n_cache = {}\n_lock = threading.Lock()\n\n\ndef price(sku):\n"
    "    with _lock:\n        return _cache.get(sku)\n",
)
DIFF_LINE = {"new_path": "shop/prices.py", "new_line": 9}
SCRIPT = (  # where the colleague writes, and what
    ("diff line", "@livereview is this lock needed for a read?"),
    ("same thread", "But dict.get is atomic under the GIL, isn't it?"),  # no mention needed
    ("general", "@livereview anything else you would change before this merges?"),
)


class DemoError(Exception):
    """The demo cannot run as asked (the --llm endpoint is unreachable)."""


class DemoInterrupted(Exception):
    """Ctrl-C or SIGTERM: the demo stopped early, cleanly."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.signal_name = signal.Signals(signum).name


@dataclass
class Timing:
    question: str
    ack: float | None = None
    reply: float | None = None


@dataclass
class Demo:
    gitlab: FakeGitLab
    iid: int
    out: TextIO
    started: float = field(default_factory=time.monotonic)
    timings: list[Timing] = field(default_factory=list)

    def show_poll(self, reports: dict[str, CycleReport]) -> None:
        """One line per poll cycle that found something (idle cycles are one request)."""
        for report in reports.values():
            if report.events or report.jobs:
                self.say(f"  poll: {report.requests} requests, {report.fetched} MR fetched, "
                         f"{report.events} new events, {report.jobs} reply job(s) "
                         f"({report.seconds * 1000:.0f} ms)")

    def say(self, text: str) -> None:
        print(f"[{time.monotonic() - self.started:6.2f}s] {text}", file=self.out, flush=True)

    async def wait(self, what: Callable[[], bool], limit: float = 60.0) -> float | None:
        start = time.monotonic()
        while not what():
            if time.monotonic() - start > limit:
                return None
            await asyncio.sleep(0.05)
        return time.monotonic() - start

    def reply_to(self, note_id: object) -> dict[str, Any] | None:
        return next((n for n in self.gitlab.notes_by("livereview")
                     if replied_to(str(n["body"])) == str(note_id)), None)

    async def ask(self, where: str, body: str, thread: str | None) -> str:
        kwargs: dict[str, Any] = {}
        if where == "diff line":
            kwargs["position"] = DIFF_LINE
        elif where == "same thread" and thread:
            kwargs["reply_to_discussion"] = thread
        note = self.gitlab.add_note(PROJECT, self.iid, author="alice", body=body, **kwargs)
        self.say(f"alice writes ({where}): “{body}”")
        timing = Timing(body)
        self.timings.append(timing)
        timing.ack = await self.wait(lambda: bool(
            self.gitlab.awards_on(PROJECT, self.iid, note["id"])))
        if timing.ack is not None:
            self.say(f"  👀 livereview acknowledged it ({timing.ack:.1f}s after it was written)")
        waited = await self.wait(lambda: self.reply_to(note["id"]) is not None)
        reply = self.reply_to(note["id"])
        if waited is None or reply is None:
            self.say("  no answer within 60s — see the log lines above")
            return ""
        timing.reply = (timing.ack or 0) + waited
        text = str(reply["body"]).split("<!--")[0].strip()
        self.say(f"  💬 livereview answered in the thread ({timing.reply:.1f}s):")
        for line in text.splitlines()[:8]:
            print(f"             │ {line}", file=self.out)
        return str(next(d["id"] for d in self.gitlab.discussions(PROJECT, self.iid)
                        if any(n["id"] == note["id"] for n in d["notes"])))

    async def colleague(self) -> None:
        thread: str | None = None
        for where, body in SCRIPT:
            await asyncio.sleep(1.0)
            thread = await self.ask(where, body, thread)


def sandbox_gitlab() -> tuple[FakeGitLab, int]:
    gitlab = FakeGitLab(token=TOKEN)
    gitlab.add_user("alice", "Alice Example")
    gitlab.add_user("bob", "Bob Example")
    gitlab.add_project(PROJECT)
    iid = gitlab.add_mr(PROJECT, title="Guard the price cache with a lock",
                        description="Checkout saw stale prices under load; this adds a lock.",
                        author="bob", files={"shop/prices.py": (OLD, NEW)})
    return gitlab, iid


def demo_settings(gitlab_url: str, state: Path, ai: AISettings | None, llm_url: str) -> Settings:
    settings = parse({
        "daemon": {"database_url": f"sqlite:///{state / 'livereview.db'}",
                   "hot_poll_interval_seconds": 1, "poll_interval_seconds": 10,
                   # Ctrl-C must end the demo within a second or two, not wait for answers.
                   "shutdown_grace_seconds": 1, "metrics_listen": ""},
        "ai": {"base_url": llm_url, "model": "sandbox", "api_key_env": ""},
        "hosts": [{"name": "sandbox", "type": "gitlab", "url": gitlab_url,
                   "token_env": "DEMO_TOKEN"}],
        "repos": [{"host": "sandbox", "path": PROJECT}],
    }, {"DEMO_TOKEN": TOKEN})
    if ai is None:
        return settings
    return settings.model_copy(update={"ai": ai})


def summary(demo: Demo, out: TextIO) -> None:
    acks = [t.ack for t in demo.timings if t.ack is not None]
    replies = [t.reply for t in demo.timings if t.reply is not None]
    print("\nSummary", file=out)
    print(f"  questions answered: {len(replies)} of {len(demo.timings)}", file=out)
    if acks:
        print(f"  time to 👀 ack:  median {statistics.median(acks):.1f}s, max {max(acks):.1f}s",
              file=out)
    if replies:
        print(f"  time to reply:  median {statistics.median(replies):.1f}s, "
              f"max {max(replies):.1f}s", file=out)
    print("\nNext: `livereview init` writes a config for your GitLab, `livereview check` "
          "tests it,\n`livereview run` starts the daemon. docs/configuration.md explains "
          "each setting.", file=out)


async def run_demo(out: TextIO, ai: AISettings | None = None, *, keep: bool = False) -> int:
    """The demo; raises DemoError if it cannot run, DemoInterrupted on Ctrl-C/SIGTERM."""
    if ai is not None:
        trouble = await probe(ai)
        if trouble is not None:
            raise DemoError(f"demo --llm: {trouble}")
    state = Path(tempfile.mkdtemp(prefix="livereview-demo-"))
    received: list[int] = []
    main, loop = asyncio.current_task(), asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        if received:  # a second Ctrl-C: leave now, whatever is still closing
            os._exit(128 + signum)
        received.append(signum)
        if main is not None:
            main.cancel()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        return await _sandbox(out, ai, state)
    except asyncio.CancelledError:
        if not received:
            raise
        raise DemoInterrupted(received[0]) from None
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        if keep:
            print(f"The demo's database is kept: {state / 'livereview.db'}", file=out)
        else:
            shutil.rmtree(state, ignore_errors=True)


async def _sandbox(out: TextIO, ai: AISettings | None, state: Path) -> int:
    gitlab, iid = sandbox_gitlab()
    with FakeGitLabServer(gitlab) as server, FakeLLMServer() as llm:
        settings = demo_settings(server.url, state, ai, llm.url)
        engine = f"model {ai.model} at {ai.base_url}" if ai else "the sandbox answer engine"
        demo = Demo(gitlab, iid, out)
        demo.say(f"sandbox GitLab on {server.url}, MR !{iid} in {PROJECT}; answers from "
                 f"{engine}; polling every {settings.daemon.hot_poll_interval_seconds:g}s")
        app = App.create(settings)
        app.on_cycle = demo.show_poll
        stop = asyncio.Event()
        daemon = asyncio.create_task(app.run(stop, handle_signals=False))
        try:
            await demo.colleague()
        finally:
            stop.set()
            await daemon
            await app.close()
        summary(demo, out)
        return 0 if all(t.reply is not None for t in demo.timings) else 1
