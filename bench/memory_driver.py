"""The daemon side of figure 5, run as its own process so its memory is its own.

    python bench/memory_driver.py URL REPOS DB CYCLES

Builds the App for REPOS watched repos (bench/repo-000 …) on the fake GitLab at URL, runs
CYCLES poll cycles (`app.cycle()`; the first one cold, as the scheduler's first tick is)
and prints one JSON object per line: after start-up, then after each cycle, with the
process's current and peak resident memory.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from common import NoLLM, poll_cycle, quiet, repo_path, settings

from livereview.app.daemon import App


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


async def main(url: str, repos: int, db: Path, cycles: int) -> None:
    app = App.create(settings(url, [repo_path(i) for i in range(repos)], db),
                     answerer=NoLLM())
    emit(stage="created")
    try:
        for i in range(cycles):
            started = time.perf_counter()
            cpu = time.process_time()
            reports = await poll_cycle(app, cold=i == 0)
            report = next(iter(reports.values()))
            emit(stage="cycle", cycle=i + 1, seconds=time.perf_counter() - started,
                 cpu_seconds=time.process_time() - cpu, fetched=report.fetched,
                 listed=report.listed, requests=report.requests, errors=report.errors)
    finally:
        await app.close()


if __name__ == "__main__":
    quiet()
    emit(stage="imported")
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4])))
