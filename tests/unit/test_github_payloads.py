"""GitHub JSON → review model: the mapping cases the fake does not produce on its own
(payloads written in the shapes GitHub's REST reference documents), and the fake's own."""

from __future__ import annotations

from typing import Any

from livereview.core.model import MRKey
from livereview.hosts.github.payloads import (
    actor,
    issue_message,
    merge_request,
    review_anchor,
    review_threads,
)
from livereview.hosts.payload import JsonObject, json_object, json_objects
from livereview.sandbox.github.state import FakeGitHub


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


def test_a_comment_on_a_whole_file_is_anchored_to_the_file_and_no_line() -> None:
    anchor = review_anchor(comment(1, line=None, original_line=None, subject_type="file"))
    assert anchor is not None and anchor.new_path == "app.py"
    assert anchor.new_line is None and anchor.old_line is None


def test_threads_follow_reply_chains_and_survive_a_deleted_first_comment() -> None:
    threads = review_threads([
        comment(3, in_reply_to_id=1), comment(1), comment(2, in_reply_to_id=1),
        comment(5, in_reply_to_id=4), comment(6, in_reply_to_id=5),  # 4 was deleted
    ], {})
    by_id = {t.id: [m.id for m in t.messages] for t in threads}
    assert by_id == {"discussion_r1": ["discussion_r1", "discussion_r2", "discussion_r3"],
                     "discussion_r4": ["discussion_r5", "discussion_r6"]}
    assert all(t.resolvable and not t.resolved and not t.individual for t in threads)


def user(uid: int, login: str, kind: str) -> dict[str, Any]:
    """A simple-user as GitHub's REST reference shows it (the keys `actor` could read)."""
    return {"login": login, "id": uid, "node_id": f"U_{uid}", "type": kind,
            "site_admin": False, "html_url": f"https://github.com/{login}"}


def test_apps_are_bots_by_their_type_or_their_login() -> None:
    # A pull request a GitHub App opened (https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request):
    # its account is `type: "Bot"` with a login ending in [bot].
    pull = json_object({
        "number": 3370, "state": "open", "title": "Bump httpx from 0.27 to 0.28", "body": "",
        "user": user(901, "dependabot[bot]", "Bot"), "draft": False, "merged_at": None,
        "head": {"ref": "dependabot/pip/httpx-0.28", "sha": "e" * 40},
        "base": {"ref": "main", "sha": "b" * 40},
        "html_url": "https://github.com/acme/widgets/pull/3370",
        "created_at": "2024-05-02T10:00:00Z", "updated_at": "2024-05-02T10:05:00Z"},
        "GET /pulls/3370")
    author = merge_request(MRKey("gh", "acme/widgets", 3370), pull).author
    assert (author.username, author.bot) == ("dependabot[bot]", True)
    # Issue comments (https://docs.github.com/en/rest/issues/comments#list-issue-comments):
    # a person's, and an App's that marks the PR stale.
    comments = [{"id": 11, "node_id": "IC_11", "body": "Any news?", "user": user(7, "alice",
                 "User"), "created_at": "2024-05-03T09:00:00Z",
                 "updated_at": "2024-05-03T09:00:00Z", "author_association": "CONTRIBUTOR"},
                {"id": 12, "node_id": "IC_12", "body": "This pull request has been marked "
                 "stale.", "user": user(902, "stale[bot]", "Bot"),
                 "created_at": "2024-06-03T09:00:00Z", "updated_at": "2024-06-03T09:00:00Z",
                 "author_association": "NONE", "performed_via_github_app": None}]
    authors = {(m.author.username, m.author.bot) for m in
               (issue_message(c) for c in json_objects(comments, "GET /comments"))}
    assert authors == {("alice", False), ("stale[bot]", True)}
    # An App's login ends in [bot] even where a payload leaves `type` out; the type alone
    # marks an automated account too.
    assert actor(json_object({"id": 1, "login": "renovate[bot]"}, "GET /x")).bot
    assert actor(json_object(user(3, "deploy-runner", "Bot"), "GET /x")).bot
    assert not actor(json_object({"id": 2, "login": "robot", "type": "User"}, "GET /x")).bot


def test_review_comments_as_the_fake_github_lists_them_make_anchored_threads() -> None:
    fake = FakeGitHub()
    fake.add_user("alice")
    number = fake.add_pr("acme/widgets", title="t", author="alice", files={
        "app.py": ("a = 1\nb = 2\n", "a = 1\nb = 20\nc = 3\n")})
    right = fake.add_review_comment("acme/widgets", number, author="alice", body="Why 20?",
                                    path="app.py", line=2)
    fake.reply_review_comment("acme/widgets", number, right["id"], author="livereview",
                              body="Because.")
    left = fake.add_review_comment("acme/widgets", number, author="alice", body="Was 2 wrong?",
                                   path="app.py", line=2, side="LEFT")
    with fake.lock:
        comments = [fake.review_comment_json(c) for c in
                    fake.find_issue("acme/widgets", number, pull=True).review_comments]
    threads = {t.id: t for t in review_threads(json_objects(comments, "GET /comments"), {})}
    assert sum(len(t.messages) for t in threads.values()) == len(comments) == 3
    assert all(t.anchor is not None and t.anchor.new_path == "app.py"
               for t in threads.values())
    on_right, on_left = threads[f"discussion_r{right['id']}"], threads[f"discussion_r{left['id']}"]
    assert len(on_right.messages) == 2
    assert on_right.anchor is not None and on_left.anchor is not None
    assert (on_right.anchor.new_line, on_right.anchor.old_line) == (2, None)
    assert (on_left.anchor.new_line, on_left.anchor.old_line) == (None, 2)


def test_a_reply_chain_that_loops_still_makes_threads() -> None:
    threads = review_threads([comment(1, in_reply_to_id=2), comment(2, in_reply_to_id=1),
                              comment(3, in_reply_to_id=2)], {})
    assert sorted(len(t.messages) for t in threads) == [3]
