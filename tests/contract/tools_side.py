"""The MR tools' side of each contract driver: a config file pointing at the host's fake,
the CLI (`livereview mr … --json`, in-process) and the MCP face (the SDK's client, in
process) over the same toolbox code, so every test can run an operation both ways."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from livereview.app.wiring import open_toolbox
from livereview.cli.commands import main
from livereview.mcp.server import build
from livereview.settings import load
from tests.contract.drivers import DRIVERS, TOKEN, Driver
from tests.databases import url_for

TOKEN_ENV = "LIVEREVIEW_TOOLS_TOKEN"
# One driver per host type; GitHub in its Enterprise Server form, whose API base a config
# file accepts on a loopback address.
HOSTS = ("gitlab", "github-enterprise", "bitbucket-cloud", "bitbucket-server")
TYPES = {"GitLabDriver": "gitlab", "GitHubDriver": "github",
         "BitbucketCloudDriver": "bitbucket-cloud", "BitbucketServerDriver": "bitbucket-server"}


def _url(driver: Any) -> str:
    kind = TYPES[type(driver).__name__]
    if kind == "github":
        return str(driver.url)
    if kind == "bitbucket-cloud":
        return str(driver.server.api_url)
    return str(driver.server.url)


def describe(driver: Any) -> dict[str, Any]:
    """What a config file needs to know of a driver's fake."""
    return {"name": driver.name, "kind": TYPES[type(driver).__name__], "url": _url(driver),
            "repo": driver.repo, "bot": driver.bot,
            "access_token": bool(getattr(driver, "access_token", False))}


def write_config(path: Path, host: dict[str, Any], db: Path, *, agent_writes: bool = True
                 ) -> None:
    lines = ["[daemon]", f'database_url = "{url_for(db)}"', 'metrics_listen = ""',
             "poll_interval_seconds = 5", "hot_poll_interval_seconds = 1", "",
             "[ai]", 'api_key_env = ""', "",
             "[[hosts]]", f'name = "{host["name"]}"', f'type = "{host["kind"]}"',
             f'url = "{host["url"]}"', f'token_env = "{TOKEN_ENV}"',
             f"agent_writes = {str(agent_writes).lower()}"]
    if host["kind"] == "bitbucket-cloud":
        lines.append(f'username = "{host["bot"]}"' if host["access_token"]
                     else f'login = "{host["bot"]}"')
    lines += ["", "[[repos]]", f'host = "{host["name"]}"', f'path = "{host["repo"]}"', ""]
    path.write_text("\n".join(lines), encoding="utf-8")


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        assert self.code == 0, self.err
        return json.loads(self.out)


@dataclass
class ToolSide:
    driver: Driver
    config: Path
    iid: int

    @property
    def mr(self) -> str:
        return f"{self.driver.name}:{self.driver.repo}!{self.iid}"

    def cli(self, *args: str) -> Run:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["--config", str(self.config), "mr", *args])
        return Run(code, out.getvalue(), err.getvalue())

    def mcp(self, tool: str, **arguments: Any) -> tuple[bool, Any]:
        """(is_error, structured result or the error's text) of one MCP tool call."""
        async def call() -> tuple[bool, Any]:
            settings = load(self.config)
            box = open_toolbox(settings)
            try:
                async with Client(build(box, settings)) as client:
                    result = await client.call_tool(tool, arguments)
            finally:
                await box.close()
            if result.is_error:
                return True, " ".join(getattr(c, "text", "") for c in result.content)
            return False, result.structured_content
        return asyncio.run(call())


def open_side(name: str, tmp_path: Path, *, agent_writes: bool = True) -> ToolSide:
    """A driver's fake with an MR, and a config file naming it (the token from TOKEN_ENV)."""
    driver: Driver = DRIVERS[name]()
    asyncio.run(driver.host.close())  # the tools connect their own adapters
    config = tmp_path / "livereview.toml"
    write_config(config, describe(driver), tmp_path / "state" / "livereview.db",
                 agent_writes=agent_writes)
    return ToolSide(driver, config, driver.open_mr("Guard the cache with a lock"))


@contextlib.contextmanager
def sides(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *,
          agent_writes: bool = True) -> Iterator[ToolSide]:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    made = open_side(name, tmp_path, agent_writes=agent_writes)
    try:
        yield made
    finally:
        made.driver.stop()
