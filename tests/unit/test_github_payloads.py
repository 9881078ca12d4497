"""GitHub JSON → review model: the mapping cases the fake does not produce on its own."""

from __future__ import annotations

from typing import Any

from livereview.hosts.github_payloads import review_anchor, review_threads
from livereview.hosts.payload import JsonObject, json_object


def comment(cid: int, **fields: Any) -> JsonObject:
    return json_object({"id": cid, "user": {"id": 7, "login": "alice"}, "body": f"c{cid}",
            "created_at": f"2024-05-02T10:00:{cid:02d}Z", "updated_at": "2024-05-02T10:00:00Z",
            "path": "app.py", "side": "RIGHT", "line": 3, "original_line": 2,
            "commit_id": "head", "original_commit_id": "first", **fields}, "GET /comments")


def test_a_current_comment_is_anchored_at_its_line_in_the_current_diff() -> None:
    anchor = review_anchor(comment(1))
    assert anchor is not None
    assert (anchor.new_line, anchor.old_line, anchor.head_sha) == (3, None, "head")


def test_an_outdated_comment_is_anchored_where_it_was_written() -> None:
    anchor = review_anchor(comment(1, line=None, side="LEFT"))
    assert anchor is not None
    assert (anchor.new_line, anchor.old_line, anchor.head_sha) == (None, 2, "first")


def test_a_comment_on_a_whole_file_has_no_anchor() -> None:
    assert review_anchor(comment(1, line=None, original_line=None,
                                 subject_type="file")) is None


def test_threads_follow_reply_chains_and_survive_a_deleted_first_comment() -> None:
    threads = review_threads([
        comment(3, in_reply_to_id=1), comment(1), comment(2, in_reply_to_id=1),
        comment(5, in_reply_to_id=4), comment(6, in_reply_to_id=5),  # 4 was deleted
    ], {})
    by_id = {t.id: [m.id for m in t.messages] for t in threads}
    assert by_id == {"discussion_r1": ["discussion_r1", "discussion_r2", "discussion_r3"],
                     "discussion_r4": ["discussion_r5", "discussion_r6"]}
    assert all(t.resolvable and not t.resolved and not t.individual for t in threads)
