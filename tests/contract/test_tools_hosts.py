"""Every MR tool on every host's fake, through both faces: `livereview mr … --json` and the
MCP tool of the same name agree, and what they did is what a person sees on the host."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from livereview.core.triggers import replied_to
from tests.contract.drivers import NEW, OLD, PATH
from tests.contract.tools_side import HOSTS, ToolSide, sides
from tests.local_repo import Repo

# drivers.OLD → NEW: new line 4 is added ("lock = threading.Lock()"), old line 7 removed.
ADDED, REMOVED = 4, 7


@pytest.fixture(params=HOSTS)
def side(request: pytest.FixtureRequest, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolSide]:
    with sides(request.param, tmp_path, monkeypatch) as made:
        yield made


def _ids(result: dict[str, object]) -> list[str]:
    return [str(c["id"]) for c in result["comments"]]  # type: ignore[attr-defined]


def test_comments_list_what_was_said_with_anchors(side: ToolSide) -> None:
    side.driver.general_comment(side.iid, "@livereview why a module-level lock?")
    side.driver.diff_comment(side.iid, "is this lock ever released?", line=ADDED)
    cli = side.cli("comments", side.mr, "--json").json()
    error, mcp = side.mcp("comments", mr=side.mr)
    assert not error and mcp == cli
    assert (cli["total"], cli["returned"], cli["left_out_replied"]) == (2, 2, 0)
    by_body = {c["body"]: c for c in cli["comments"]}
    inline = by_body["is this lock ever released?"]
    assert (inline["path"], inline["line"], inline["side"]) == (PATH, ADDED, "new")
    assert by_body["@livereview why a module-level lock?"]["path"] is None
    assert {c["author"] for c in cli["comments"]} == {"alice"}
    assert {c["author_kind"] for c in cli["comments"]} == {"human"}
    text = side.cli("comments", side.mr).out
    assert text.startswith(f"{side.mr}: 2 of 2 comments\n")
    assert f"#{inline['id']} @alice (human) on {PATH}:{ADDED} thread" in text
    assert "    is this lock ever released?" in text


def applied(patch: str, tmp_path: Path) -> str:
    """PATH after `git apply` of `patch` onto a repository holding its base, OLD."""
    repo = Repo(tmp_path / "applied")
    repo.commit("base", **{PATH.replace("/", "__").replace(".", "_DOT_"): OLD})
    done = subprocess.run(["git", "apply", "-"], cwd=repo.path, input=patch, text=True,  # noqa: S607
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    return (repo.path / PATH).read_text(encoding="utf-8")


def test_diffstat_diff_and_file_read_the_change(side: ToolSide, tmp_path: Path) -> None:
    stat = side.cli("diffstat", side.mr, "--json").json()
    assert side.mcp("diffstat", mr=side.mr) == (False, stat)
    assert [(f["path"], f["status"], f["additions"], f["deletions"]) for f in stat["files"]] \
        == [(PATH, "modified", 3, 1)]
    assert side.cli("diffstat", side.mr, "--path", "*.md", "--json").json()["files"] == []

    assert side.cli("diffstat", side.mr).out == (
        f"M      +3      -1  {PATH}\n1 of 1 files, +3 -1\n")
    diff = side.cli("diff", side.mr, "--json").json()
    patch = side.cli("diff", side.mr).out  # the hunks under git's headers
    assert patch == (f"diff --git a/{PATH} b/{PATH}\n--- a/{PATH}\n+++ b/{PATH}\n"
                    + diff["files"][0]["diff"])
    assert applied(patch, tmp_path) == NEW
    assert side.mcp("diff", mr=side.mr) == (False, diff)
    assert "+lock = threading.Lock()" in diff["files"][0]["diff"]
    narrow = side.cli("diff", side.mr, "--context", "0", "--json").json()
    assert side.mcp("diff", mr=side.mr, context=0) == (False, narrow)
    hunk_lines = [line for line in narrow["files"][0]["diff"].splitlines()
                  if line[:1] in " +-" and not line.startswith(("+++", "---"))]
    assert hunk_lines and all(line[0] in "+-" for line in hunk_lines)  # no context lines
    assert "\n    return cache.get(key)" not in narrow["files"][0]["diff"]

    head = side.cli("file", side.mr, PATH, "--json").json()
    assert side.mcp("file", mr=side.mr, path=PATH) == (False, head)
    assert (head["content"], head["size"], head["encoding"]) == (NEW, len(NEW), "utf-8")
    base = side.cli("file", side.mr, PATH, "--ref", "base", "--json").json()
    assert base["content"] == OLD
    by_sha = side.cli("file", side.mr, PATH, "--ref", head["sha"], "--json").json()
    assert by_sha["content"] == NEW
    text = side.cli("file", side.mr, PATH)
    assert text.out == NEW and f"{len(NEW)} bytes, utf-8" in text.err


def test_a_reply_is_posted_once_and_then_left_out(side: ToolSide) -> None:
    side.driver.general_comment(side.iid, "@livereview why a module-level lock?")
    side.driver.diff_comment(side.iid, "is this lock ever released?", line=ADDED)
    first, second = _ids(side.cli("comments", side.mr, "--json").json())
    posted = side.cli("reply", side.mr, first, "--body", "To share it.", "--json").json()
    assert not posted["adopted"]
    error, via_mcp = side.mcp("reply", mr=side.mr, comment_id=second, body="When `get` returns.")
    assert not error and not via_mcp["adopted"]

    after = side.cli("comments", side.mr, "--json").json()
    assert (after["returned"], after["left_out_replied"], after["left_out_own"]) == (0, 2, 2)
    everything = side.cli("comments", side.mr, "--include-replied", "--json").json()
    replies = [c for c in everything["comments"] if c["author_kind"] == "self"]
    assert sorted(replied_to(c["body"]) or "" for c in replies) == sorted([first, second])
    marks = {c["id"]: (c["replied_by"], c["reply_id"]) for c in everything["comments"]}
    assert marks[first] == ("tool", posted["id"]) and marks[second] == ("tool", via_mcp["id"])

    again = side.cli("reply", side.mr, first, "--body", "To share it.", "--json").json()
    assert again["adopted"] and again["id"] == posted["id"]  # a retry: nothing posted
    other = side.cli("reply", side.mr, first, "--body", "Something else.", "--json")
    assert other.code == 2 and "already answered" in other.err
    assert len(other.err.strip().splitlines()) == 1
    said = json.loads(other.out)  # scripts learn by whom, and which reply
    assert (said["already_answered"], said["answered_by"], said["id"]) == (
        True, "tool", posted["id"])
    error, via_mcp = side.mcp("reply", mr=side.mr, comment_id=second, body="Once more.")
    assert not error and via_mcp["already_answered"] and not via_mcp["in_progress"]
    assert via_mcp["id"] == marks[second][1]
    final = side.cli("comments", side.mr, "--include-replied", "--json").json()
    assert len([c for c in final["comments"] if c["author_kind"] == "self"]) == 2


def test_comments_general_and_on_an_added_and_a_removed_line(side: ToolSide) -> None:
    general = side.cli("comment", side.mr, "--body", "Looks fine overall.", "--json").json()
    added = side.cli("comment", side.mr, "--body", "A lock per module?", "--path", PATH,
                     "--line", str(ADDED), "--json").json()
    error, removed = side.mcp("comment", mr=side.mr, body="The unguarded read is gone.",
                              path=PATH, line=REMOVED, old=True)
    assert not error
    seen = side.cli("comments", side.mr, "--include-replied", "--json").json()
    by_id = {c["id"]: c for c in seen["comments"]}
    assert by_id[general["id"]]["path"] is None
    assert (by_id[added["id"]]["path"], by_id[added["id"]]["line"]) == (PATH, ADDED)
    assert (by_id[removed["id"]]["path"], by_id[removed["id"]]["line"]) == (PATH, REMOVED)
    assert {by_id[i]["author_kind"] for i in (general["id"], added["id"], removed["id"])} \
        == {"self"}


def test_bad_input_is_one_line_and_exit_2(side: ToolSide) -> None:
    for args, words in ((("comments", "gl:nowhere"), "expected the MR's web URL"),
                        (("comments", "nohost:acme/widgets!1"), "no configured host"),
                        (("reply", side.mr, "999999", "--body", "x"), "not on"),
                        (("file", side.mr, PATH, "--ref", "tip..top"), "expected head, base"),
                        (("diff", side.mr, "--context", "-1"), "--context -1"),
                        (("replied", "--since", "yesterday"), "ISO 8601")):
        run = side.cli(*args)
        assert run.code == 2, (args, run.err)
        assert words in run.err and len(run.err.strip().splitlines()) == 1, run.err
        assert "Traceback" not in run.err


def test_a_comment_off_the_diff_is_refused_before_posting_naming_the_line(
        side: ToolSide) -> None:
    """Every host refuses a line its diff does not show (GitLab: 400 "line_code can't be
    blank"; GitHub: 422 "line must be part of the diff"), in words that name no line: the
    tools check first, against the same diff, and say which line and file."""
    before = side.cli("comments", side.mr, "--include-replied", "--json").json()["total"]
    for args, words in (
            (("--path", PATH, "--line", "999"), f"line 999 is not in the diff of {PATH}"),
            (("--path", PATH, "--line", "10"), f"line 10 is not in the diff of {PATH}"),
            (("--path", PATH, "--line", "8", "--old"), "line 8 is not in the diff"),
            (("--path", "src/other.py", "--line", "1"), "src/other.py is not a file")):
        run = side.cli("comment", side.mr, "--body", "Here?", *args)
        assert run.code == 2, (args, run.err)
        assert (run.out, len(run.err.splitlines())) == ("", 1), run.err
        assert words in run.err, run.err
    error, text = side.mcp("comment", mr=side.mr, body="Here?", path=PATH, line=999)
    assert error and f"line 999 is not in the diff of {PATH}" in text
    after = side.cli("comments", side.mr, "--include-replied", "--json").json()["total"]
    assert after == before  # nothing reached the host


def test_a_comment_on_a_context_line_lands_by_either_number(side: ToolSide) -> None:
    """drivers.OLD → NEW: "import threading" is line 1 of both, a context line (GitLab
    needs both numbers for it)."""
    for args in (("--line", "1"), ("--line", "1", "--old")):
        posted = side.cli("comment", side.mr, "--body", "Context.", "--path", PATH, *args,
                          "--json")
        assert posted.code == 0, posted.err
    seen = side.cli("comments", side.mr, "--include-replied", "--json").json()
    assert [c["line"] for c in seen["comments"] if c["body"] == "Context."] == [1, 1]
