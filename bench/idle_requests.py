"""Requests per idle poll cycle against the loopback fake GitLab, for N watched repos.

    .venv/bin/python bench/idle_requests.py [N ...]

Each repo has one open MR with a few comments. After a warm-up cycle (first sight fetches
every MR), nothing changes, so every further cycle is pure idle cost.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from livereview import logging as logs
from livereview.app import App
from livereview.reply.context import Prompt
from livereview.reply.llm import Answer
from livereview.sandbox.gitlab_server import FakeGitLabServer
from livereview.sandbox.gitlab_state import FakeGitLab
from livereview.settings import parse

TOKEN = "glpat-bench-token-000000"
CYCLES = 10


class NoLLM:
    async def answer(self, prompt: Prompt) -> Answer:
        raise AssertionError("idle cycles must not call the LLM")

    async def close(self) -> None:
        return None


async def measure(repos: int, state_dir: Path) -> tuple[float, float]:
    # The MRs were last touched an hour ago: outside the listing's overlap window.
    now = [datetime.now(UTC) - timedelta(hours=1)]
    gitlab = FakeGitLab(token=TOKEN, clock=lambda: now[0])
    for i in range(repos):
        path = f"bench/repo-{i}"
        gitlab.add_project(path)
        iid = gitlab.add_mr(path, title=f"change {i}", author="alice",
                            files={"a.py": ("x = 1\n", "x = 2\n")})
        gitlab.add_note(path, iid, author="alice", body="looks fine")
    now[0] = datetime.now(UTC)
    with FakeGitLabServer(gitlab) as server:
        settings = parse({
            "daemon": {"database_url": f"sqlite:///{state_dir / f'{repos}.db'}",
                       "metrics_listen": ""},
            "ai": {"api_key_env": ""},
            "hosts": [{"name": "gl", "type": "gitlab", "url": server.url,
                       "token_env": "BENCH_TOKEN"}],
            "repos": [{"host": "gl", "path": f"bench/repo-{i}"} for i in range(repos)],
        }, {"BENCH_TOKEN": TOKEN})
        app = App.create(settings, answerer=NoLLM())
        try:
            await app.cycle(with_warm=True)  # first sight: fetch everything
            gitlab.reset_requests()
            started = time.perf_counter()
            for _ in range(CYCLES):
                await app.cycle()
            elapsed = time.perf_counter() - started
        finally:
            await app.close()
    return len(gitlab.requests) / CYCLES, elapsed / CYCLES * 1000


def main(sizes: list[int]) -> None:
    logs.configure("console", level="WARNING")
    print(f"cores: {os.cpu_count()}; {CYCLES} idle cycles after warm-up")
    print(f"{'repos':>6} {'requests/cycle':>15} {'ms/cycle':>9}")
    base = None
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            requests, ms = asyncio.run(measure(n, Path(tmp)))
            base = base or requests
            print(f"{n:>6} {requests:>15.1f} {ms:>9.1f}   ratio to first: {requests / base:.2f}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 50])
