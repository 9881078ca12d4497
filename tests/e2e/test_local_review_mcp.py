"""The local-review MCP tools, through the SDK's client: an agent requests a review,
comments, waits for the person's feedback and reads the review with its code."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from livereview.app.wiring import open_toolbox
from livereview.cli.commands import main
from livereview.mcp.server import build
from livereview.settings import load
from tests.databases import url_for
from tests.local_repo import review_repo


def _config(tmp_path: Path, repo: Path) -> Path:
    config = tmp_path / "livereview.toml"
    config.write_text(
        f'[daemon]\ndatabase_url = "{url_for(tmp_path / "state.db")}"\nmetrics_listen = ""\n'
        '\n[ai]\napi_key_env = ""\n\n[[hosts]]\nname = "laptop"\ntype = "local"\n\n'
        f'[[repos]]\nhost = "laptop"\npath = "{repo}"\n', encoding="utf-8")
    return config


def call(config: Path, tool: str, **arguments: Any) -> tuple[bool, Any]:
    async def run() -> tuple[bool, Any]:
        settings = load(config)
        box = open_toolbox(settings)
        try:
            async with Client(build(box, settings)) as client:
                result = await client.call_tool(tool, arguments)
        finally:
            await box.close()
        if result.is_error:
            return True, " ".join(getattr(c, "text", "") for c in result.content)
        return False, result.structured_content
    return asyncio.run(run())


def test_an_agent_s_review_loop(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LIVEREVIEW_CONFIG", raising=False)
    repo = review_repo(tmp_path / "r")
    config = _config(tmp_path, repo.path)
    failed, review = call(config, "request_review", title="Area", range="HEAD~1",
                          description={"task": "geo"}, repo=str(repo.path))
    assert not failed, review
    assert review["id"] == 1 and review["description"] == {"task": "geo"}
    assert len(review["threads"]) == 6 and len(review["files"]) == 8
    failed, updated = call(config, "update_review", review_id=1, add_comment="done: math.pi",
                           path="geo.py", line=3, repo=str(repo.path))
    assert not failed, updated
    mine = updated["review"]["threads"][-1]
    assert (mine["path"], mine["line"], mine["messages"][0]["author_kind"]) == (
        "geo.py", 3, "agent")
    # The person answers at the terminal, without the config: the same store all the same.
    assert main(["review", "reply", "1", str(mine["id"]), "thanks, but keep 3.14",
                 "--repo", str(repo.path)]) == 0
    capsys.readouterr()
    failed, waited = call(config, "update_review", review_id=1, wait_for_feedback=10,
                          repo=str(repo.path))
    assert not failed, waited
    assert [m["body"] for m in waited["feedback"]] == ["thanks, but keep 3.14"]
    assert waited["timed_out"] is False
    failed, shown = call(config, "show_review", review_id=1, repo=str(repo.path))
    assert not failed
    thread = next(t for t in shown["threads"] if t["id"] == mine["id"])
    assert [3, "    return 3.14 * r * r  # TODO: math.pi"] in thread["context"]
    state = json.loads((repo.path / ".livereview" / "review.json").read_text())
    assert state["reviews"][0]["threads"] == [
        {k: v for k, v in t.items() if k != "context"} for t in shown["threads"]]


def test_bad_input_is_a_tool_error(tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    config = _config(tmp_path, repo.path)
    failed, said = call(config, "request_review", title="T", range="nope",
                        repo=str(repo.path))
    assert failed and "range 'nope'" in said
    failed, said = call(config, "show_review", review_id=3, repo=str(repo.path))
    assert failed and "no local review 3" in said
    failed, said = call(config, "request_review", title="T", repo=str(tmp_path))
    assert failed and "not a git repository" in said
    # Out of the database's range, blank: one line, not the SDK's bare "Error executing
    # tool" with a traceback on stderr (found by an attack session).
    failed, said = call(config, "show_review", review_id=10**23, repo=str(repo.path))
    assert failed and said.endswith(f": no local review {10**23}"), said
    failed, said = call(config, "request_review", title=" ", range="HEAD~1",
                        repo=str(repo.path))
    assert failed and said.endswith(": the review needs a title"), said
    failed, said = call(config, "replied", since="0001-01-01")
    assert failed and "expected an ISO 8601 date or time from 1970 on" in said
