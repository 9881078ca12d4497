"""`livereview mcp` in a repository with no config file anywhere serves that repository's
local reviews (docs/agent-tools.md): spawned over stdio as an agent's client spawns it, and
driven by the MCP SDK's own client. A config that is named but missing is still an error."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from livereview.mcp.local import NAMES
from tests.local_repo import review_repo


def _server(cwd: Path, *args: str) -> StdioServerParameters:
    # The SDK passes on only HOME, PATH, SHELL and TERM: no LIVEREVIEW_CONFIG, no model key.
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "livereview", *args, "mcp"], cwd=str(cwd))


def test_mcp_without_a_config_serves_the_repository_s_local_reviews(tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    stderr = tmp_path / "mcp.stderr"

    async def session() -> tuple[set[str], Any, Any]:
        with stderr.open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(_server(repo.path), errlog=errlog)) as client:
                tools = {t.name for t in (await client.list_tools()).tools}
                requested = await client.call_tool(
                    "request_review", {"title": "Area", "range": "HEAD~1"})
                shown = await client.call_tool("show_review", {"review_id": 1})
                return tools, requested, shown

    tools, requested, shown = asyncio.run(session())
    assert tools == set(NAMES)  # no hosted MR tools: there are no hosts without a config
    assert not requested.is_error, requested.content
    review = requested.structured_content
    assert review is not None and review["id"] == 1 and review["title"] == "Area"
    assert review["ai"].startswith("no AI settings")  # said, not silently skipped
    assert not shown.is_error and shown.structured_content is not None
    assert len(shown.structured_content["threads"]) == len(review["threads"]) > 0
    assert (repo.path / ".livereview" / "livereview.db").exists()


def test_mcp_with_a_named_config_that_is_missing_is_a_config_error(tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    missing = tmp_path / "nowhere.toml"
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "livereview", "--config", str(missing), "mcp"],
        cwd=repo.path, capture_output=True, text=True, stdin=subprocess.DEVNULL,
        timeout=600, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("livereview: config error:") and str(missing) in done.stderr
