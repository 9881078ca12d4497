"""The daemon side of figure 5, run as its own process so its memory is its own.

    python bench/memory_driver.py URL REPOS DB CYCLES LLM_URL

Loads what `livereview run` loads (and not the benchmark's fakes), builds the App for REPOS
watched repos (bench/repo-000 …) on the fake GitLab at URL with the model at LLM_URL, runs
CYCLES poll cycles (`app.cycle()`; the first one cold, as the scheduler's first tick is),
each followed by the reply worker's drain — the answers to the mentions the fake holds,
through the daemon's own model client — and prints one JSON object per line: after the
imports, after start-up, then after each cycle, with the process's current and peak
resident memory.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path

from livereview import log_setup
from livereview.app.daemon import App
from livereview.cli.commands import main as _cli  # noqa: F401 - what `livereview run` loads
from livereview.settings import parse

TOKEN, TOKEN_ENV = "glpat-bench-token-000000", "BENCH_TOKEN"  # as bench/common.py


def memory_kib() -> dict[str, int]:
    """VmRSS and VmHWM (peak) of this process, in KiB, from /proc/self/status."""
    out: dict[str, int] = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                out[name] = int(value.split()[0])
    return out


def emit(**fields: object) -> None:
    print(json.dumps({**fields, **memory_kib()}), flush=True)


async def main(url: str, repos: int, db: Path, cycles: int, llm_url: str) -> None:
    settings = parse({
        "daemon": {"database_url": f"sqlite:///{db}", "metrics_listen": ""},
        "ai": {"api_key_env": "", "base_url": llm_url, "model": "sandbox",
               "timeout_seconds": 30},
        "bot": {"max_replies_per_mr_per_hour": 10_000},
        "hosts": [{"name": "gl", "type": "gitlab", "url": url, "token_env": TOKEN_ENV}],
        "repos": [{"host": "gl", "path": f"bench/repo-{i:03d}"} for i in range(repos)],
    }, {TOKEN_ENV: TOKEN})
    app = App.create(settings, upgrade_apart=True)  # as `livereview run` does
    emit(stage="created")
    try:
        for i in range(cycles):
            started = time.perf_counter()
            cpu = time.process_time()
            reports = await app.cycle(cold=i == 0)
            report = next(iter(reports.values()))
            await app.worker.drain()
            emit(stage="cycle", cycle=i + 1, seconds=time.perf_counter() - started,
                 cpu_seconds=time.process_time() - cpu, fetched=report.fetched,
                 listed=report.listed, requests=report.requests, errors=report.errors,
                 jobs=report.jobs)
    finally:
        await app.close()


if __name__ == "__main__":
    # Measure the daemon as `pip install livereview` installs it. httpcore2 imports trio
    # whenever it is installed (httpcore2/_synchronization.py, on App.create's first
    # client), and this development environment has it only because selenium, a test
    # dependency, requires it: 3.5 MiB that a production daemon does not carry. Hidden
    # here, and said in the figure's output.
    sys.modules["trio"] = None  # type: ignore[assignment]  # `import trio` → ImportError
    log_setup.configure("console", level="WARNING")
    logging.getLogger("apscheduler").setLevel(logging.ERROR)
    emit(stage="imported")
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]),
                     sys.argv[5]))
