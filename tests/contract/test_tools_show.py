"""`mr show` / the MCP `show` tool on every host's fake: the MR itself as the host has it —
its text (hostile: escapes cleaned on a terminal, kept in `--json`), people, branches, state
and revisions — the same through both faces."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.contract.drivers import PATH
from tests.contract.tools_side import HOSTS, ToolSide, sides

HOSTILE = "Fix it\x1b[2J\x1b]8;;https://evil.example\x07now\u202e"


@pytest.fixture(params=HOSTS)
def side(request: pytest.FixtureRequest, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolSide]:
    with sides(request.param, tmp_path, monkeypatch) as made:
        yield made


def test_show_says_what_the_mr_is_through_both_faces(side: ToolSide) -> None:
    shown = side.cli("show", side.mr, "--json").json()
    assert side.mcp("show", mr=side.mr) == (False, shown)
    head = side.cli("file", side.mr, PATH, "--json").json()["sha"]
    assert shown["mr"] == side.mr and shown["title"] == "Guard the cache with a lock"
    assert shown["description"] == "About Guard the cache with a lock."
    assert shown["author"] == "bob" and shown["state"] == "opened" and not shown["draft"]
    assert shown["head_sha"] == head and shown["base_sha"] and shown["base_sha"] != head
    assert shown["source_branch"] and shown["target_branch"]
    assert shown["source_branch"] != shown["target_branch"]
    assert f"/{side.iid}" in shown["web_url"] and shown["approved_by"] == []
    assert shown["created_at"] <= shown["updated_at"]
    commit = shown["head_commit"]  # its message and author, as the host lists its commits
    assert commit["sha"] == head and commit["message"] and commit["author"]
    assert "@" not in commit["author"]
    text = side.cli("show", side.mr).out
    assert f"head commit: {head[:12]} by {commit['author']}: " in text


def test_show_names_the_bot_among_the_approvers_once_it_approved(side: ToolSide) -> None:
    assert side.cli("approve", side.mr).code == 0
    shown = side.cli("show", side.mr, "--json").json()
    assert shown["approved_by"] == [side.driver.bot]
    assert side.cli("unapprove", side.mr).code == 0
    assert side.cli("show", side.mr, "--json").json()["approved_by"] == []


def test_a_hostile_title_and_description_reach_the_terminal_cleaned(side: ToolSide) -> None:
    iid = side.driver.open_mr(HOSTILE)
    mr = f"{side.driver.name}:{side.driver.repo}!{iid}"
    raw = side.cli("show", mr, "--json").json()
    assert raw["title"] == HOSTILE  # scripts get the host's text as it is
    text = side.cli("show", mr)
    assert text.code == 0, text.err
    assert "\x1b" not in text.out and "\x07" not in text.out and "\u202e" not in text.out
    title_line = text.out.splitlines()[0]
    assert "Fix it" in title_line and "now" in title_line


def test_replied_answers_for_one_comment_as_comments_does(side: ToolSide) -> None:
    side.driver.general_comment(side.iid, "@livereview why a module-level lock?")
    (question,) = side.cli("comments", side.mr, "--json").json()["comments"]
    before = side.cli("replied", side.mr, "--comment", question["id"], "--json").json()
    assert side.mcp("comment_replied", mr=side.mr, comment_id=question["id"]) == (False, before)
    assert (before["replied"], before["reply_id"], before["replied_by"]) == (False, "", "")
    assert "not replied" in side.cli("replied", side.mr, "--comment", question["id"]).out

    posted = side.cli("reply", side.mr, question["id"], "--body", "To share it.", "--json")
    reply = posted.json()
    after = side.cli("replied", side.mr, "--comment", question["id"], "--json").json()
    assert (after["replied"], after["reply_id"], after["replied_by"]) == (
        True, reply["id"], "tool")
    assert after["replied_at"] and after["thread_id"] == question["thread_id"]
    if reply["thread_id"] == question["thread_id"]:  # threaded hosts: the reply is there
        assert after["answers_in_thread"] == [reply["id"]]
    listed = side.cli("comments", side.mr, "--include-replied", "--json").json()["comments"]
    mark = next(c for c in listed if c["id"] == question["id"])
    assert (mark["replied"], mark["reply_id"]) == (after["replied"], after["reply_id"])


def test_replied_for_a_comment_the_mr_does_not_have_is_one_line_exit_2(side: ToolSide
                                                                         ) -> None:
    missing = side.cli("replied", side.mr, "--comment", "987654321")
    assert missing.code == 2 and missing.out == "" and missing.err.count("\n") == 1
    assert "no such comment" in missing.err
    half = side.cli("replied", "--comment", "1")
    assert half.code == 2 and "MR and --comment" in half.err
    error, text = side.mcp("comment_replied", mr=side.mr, comment_id="987654321")
    assert error and "no such comment" in text


def test_file_reads_a_branch_by_name_and_says_its_type(side: ToolSide) -> None:
    shown = side.cli("show", side.mr, "--json").json()
    head = side.cli("file", side.mr, PATH, "--json").json()
    base = side.cli("file", side.mr, PATH, "--ref", "base", "--json").json()
    source = side.cli("file", side.mr, PATH, "--ref", shown["source_branch"], "--json").json()
    target = side.cli("file", side.mr, PATH, "--ref", shown["target_branch"], "--json").json()
    assert source["content"] == head["content"] and target["content"] == base["content"]
    assert (source["type"], source["encoding"], source["mime"]) == (
        "text", "utf-8", "text/x-python")
    error, via_mcp = side.mcp("file", mr=side.mr, path=PATH, ref=shown["source_branch"])
    assert not error and via_mcp == source
    for bad in ("-rf", "a..b", "x@{1}", "main.lock", "we ird", "a\x1bb"):
        run = side.cli("file", side.mr, PATH, f"--ref={bad}")
        assert run.code == 2 and run.err.count("\n") == 1 and "\x1b" not in run.err, run.err
    gone = side.cli("file", side.mr, PATH, "--ref", "no-such-branch")
    assert gone.code == 2 and "not found" in gone.err and gone.err.count("\n") == 1
