"""Listing many MRs holds one page of payloads at a time, on every host.

First sight of an instance lists every open MR. GitLab's adapter used to gather the whole
listing as parsed payloads before keeping the four fields it needs (repo, iid, updated_at,
state), and GitHub's and Bitbucket Cloud's remembered every page of it for revalidation:
at 10 000 MRs that was the largest part of a replica's peak memory (figure 13c). Here every
MR carries a long description; listing ten times as many MRs must not raise the peak.

The host's fakes run in processes of their own (`python -m tests.contract.test_listing_large
HOST COUNT`), so what tracemalloc sees is only the adapter's side.
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
from tests.contract.drivers import DRIVERS, TOKEN
from tests.contract.tools_side import HOSTS, TOKEN_ENV, describe, write_config

SMALL, LARGE = 200, 2_000  # two and twenty pages or more on every host
DESCRIPTION = "A description that a person wrote at some length. " * 160  # ~8 kB
ROOT = Path(__file__).parents[2]


def open_mr(driver: Any, n: int) -> None:
    fake, title = driver.fake, f"Change {n}"
    if hasattr(fake, "add_mr"):
        fake.add_mr(driver.repo, title=title, description=DESCRIPTION, author="bob")
    elif type(driver).__name__ == "GitHubDriver":
        fake.add_pr(driver.repo, title=title, body=DESCRIPTION, author="bob")
    else:
        fake.add_pr(driver.repo, title=title, description=DESCRIPTION, author="bob")


def serve(name: str, count: int) -> None:
    """The fake with `count` open MRs, until stdin closes (in a process of its own)."""
    driver = DRIVERS["bitbucket-cloud-access-token" if name == "bitbucket-cloud" else name]()
    if name == "bitbucket-cloud":  # scaled rate limits: the adapter need not pace itself
        driver.fake.rate_limit_per_hour = 1_000_000
    asyncio.run(driver.host.close())
    for n in range(count):
        open_mr(driver, n)
    print(json.dumps(describe(driver)), flush=True)
    sys.stdin.read()
    driver.stop()


async def listing_peak(config: Path, described: dict[str, Any]) -> tuple[int, int]:
    """How many MRs the listing found, and the peak of traced memory while listing them."""
    box = open_toolbox(load(config))
    try:
        key = box.mr(f"{described['name']}:{described['repo']}!1")
        await box.identity(key)  # imports and first connection: not the listing's
        host = box.host(key)
        tracemalloc.start()
        changed = await host.list_changed_mrs((described["repo"],), None)
        return len(changed), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        await box.close()


@pytest.mark.parametrize("host", HOSTS)
def test_listing_many_mrs_holds_one_page_at_a_time(host: str, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    fakes = [subprocess.Popen(  # noqa: S603 - this module, as the fakes' processes
        [sys.executable, "-m", "tests.contract.test_listing_large", host, str(count)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for count in (SMALL, LARGE)]
    try:
        peaks = []
        for fake, count in zip(fakes, (SMALL, LARGE), strict=True):
            assert fake.stdout is not None
            described = json.loads(fake.stdout.readline())
            config = tmp_path / f"livereview-{count}.toml"
            write_config(config, described, tmp_path / f"livereview-{count}.db")
            listed, peak = asyncio.run(listing_peak(config, described))
            assert listed == count
            peaks.append(peak)
    finally:
        for fake in fakes:
            if fake.stdin is not None:
                fake.stdin.close()
            fake.wait(timeout=30)
    small, large = peaks
    size = LARGE * len(DESCRIPTION)
    # Ten times the MRs, about the same peak: a page at a time, never the listing.
    assert large < small * 1.5 + 500_000, f"peaks {small / 1e6:.1f} and {large / 1e6:.1f} MB"
    assert large < size, f"peak {large / 1e6:.1f} MB while listing {size / 1e6:.1f} MB"


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
