"""`livereview mcp` as an agent runs it: spawned over stdio and driven by the MCP SDK's own
client — the tools listed with schemas and descriptions, each one called, errors as tool
errors of one line; and the same server beside `livereview run` on one SQLite database."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from livereview.core.triggers import replied_to
from tests.e2e.conftest import PROJECT, TOKEN, Daemon, Sandbox, wait_for
from tests.e2e.test_tools_daemon import enable_writes

TOOLS = {"show", "comments", "reply", "diffstat", "diff", "file", "comment", "approve",
         "unapprove", "request_changes", "replied", "comment_replied",
         "request_review", "update_review", "show_review"}  # local reviews (docs/DESIGN.md §14)
PATH = "src/cache.py"


def server(sandbox: Sandbox) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "livereview", "--config", str(sandbox.config), "--log-level", "DEBUG",
              "mcp"],
        env={"LIVEREVIEW_E2E_TOKEN": TOKEN})


async def call(client: Client, tool: str, **arguments: Any) -> tuple[bool, Any]:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        return True, " ".join(getattr(c, "text", "") for c in result.content)
    text = " ".join(getattr(c, "text", "") for c in result.content)
    assert json.loads(text) == result.structured_content  # the text block is the same JSON
    return False, result.structured_content


def test_an_agent_lists_the_tools_and_calls_each(sandbox: Sandbox, tmp_path: Path) -> None:
    enable_writes(sandbox)
    mr = f"gl:{PROJECT}!{sandbox.iid}"
    question = sandbox.note("@livereview is this lock needed?")
    stderr = tmp_path / "mcp.stderr"

    async def session() -> None:
        # The server logs every write: on stderr, or the protocol on stdout would break.
        with stderr.open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(server(sandbox), errlog=errlog)) as client:
                await calls(client)

    async def calls(client: Client) -> None:
        listed = (await client.list_tools()).tools
        assert {t.name for t in listed} == TOOLS
        for tool in listed:
            assert tool.description and len(tool.description) > 40, tool.name
            assert tool.input_schema["type"] == "object"
            assert tool.output_schema is not None, tool.name
            if "mr" in tool.input_schema["properties"]:
                assert "HOST:REPO!IID" in tool.input_schema["properties"]["mr"]["description"]
        read_only = {t.name for t in listed if t.annotations and t.annotations.read_only_hint}
        assert read_only == {"show", "comments", "diffstat", "diff", "file", "replied",
                             "comment_replied", "show_review"}

        error, shown = await call(client, "show", mr=mr)
        assert not error and shown["mr"] == mr and shown["state"] == "opened"

        error, found = await call(client, "comments", mr=mr)
        assert not error and [c["id"] for c in found["comments"]] == [str(question["id"])]
        error, stat = await call(client, "diffstat", mr=mr)
        assert not error and stat["files"][0]["path"] == PATH
        error, diff = await call(client, "diff", mr=mr, paths=["src/*"], context=1)
        assert not error and "+lock = threading.Lock()" in diff["files"][0]["diff"]
        error, file = await call(client, "file", mr=mr, path=PATH, ref="base")
        assert not error and "lock" not in file["content"].replace("threading", "")
        error, posted = await call(client, "reply", mr=mr, comment_id=str(question["id"]),
                                   body="Yes: two writers can interleave.")
        assert not error and not posted["adopted"]
        error, note = await call(client, "comment", mr=mr, body="On this line.", path=PATH,
                                 line=4)
        assert not error and note["id"]
        for verdict in ("approve", "unapprove"):
            error, done = await call(client, verdict, mr=mr)
            assert not error and done["action"] == verdict
        error, done = await call(client, "request_changes", mr=mr, body="Add a test.")
        assert not error and done["action"] == "request_changes"
        error, one = await call(client, "comment_replied", mr=mr,
                                comment_id=str(question["id"]))
        assert not error and one["replied"]
        error, history = await call(client, "replied")
        assert not error and [r["comment_id"] for r in history["replies"]] == [
            str(question["id"])]
        error, found = await call(client, "comments", mr=mr)
        assert not error and (found["returned"], found["left_out_replied"]) == (0, 1)

        error, text = await call(client, "comments", mr="https://nowhere.example/x/pull/1")
        assert error and "not a merge request of a configured host" in text
        assert "\n" not in text and "Traceback" not in text
        error, text = await call(client, "file", mr=mr, path="no/such/file.py")
        assert error and "not found" in text

    asyncio.run(asyncio.wait_for(session(), timeout=90))
    logged = stderr.read_text(encoding="utf-8")
    assert logged.count("tool_wrote") == 5 and "tool_host_failed" in logged
    assert TOKEN not in logged
    replies = [n for n in sandbox.bot_notes() if replied_to(str(n["body"])) == str(question["id"])]
    assert len(replies) == 1
    assert sandbox.gitlab.approvers(PROJECT, sandbox.iid) == []  # approved, then withdrawn


def test_mcp_beside_the_daemon_on_one_sqlite_database(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> None:
    enable_writes(sandbox)
    mr = f"gl:{PROJECT}!{sandbox.iid}"
    daemon = start_daemon()
    wait_for(lambda: any(r[1].endswith("/merge_requests") for r in sandbox.gitlab.requests))
    questions = [sandbox.note(f"Question {n} for the agent.") for n in range(8)]
    mention = sandbox.note("@livereview and for you?")

    async def session() -> None:
        async with Client(server(sandbox)) as client:
            for question in questions:  # each reply writes to the database the daemon uses
                error, posted = await call(client, "reply", mr=mr,
                                           comment_id=str(question["id"]), body="Answered.")
                assert not error, posted
                error, found = await call(client, "comments", mr=mr)
                assert not error, found

    asyncio.run(asyncio.wait_for(session(), timeout=120))
    wait_for(lambda: any(replied_to(str(n["body"])) == str(mention["id"])
                         for n in sandbox.bot_notes()), timeout=60)
    assert daemon.stop() == 0
    assert "locked" not in daemon.output()
    answered = [replied_to(str(n["body"])) for n in sandbox.bot_notes()]
    assert sorted(a or "" for a in answered) == sorted(
        str(q["id"]) for q in [*questions, mention])
