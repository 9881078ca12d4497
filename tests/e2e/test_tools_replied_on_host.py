"""`mr comments` agrees with the daemon about what is answered. The daemon's test is the
host's: the bot's reply ending with `<!-- livereview:reply-to=ID -->`; whichever store
recorded it — another replica's, a store restored from backup, none at all for a reply made
before tracking. A comment so answered was listed as open (the tools asked only their
store), inviting an agent to answer it a second time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client

from livereview.cli.commands import main
from livereview.core.triggers import replied_to, reply_marker
from tests.e2e.conftest import PROJECT, Sandbox
from tests.e2e.test_mcp_stdio import call, server
from tests.e2e.test_tools_daemon import enable_writes, mr_json


def answered_on_the_host(sandbox: Sandbox) -> tuple[dict[str, Any], dict[str, Any]]:
    """A mention, and the bot's marked reply to it made on the host: no store row."""
    question = sandbox.note("@livereview is this lock needed?")
    discussion = next(d.id for d in sandbox.gitlab.find_mr(PROJECT, sandbox.iid).discussions
                      if any(n.id == question["id"] for n in d.notes))
    answer = sandbox.gitlab.add_note(
        PROJECT, sandbox.iid, author="livereview", api=True, reply_to_discussion=discussion,
        body=f"Yes: two writers interleave.\n\n{reply_marker(str(question['id']))}")
    return question, answer


def test_a_comment_with_a_marked_bot_reply_on_the_host_is_replied(sandbox: Sandbox) -> None:
    question, answer = answered_on_the_host(sandbox)
    mr = f"gl:{PROJECT}!{sandbox.iid}"
    listed = mr_json(sandbox, "comments", mr)
    assert listed["comments"] == []
    assert (listed["left_out_replied"], listed["left_out_own"]) == (1, 1)
    everything = mr_json(sandbox, "comments", mr, "--include-replied")
    mark = next(c for c in everything["comments"] if c["id"] == str(question["id"]))
    assert (mark["replied"], mark["replied_by"], mark["reply_id"]) == (
        True, "host", str(answer["id"]))

    assert sandbox.once() == 0  # and the daemon, by the same test, does not answer it
    assert [replied_to(str(n["body"])) for n in sandbox.bot_notes()] == [str(question["id"])]


def test_replying_to_it_says_already_answered_and_posts_nothing(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    enable_writes(sandbox)
    question, answer = answered_on_the_host(sandbox)
    assert main(["--config", str(sandbox.config), "mr", "reply", f"gl:{PROJECT}!{sandbox.iid}",
                 str(question["id"]), "--body", "Again."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already answered" in err and str(answer["id"]) in err
    assert len(sandbox.bot_notes()) == 1


def test_the_mcp_tools_see_it_replied_too(sandbox: Sandbox) -> None:
    enable_writes(sandbox)
    question, answer = answered_on_the_host(sandbox)
    mr = f"gl:{PROJECT}!{sandbox.iid}"

    async def session() -> None:
        async with Client(server(sandbox)) as client:
            error, found = await call(client, "comments", mr=mr)
            assert not error and found["comments"] == [] and found["left_out_replied"] == 1
            error, found = await call(client, "comments", mr=mr, include_replied=True)
            mark = next(c for c in found["comments"] if c["id"] == str(question["id"]))
            assert not error and (mark["replied_by"], mark["reply_id"]) == (
                "host", str(answer["id"]))
            error, said = await call(client, "reply", mr=mr, comment_id=str(question["id"]),
                                     body="Again.")
            assert not error and said["already_answered"] and said["answered_by"] == "host"
            assert said["id"] == str(answer["id"])

    asyncio.run(asyncio.wait_for(session(), timeout=90))
    assert len(sandbox.bot_notes()) == 1
