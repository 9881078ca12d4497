"""CPU seconds per test module, for keeping `.ci/run` inside its budget on a 2-core machine
(docs/development.md). Opt in with `-p tests.cpu_seconds`; LIVEREVIEW_CPU_REPORT names the
file each process appends to (one JSON line per test: module, test, user+sys seconds, and
the wall seconds it took).

Wall time on a shared machine measures the neighbours; CPU seconds measure the test. Each
test is charged what its process spent between its setup and its teardown (the fake
servers' threads included) plus what the subprocesses it waited for spent (RUSAGE_CHILDREN
counts a child once it is reaped). A module-scoped fixture is charged to the module's first
test, a session one to the first test of the session: the per-module sums are what counts.
What a process spent before its first test (start-up, importing and collecting every test
module: each xdist worker does it again) is one line of its own, module `(collection)`.
A test whose wall time is far above its CPU time waits (a timeout, a poll interval, a
subprocess's start-up): more xdist workers than cores overlap those waits.
Summarise with `python -m tests.cpu_seconds FILE`.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path

import pytest

REPORT_ENV = "LIVEREVIEW_CPU_REPORT"
COLLECTION = "(collection)"


def _spent() -> float:
    own, children = (resource.getrusage(resource.RUSAGE_SELF),
                     resource.getrusage(resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _record(module: str, test: str, cpu: float, wall: float) -> None:
    report = os.environ.get(REPORT_ENV, "")
    if not report:
        return
    line = json.dumps({"module": module, "test": test, "cpu": round(cpu, 3),
                       "wall": round(wall, 3)})
    with Path(report).open("a", encoding="utf-8") as out:
        out.write(line + "\n")


def pytest_collection_finish(session: pytest.Session) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    # wall time since the process started is not known here; CPU is what counts
    _record(COLLECTION, worker, _spent(), 0.0)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    before, started = _spent(), time.monotonic()
    yield
    module, _, test = item.nodeid.partition("::")
    _record(module, test, _spent() - before, time.monotonic() - started)


def summary(lines: list[str], top: int = 60) -> str:
    """CPU and wall seconds per module, most CPU first, with the totals."""
    cpu: dict[str, float] = defaultdict(float)
    wall: dict[str, float] = defaultdict(float)
    tests: dict[str, int] = defaultdict(int)
    for line in lines:
        row = json.loads(line)
        cpu[row["module"]] += float(row["cpu"])
        wall[row["module"]] += float(row.get("wall", 0.0))
        tests[row["module"]] += 1
    ranked = sorted(cpu.items(), key=lambda pair: -pair[1])
    header = "     cpu     wall  tests  module"
    rows = [f"{seconds:8.1f} {wall[name]:8.1f}  {tests[name]:5d}  {name}"
            for name, seconds in ranked[:top]]
    count = sum(n for name, n in tests.items() if name != COLLECTION)
    total = f"{sum(cpu.values()):8.1f} {sum(wall.values()):8.1f}  {count:5d}  total"
    return "\n".join([header, *rows, total])


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]).read_text(encoding="utf-8").splitlines()))
