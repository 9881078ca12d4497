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
