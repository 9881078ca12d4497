"""CPU seconds per test module, for keeping `.ci/run` inside its budget on a 2-core machine
(docs/development.md). Opt in with `-p tests.cpu_seconds`; LIVEREVIEW_CPU_REPORT names the
file each process appends to (one JSON line per test: module, test, user+sys seconds).

Wall time on a shared machine measures the neighbours; CPU seconds measure the test. Each
test is charged what its process spent between its setup and its teardown (the fake
servers' threads included) plus what the subprocesses it waited for spent (RUSAGE_CHILDREN
counts a child once it is reaped). A module-scoped fixture is charged to the module's first
test, a session one to the first test of the session: the per-module sums are what counts.
Summarise with `python -m tests.cpu_seconds FILE`.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from collections import defaultdict
from collections.abc import Generator
from pathlib import Path

import pytest

REPORT_ENV = "LIVEREVIEW_CPU_REPORT"


def _spent() -> float:
    own, children = (resource.getrusage(resource.RUSAGE_SELF),
                     resource.getrusage(resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    before = _spent()
    yield
    report = os.environ.get(REPORT_ENV, "")
    if not report:
        return
    module, _, test = item.nodeid.partition("::")
    line = json.dumps({"module": module, "test": test, "cpu": round(_spent() - before, 3)})
    with Path(report).open("a", encoding="utf-8") as out:
        out.write(line + "\n")


def summary(lines: list[str], top: int = 60) -> str:
    """CPU seconds per module, largest first, with the total."""
    by_module: dict[str, float] = defaultdict(float)
    tests: dict[str, int] = defaultdict(int)
    for line in lines:
        row = json.loads(line)
        by_module[row["module"]] += float(row["cpu"])
        tests[row["module"]] += 1
    ranked = sorted(by_module.items(), key=lambda pair: -pair[1])
    rows = [f"{cpu:8.1f}  {tests[name]:4d}  {name}" for name, cpu in ranked[:top]]
    return "\n".join([*rows, f"{sum(by_module.values()):8.1f}  {sum(tests.values()):4d}  total"])


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]).read_text(encoding="utf-8").splitlines()))
