"""The daemon side of figure 8, run as its own process so its memory and CPU are its own.

    python bench/longthread_driver.py cycles URL DB CYCLES [MAX_RESPONSE_MB]
    python bench/longthread_driver.py daemon URL DB [MAX_RESPONSE_MB]

`cycles` runs CYCLES poll cycles (`app.cycle()`, the first one cold) over the two bench
repos and prints one JSON line per cycle with wall and CPU seconds and the process's peak
resident memory. `daemon` runs the real daemon (`app.run()`) until SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from pathlib import Path

from common import NoLLM, poll_cycle, quiet, repo_path, settings
from memory_driver import memory_kib

from livereview.app.daemon import App
from livereview.core.prompt import Prompt
from livereview.jobs.llm import Answer


class QuickLLM(NoLLM):
    async def answer(self, prompt: Prompt) -> Answer:
        return Answer("Noted.", "bench")


def app_for(url: str, db: Path, max_response_mb: int = 32) -> App:
    return App.create(settings(url, [repo_path(0), repo_path(1)], db,
                               daemon={"hot_poll_interval_seconds": 1},
                               host={"max_response_mb": max_response_mb}), answerer=QuickLLM())


async def cycles(url: str, db: Path, count: int, max_response_mb: int) -> None:
    app = app_for(url, db, max_response_mb)
    try:
        for i in range(count):
            wall, cpu = time.perf_counter(), time.process_time()
            reports = await poll_cycle(app, cold=i == 0)
            report = next(iter(reports.values()))
            print(json.dumps({"cycle": i + 1, "seconds": time.perf_counter() - wall,
                              "cpu_seconds": time.process_time() - cpu,
                              "fetched": report.fetched, "errors": report.errors,
                              **memory_kib()}), flush=True)
    finally:
        await app.close()


async def daemon(url: str, db: Path, max_response_mb: int) -> None:
    app = app_for(url, db, max_response_mb)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await app.run(stop)
    finally:
        await app.close()
    print(json.dumps({"stopped": True, **memory_kib()}), flush=True)


if __name__ == "__main__":
    quiet()
    mode, url, db = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    if mode == "cycles":
        asyncio.run(cycles(url, db, int(sys.argv[4]), int(sys.argv[5]) if len(sys.argv) > 5
                           else 32))
    else:
        asyncio.run(daemon(url, db, int(sys.argv[4]) if len(sys.argv) > 4 else 32))
