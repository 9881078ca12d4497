"""Comments on a range of lines and on a whole file, on every host's fake, through both
faces: what the host stores reads back through `mr comments` as the same range or file,
and what a host would refuse is refused before anything is posted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.contract.drivers import PATH
from tests.contract.tools_side import HOSTS, ToolSide, describe, sides

# drivers.OLD → NEW, one hunk: new lines 3-5 are context, added, context ("cache = {}",
# "lock = threading.Lock()", ""); old line 6 is context ("def get(key):", new 7), old 7
# removed ("    return cache.get(key)").


@pytest.fixture(params=HOSTS)
def side(request: pytest.FixtureRequest, tmp_path: Path,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolSide]:
    with sides(request.param, tmp_path, monkeypatch) as made:
        yield made


def _cloud(side: ToolSide) -> bool:
    """Bitbucket Cloud has no ranges: a range's comment is on its last line, and says so."""
    return bool(describe(side.driver)["kind"] == "bitbucket-cloud")


def _by_id(side: ToolSide) -> dict[str, dict[str, Any]]:
    seen = side.cli("comments", side.mr, "--include-replied", "--json").json()
    return {str(c["id"]): c for c in seen["comments"]}


def _where(comment: dict[str, Any]) -> tuple[Any, ...]:
    return (comment["path"], comment["start_line"], comment["line"], comment["side"],
            comment["whole_file"])


def test_a_range_of_new_lines_reads_back_as_that_range(side: ToolSide) -> None:
    posted = side.cli("comment", side.mr, "--body", "This block needs a docstring.",
                      "--path", PATH, "--line", "3-5", "--json").json()
    error, via_mcp = side.mcp("comment", mr=side.mr, body="And this one.", path=PATH,
                              line=3, end_line=5)
    assert not error, via_mcp
    seen = _by_id(side)
    for comment_id in (posted["id"], via_mcp["id"]):
        found = seen[comment_id]
        if _cloud(side):  # no ranges on Bitbucket Cloud: the last line, named
            assert _where(found) == (PATH, None, 5, "new", False)
            assert found["body"].startswith("**Lines 3–5:**")
        else:
            assert _where(found) == (PATH, 3, 5, "new", False)
    text = side.cli("comments", side.mr, "--include-replied")
    assert f"on {PATH}:" + ("5" if _cloud(side) else "3-5") in text.out


def test_a_range_of_old_lines_reads_back_on_the_old_side(side: ToolSide) -> None:
    posted = side.cli("comment", side.mr, "--body", "The unguarded read went here.",
                      "--path", PATH, "--line", "6-7", "--old", "--json").json()
    found = _by_id(side)[posted["id"]]
    expected = (PATH, None if _cloud(side) else 6, 7, "old", False)
    assert _where(found) == expected


def test_a_comment_on_a_whole_file_reads_back_as_one(side: ToolSide) -> None:
    posted = side.cli("comment", side.mr, "--body", "Split this module?", "--path", PATH,
                      "--json").json()
    error, via_mcp = side.mcp("comment", mr=side.mr, body="Agreed.", path=PATH)
    assert not error, via_mcp
    seen = _by_id(side)
    for comment_id in (posted["id"], via_mcp["id"]):
        assert _where(seen[comment_id]) == (PATH, None, None, None, True)
    text = side.cli("comments", side.mr, "--include-replied")
    assert f"on {PATH} (the whole file)" in text.out


def test_ranges_and_files_a_host_would_refuse_are_refused_before_posting(
        side: ToolSide) -> None:
    """A range past the diff, backwards, or malformed, and a file the MR does not change:
    each host refuses them in words that name no line (a range across hunks: tests/unit/
    test_comment_anchors.py, as these fakes' MR has one hunk)."""
    before = side.cli("comments", side.mr, "--include-replied", "--json").json()["total"]
    for args, words in (
            (("--path", PATH, "--line", "5-3"), "ends before it starts"),
            (("--path", PATH, "--line", "3-40"), "line 40 is not in the diff"),
            (("--path", PATH, "--line", "3-x"), "expected a line number or a range"),
            (("--path", "src/other.py"), "src/other.py is not a file"),
            (("--path", PATH, "--old"), "--old numbers a line"),
            (("--line", "3-5"), "need --path")):
        run = side.cli("comment", side.mr, "--body", "Here?", *args)
        assert run.code == 2, (args, run.err)
        assert (run.out, len(run.err.splitlines())) == ("", 1), run.err
        assert words in run.err, run.err
    error, text = side.mcp("comment", mr=side.mr, body="Here?", path=PATH, line=3,
                           end_line=40)
    assert error and "line 40 is not in the diff" in text, text
    after = side.cli("comments", side.mr, "--include-replied", "--json").json()["total"]
    assert after == before  # nothing reached the host
