"""The daemon side of the first-sight figure, run as its own process (its CPU its own).

    python bench/firstsight_driver.py URL REPOS DB MODE [LLM_URL]

MODE `sweep`: one cold `app.cycle()` that waits for every MR it set out to read (the first
sweep), then prints one JSON line: seconds, CPU seconds, requests, MRs listed and read.
MODE `run`: the real daemon (`app.run`, SIGTERM stops it), answering with the LLM at
LLM_URL; prints a JSON line when it has stopped.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from common import NoLLM, poll_cycle, quiet, repo_path, settings

from livereview.app.daemon import App


async def sweep(url: str, repos: int, db: Path) -> None:
    app = App.create(settings(url, [repo_path(i) for i in range(repos)], db),
                     answerer=NoLLM())
    try:
        started, cpu = time.perf_counter(), time.process_time()
        report = next(iter((await poll_cycle(app, cold=True)).values()))
        print(json.dumps({"seconds": time.perf_counter() - started,
                          "cpu_seconds": time.process_time() - cpu, "listed": report.listed,
                          "fetched": report.fetched, "requests": report.requests,
                          "errors": report.errors}), flush=True)
    finally:
        await app.close()


async def run(url: str, repos: int, db: Path, llm_url: str) -> None:
    app = App.create(settings(url, [repo_path(i) for i in range(repos)], db, llm_url=llm_url))
    try:
        await app.run()
    finally:
        await app.close()
    print(json.dumps({"stage": "stopped"}), flush=True)


if __name__ == "__main__":
    quiet()
    url, count, db, mode = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
    if mode == "sweep":
        asyncio.run(sweep(url, count, db))
    else:
        asyncio.run(run(url, count, db, sys.argv[5]))
