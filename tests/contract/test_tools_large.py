"""A large MR through the tools: the diff is streamed one file at a time and the diffstat
never holds the whole diff — the peak memory of reading it stays a fraction of its size.

The host's fake runs in a process of its own (`python -m tests.contract.test_tools_large
HOST`), so what tracemalloc sees here is only the tools' side: the adapter, its HTTP
client and JSON, and the tools.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from livereview.app.wiring import open_toolbox
from livereview.settings import load
from livereview.tools import diffs
from tests.contract.drivers import DRIVERS, TOKEN
from tests.contract.tools_side import HOSTS, TOKEN_ENV, describe, write_config

SMALL, LARGE = 500, 2500  # five and twenty-five pages of files on every host
LINE = "x = 'a line of about sixty characters, repeated to weigh'\n"
BODY = LINE * 40  # ~2.4 kB a file: ~6 MB of diff for the large MR
ROOT = Path(__file__).parents[2]


def open_large(driver: Any, count: int) -> int:
    files = {f"pkg/f{n:04d}.py": ("", f"# file {n}\n" + BODY) for n in range(count)}
    fake = driver.fake
    if hasattr(fake, "add_mr"):
        return int(fake.add_mr(driver.repo, title="Large", author="bob", files=files))
    if type(driver).__name__ == "GitHubDriver":
        return int(fake.add_pr(driver.repo, title="Large", body="", author="bob", files=files))
    return int(fake.add_pr(driver.repo, title="Large", description="", author="bob",
                           files=files))


def serve(name: str) -> None:
    """The fake with a small and a large MR, until stdin closes (in a process of its own)."""
    if name == "bitbucket-cloud":
        # An account on scaled rate limits (the headers say so): with the base 1 000
        # requests an hour the adapter paces itself, and this test would wait for it.
        driver = DRIVERS["bitbucket-cloud-access-token"]()
        driver.fake.rate_limit_per_hour = 1_000_000
    else:
        driver = DRIVERS[name]()
    asyncio.run(driver.host.close())
    iids = [open_large(driver, count) for count in (SMALL, LARGE)]
    print(json.dumps({**describe(driver), "iids": iids}), flush=True)
    sys.stdin.read()
    driver.stop()


async def peaks(config: Path, mr: str, files: int) -> tuple[int, int, int]:
    """The diff's size, the peak while streaming it, the peak while reading the diffstat."""
    box = open_toolbox(load(config))
    try:
        await box.identity(box.mr(mr))  # imports and first connection: not the diff's
        tracemalloc.start()
        size = seen = 0
        async for item in diffs.diff_stream(box, mr):
            seen += 1
            size += len(item.diff)
        diff_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        stat = await diffs.diffstat(box, mr, ["pkg/f00*"])
        stat_peak = tracemalloc.get_traced_memory()[1]
        assert seen == files and stat.files_total == files and len(stat.files) == 100
        return size, diff_peak, stat_peak
    finally:
        tracemalloc.stop()
        await box.close()


@pytest.mark.parametrize("host", HOSTS)
def test_a_large_mr_is_read_in_bounded_memory(host: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    fake = subprocess.Popen(  # noqa: S603 - this module, as the fake's process
        [sys.executable, "-m", "tests.contract.test_tools_large", host], cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert fake.stdout is not None
        described = json.loads(fake.stdout.readline())
        config = tmp_path / "livereview.toml"
        write_config(config, described, tmp_path / "livereview.db")
        small, large = (asyncio.run(peaks(
            config, f"{described['name']}:{described['repo']}!{iid}", files))
            for iid, files in zip(described["iids"], (SMALL, LARGE), strict=True))
    finally:
        if fake.stdin is not None:
            fake.stdin.close()
        fake.wait(timeout=30)
    size, diff_peak, stat_peak = large
    assert size > 5_000_000 and size > 4 * small[0]
    # Five times the files, about the same peak: one page at a time, never the diff.
    assert diff_peak < small[1] * 1.5 + 200_000, (small, large)
    assert stat_peak < small[2] * 1.5 + 200_000, (small, large)
    assert diff_peak < size / 3 and stat_peak < size / 3, (small, large)


if __name__ == "__main__":
    serve(sys.argv[1])
