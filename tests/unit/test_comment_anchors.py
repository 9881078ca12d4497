"""Range and whole-file anchors: the hunk rule, and each host's payload for them against
the host's own rules (GitLab's line codes as its fake derives them from the diff, GitHub's
same-hunk 422, Bitbucket Cloud's one-line comments)."""

from __future__ import annotations

import pytest

from livereview.core.model import Anchor
from livereview.core.placement import LineMap
from livereview.hosts.bitbucket_cloud.writing import inline, ranged
from livereview.hosts.bitbucket_server.payloads import anchor as dc_anchor
from livereview.hosts.bitbucket_server.payloads import comment_anchor
from livereview.hosts.github.payloads import review_anchor, review_comment_place
from livereview.hosts.gitlab import positions
from livereview.hosts.gitlab.payloads import anchor as gitlab_anchor
from livereview.hosts.payload import JsonObject
from livereview.sandbox.github.model import GitHubError, check_start, locate
from livereview.sandbox.gitlab.model import diff_lines
from livereview.tools.anchors import check_lines, parse_lines
from livereview.tools.errors import BadInput

# Two hunks: line 2 changed, line 28 changed; 25 untouched lines between them.
TWO_HUNKS = ("@@ -1,5 +1,5 @@\n line 1\n-line 2\n+line two\n line 3\n line 4\n line 5\n"
             "@@ -25,6 +25,6 @@\n line 25\n line 26\n line 27\n-line 28\n+line twenty-8\n"
             " line 29\n line 30\n")


def _anchor(new: int | None, old: int | None, start_new: int | None = None,
            start_old: int | None = None) -> Anchor:
    return Anchor(new_path="a.py", old_path="a.py", new_line=new, old_line=old,
                  base_sha="b" * 40, start_sha="b" * 40, head_sha="h" * 40,
                  start_new_line=start_new, start_old_line=start_old)


def test_each_line_knows_its_hunk_on_either_side() -> None:
    lines = LineMap.of(TWO_HUNKS)
    assert [lines.hunk(n, old=False) for n in (1, 2, 5, 25, 28, 30)] == [0, 0, 0, 1, 1, 1]
    assert lines.hunk(2, old=True) == 0 and lines.hunk(28, old=True) == 1
    assert lines.hunk(12, old=False) is None


def test_line_ranges_parse_and_bad_ones_are_bad_input() -> None:
    assert parse_lines("14") == (14, None) and parse_lines(" 10 - 14 ") == (10, 14)
    assert check_lines(10, 14) == 14 and check_lines(14, 14) is None
    for value in ("", "x", "10-", "-3", "1-2-3", "1.5"):
        with pytest.raises(BadInput, match="expected a line number or a range"):
            parse_lines(value)
    with pytest.raises(BadInput, match="ends before it starts"):
        check_lines(14, 10)
    with pytest.raises(BadInput, match="from 1 to"):
        check_lines(1, 99_999_999_999)


def test_a_range_and_its_start_compare_as_the_thread_they_are() -> None:
    """The store keeps a thread's last line, not a range's first: a fresh read and a
    stored one are the same thread (no rewrite every cycle)."""
    assert _anchor(5, None, 3) == _anchor(5, None)
    assert _anchor(5, None, 3).start_line == 3 and _anchor(5, None, 5).start_line is None
    assert _anchor(None, None).whole_file and not _anchor(5, None).whole_file


def test_gitlab_line_range_codes_are_the_ones_gitlab_derives_from_the_diff() -> None:
    """`Gitlab::Git.diff_line_code` as the fake ports it (sandbox/gitlab/model.py)."""
    at = positions.position(_anchor(28, None, 25, 25), TWO_HUNKS)
    codes = diff_lines("a.py", TWO_HUNKS)
    assert at["line_range"] == {
        "start": {"line_code": codes[(25, 25)], "type": None, "old_line": 25, "new_line": 25},
        "end": {"line_code": codes[(None, 28)], "type": "new", "old_line": None,
                "new_line": 28}}
    assert (at["new_line"], at["old_line"], at["position_type"]) == (28, None, "text")
    assert positions.line_codes("a.py", TWO_HUNKS) == codes
    read = gitlab_anchor(JsonObject(at, None, "position"))
    assert read is not None and (read.start_line, read.line) == (25, 28)
    whole = positions.position(_anchor(None, None))
    assert whole["position_type"] == "file" and "new_line" not in whole
    read = gitlab_anchor(JsonObject(whole, None, "position"))
    assert read is not None and read.whole_file


def test_github_refuses_a_range_across_hunks_or_backwards() -> None:
    """REST "Create a review comment": start_line must precede line, in the same hunk."""
    patch = TWO_HUNKS
    end = locate(patch, 28, "RIGHT")
    assert end is not None
    check_start(patch, 25, "RIGHT", 28, "RIGHT", end[1])  # one hunk: fine
    for start, words in ((2, "same hunk"), (29, "precede"), (12, "part of the diff")):
        with pytest.raises(GitHubError) as refused:
            check_start(patch, start, "RIGHT", 28, "RIGHT", end[1])
        assert refused.value.status == 422 and words in str(refused.value.body["errors"])
    place = review_comment_place(_anchor(28, None, 25, 25))
    assert (place["start_line"], place["start_side"], place["line"], place["side"]) == (
        25, "RIGHT", 28, "RIGHT")
    assert review_comment_place(_anchor(None, None))["subject_type"] == "file"
    read = review_anchor(JsonObject({"path": "a.py", "line": 28, "side": "RIGHT",
                                     "start_line": 25, "start_side": "RIGHT",
                                     "commit_id": "h", "subject_type": "line"}, None, "c"))
    assert read is not None and (read.start_line, read.line) == (25, 28)
    read = review_anchor(JsonObject({"path": "a.py", "line": None, "original_line": None,
                                     "commit_id": "h", "subject_type": "file"}, None, "c"))
    assert read is not None and read.whole_file


def test_bitbucket_cloud_puts_a_range_on_its_last_line_and_names_the_lines() -> None:
    assert inline(_anchor(28, None, 25)) == {"path": "a.py", "to": 28}
    assert inline(_anchor(None, 7, None, 6)) == {"path": "a.py", "from": 7}
    assert inline(_anchor(None, None)) == {"path": "a.py"}
    assert ranged("Why?", _anchor(28, None, 25)).startswith("**Lines 25–28:**\n\nWhy?")
    assert ranged("Why?", _anchor(None, 7, 6, 6)) == "**Lines 6–7 (old file):**\n\nWhy?"
    assert ranged("Why?", _anchor(28, None)) == "Why?"


def test_bitbucket_data_center_anchors_a_range_with_its_multiline_marker() -> None:
    sent = comment_anchor(_anchor(None, 7, 6, 6))
    assert (sent["line"], sent["fileType"], sent["lineType"]) == (7, "FROM", "REMOVED")
    assert sent["multilineMarker"] == {"startLine": 6, "startLineType": "CONTEXT"}
    read = dc_anchor(JsonObject(sent, None, "anchor"))
    assert read is not None and (read.start_line, read.line, read.new_line) == (6, 7, None)
    whole = comment_anchor(_anchor(None, None))
    assert "line" not in whole and "multilineMarker" not in whole
    read = dc_anchor(JsonObject(whole, None, "anchor"))
    assert read is not None and read.whole_file
