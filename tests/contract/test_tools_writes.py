"""The MR tools' writes on every host's fake: refused unless the host allows agents to
write; a reply whose response was lost is adopted, never posted twice; verdicts are the
host's state, or a clear line where the host has none."""

from __future__ import annotations

from pathlib import Path

import pytest

from livereview.core.triggers import replied_to
from tests.contract.review_side import review_side
from tests.contract.tools_side import HOSTS, ToolSide, sides

WRITES = (("reply", "{id}", "--body", "hi"), ("comment", "--body", "hi"), ("approve",),
          ("unapprove",), ("request-changes", "--body", "hi"))


def _bot_replies(side: ToolSide, comment_id: str) -> list[dict[str, object]]:
    seen = side.cli("comments", side.mr, "--include-replied", "--json").json()
    return [c for c in seen["comments"]
            if c["author_kind"] == "self" and replied_to(str(c["body"])) == comment_id]


@pytest.mark.parametrize("host", HOSTS)
def test_writes_are_refused_unless_the_host_allows_agents(
        host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with sides(host, tmp_path, monkeypatch, agent_writes=False) as side:
        side.driver.general_comment(side.iid, "@livereview why?")
        before = side.cli("comments", side.mr, "--include-replied", "--json").json()
        (question,) = before["comments"]
        for operation, *rest in WRITES:
            args = [a.format(id=question["id"]) for a in rest]
            run = side.cli(operation, side.mr, *args)
            assert run.code == 2, (operation, run.err)
            assert "writes are off" in run.err and "agent_writes = true" in run.err
            assert len(run.err.strip().splitlines()) == 1
            tool = operation.replace("-", "_")
            arguments = {"mr": side.mr, "body": "hi"} if tool != "reply" else {
                "mr": side.mr, "comment_id": question["id"], "body": "hi"}
            if tool in ("approve", "unapprove"):
                arguments.pop("body")
            error, text = side.mcp(tool, **arguments)
            assert error and "writes are off" in text, text
        after = side.cli("comments", side.mr, "--include-replied", "--json").json()
        assert after == before  # nothing was posted
        if host in ("gitlab", "github-enterprise"):
            assert review_side(side.driver).verdict(side.iid) == "none"


@pytest.mark.parametrize("host", HOSTS)
def test_a_reply_whose_response_was_lost_is_adopted_not_posted_twice(
        host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with sides(host, tmp_path, monkeypatch) as side:
        side.driver.general_comment(side.iid, "@livereview why?")
        (question,) = side.cli("comments", side.mr, "--json").json()["comments"]
        side.driver.fail("reply", 0, after_handling=True)  # posted, then the connection drops
        lost = side.cli("reply", side.mr, question["id"], "--body", "Because.")
        assert lost.code == 1 and "reply on" in lost.err, lost.err
        assert len(_bot_replies(side, question["id"])) == 1  # it is on the host all the same
        retried = side.cli("reply", side.mr, question["id"], "--body", "Because.", "--json")
        posted = retried.json()
        assert posted["adopted"] and "adopted" in posted["note"]
        (reply,) = _bot_replies(side, question["id"])
        assert reply["id"] == posted["id"]
        listed = side.cli("comments", side.mr, "--json").json()
        assert (listed["returned"], listed["left_out_replied"]) == (0, 1)
        history = side.cli("replied", "--json").json()
        assert [(r["comment_id"], r["reply_id"], r["source"]) for r in history["replies"]] \
            == [(question["id"], posted["id"], "tool")]


@pytest.mark.parametrize("host", HOSTS)
def test_approve_unapprove_and_request_changes(host: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    with sides(host, tmp_path, monkeypatch) as side:
        state = review_side(side.driver)
        approved = side.cli("approve", side.mr, "--json").json()
        assert approved == {"mr": side.mr, "action": "approve", "message_id": "", "note": ""}
        assert state.verdict(side.iid) == "approved"
        assert side.mcp("unapprove", mr=side.mr)[0] is False
        assert state.verdict(side.iid) == "none"
        assert side.mcp("approve", mr=side.mr)[0] is False
        assert state.verdict(side.iid) == "approved"
        asked = side.cli("request-changes", side.mr, "--body", "Please add a test.", "--json")
        said = asked.json()
        assert said["action"] == "request_changes" and said["message_id"]
        assert state.verdict(side.iid) == ("changes_requested" if state.changes_state
                                           else "none")
        seen = side.cli("comments", side.mr, "--include-replied", "--json").json()
        assert any("Please add a test." in c["body"] for c in seen["comments"]
                   if c["id"] == said["message_id"])
