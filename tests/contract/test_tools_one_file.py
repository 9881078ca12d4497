"""One file of a 3 000-file MR, asked for by its path: the host is asked for that file
alone where its API takes paths (Bitbucket Cloud's diffstat and diff `path`), reading
stops once the file is found where it does not (GitLab's /diffs and GitHub's /files pages,
Data Center's /changes pages), and no other file's diff is read (Data Center reads one
request per file). The old strategy — read every file, keep the wanted — is measured on
the same fake for comparison (bench figure 20 prints both)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from livereview.app.wiring import open_toolbox
from livereview.settings import load
from livereview.tools import diffs
from tests.contract.drivers import DRIVERS, TOKEN
from tests.contract.test_tools_large import open_large
from tests.contract.tools_side import HOSTS, TOKEN_ENV, describe, write_config

FILES = 3000
WANTED = "pkg/f0150.py"  # on an early page of every host's listing


def _driver(host: str) -> Any:
    if host == "bitbucket-cloud":  # scaled rate limits: the adapter does not pace itself
        driver = DRIVERS["bitbucket-cloud-access-token"]()
        driver.fake.rate_limit_per_hour = 1_000_000
        return driver
    return DRIVERS[host]()


async def _requests(config: Path, mr: str, old_way: bool) -> tuple[int, list[str], str]:
    """(requests, files returned, the wanted file's diff) of one `diff --path` call."""
    box = open_toolbox(load(config))
    try:
        key = box.mr(mr)
        await box.reached(mr)
        host = box.host(key)
        before = host.requests_sent
        if old_way:  # every file read, the wanted one kept (the code before path filters)
            found = [item async for item in host.diff_files(key, diffs.MAX_FILE_BYTES)
                     if diffs.wanted(item.change, [WANTED])]
            paths, text = [f.change.new_path for f in found], found[0].diff
        else:
            result = await diffs.diff(box, mr, [WANTED])
            paths, text = [f.path for f in result.files], result.files[0].diff
        return host.requests_sent - before, paths, text
    finally:
        await box.close()


@pytest.mark.parametrize("host", HOSTS)
def test_one_file_of_a_3000_file_mr_costs_a_few_requests_not_the_whole_diff(
        host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    driver = _driver(host)
    try:
        asyncio.run(driver.host.close())
        iid = open_large(driver, FILES)
        described = describe(driver)
        config = tmp_path / "livereview.toml"
        write_config(config, described, tmp_path / "livereview.db")
        mr = f"{described['name']}:{described['repo']}!{iid}"
        old, old_paths, old_text = asyncio.run(_requests(config, mr, old_way=True))
        new, new_paths, new_text = asyncio.run(_requests(config, mr, old_way=False))
    finally:
        driver.stop()
    assert old_paths == new_paths == [WANTED] and new_text == old_text
    assert "# file 150" in new_text
    assert new * 4 < old, (old, new)
    if host == "bitbucket-cloud":  # the PR, the diffstat of the file, its diff
        assert new <= 3, new
