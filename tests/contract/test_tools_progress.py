"""An agent that asks for progress hears of each file of the diff as it is read, through
the MCP SDK's own client (a progress callback on the call), on every host's fake; and a
diff stops reading at its size budget."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from livereview.app.wiring import open_toolbox
from livereview.mcp.server import build
from livereview.settings import load
from livereview.tools import diffs, results
from tests.contract.drivers import PATH
from tests.contract.test_tools_large import open_large
from tests.contract.tools_side import HOSTS, ToolSide, sides


@pytest.fixture(params=HOSTS)
def side(request: pytest.FixtureRequest, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolSide]:
    with sides(request.param, tmp_path, monkeypatch) as made:
        yield made


def _call(side: ToolSide, tool: str, mr: str, **arguments: Any
          ) -> tuple[dict[str, Any], list[tuple[float, float | None, str | None]]]:
    heard: list[tuple[float, float | None, str | None]] = []

    async def report(progress: float, total: float | None, message: str | None) -> None:
        heard.append((progress, total, message))

    async def call() -> dict[str, Any]:
        settings = load(side.config)
        box = open_toolbox(settings)
        try:
            async with Client(build(box, settings)) as client:
                result = await client.call_tool(tool, {"mr": mr, **arguments},
                                                progress_callback=report)
        finally:
            await box.close()
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return dict(result.structured_content)
    return asyncio.run(call()), heard


def test_each_file_of_the_diff_is_a_progress_notification(side: ToolSide) -> None:
    iid = open_large(side.driver, 30)
    mr = f"{side.driver.name}:{side.driver.repo}!{iid}"
    answer, heard = _call(side, "diff", mr)
    assert len(answer["files"]) == 30
    assert [done for done, _, _ in heard] == list(range(1, 31))
    assert heard[-1][2] == "30 files read"
    stat, listed = _call(side, "diffstat", side.mr, paths=[PATH])
    assert [f["path"] for f in stat["files"]] == [PATH]
    assert listed == [(1, None, "1 files listed")]
    stat, listed = _call(side, "diffstat", mr)  # a page at a time, as the host pages
    counts = [done for done, _, _ in listed]
    assert stat["files_total"] == 30 and counts[-1] == 30 and counts == sorted(set(counts))


def test_the_cli_prints_the_diffstat_and_its_totals(side: ToolSide) -> None:
    iid = open_large(side.driver, 30)
    mr = f"{side.driver.name}:{side.driver.repo}!{iid}"
    run = side.cli("diffstat", mr)
    lines = run.out.splitlines()
    assert run.code == 0 and len(lines) == 31, run.err
    assert lines[0].startswith("A ") and "pkg/f0000.py" in lines[0]
    assert lines[-1] == "30 of 30 files, +1230 -0"
    as_json = side.cli("diffstat", mr, "--json").json()
    assert as_json["files_total"] == 30 and len(as_json["files"]) == 30


def test_a_diff_stops_reading_at_its_budget(side: ToolSide) -> None:
    iid = open_large(side.driver, 30)
    mr = f"{side.driver.name}:{side.driver.repo}!{iid}"

    async def read() -> results.Diff:
        box = open_toolbox(load(side.config))
        try:
            return await diffs.diff(box, mr, budget=5_000)  # about two files' diffs
        finally:
            await box.close()
    result = asyncio.run(read())
    assert len(result.files) == 2 and len(result.omitted) == 1
    assert "were not read" in result.note and result.omitted[0] in result.note
