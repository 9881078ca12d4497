"""The fakes answer with the keys the real hosts send: GitLab's as recorded from gitlab.com
(tests/fixtures/gitlab), GitHub's as its REST reference documents them. A daemon that passes
against the fakes reads real payloads too."""

from __future__ import annotations

import re
from typing import Any

import pytest

from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.gitlab.state import FakeGitLab
from tests.fixtures import recorded as fixtures

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$")
GITHUB_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")  # whole seconds, UTC
# Keys the fake leaves out on purpose: EE-only, or profile fields only admins see.
OMITTED = {
    "user": {"color_scheme_id", "confirmed_at", "current_sign_in_at", "identities",
             "extra_shared_runners_minutes_limit", "shared_runners_minutes_limit",
             "last_activity_on", "last_sign_in_at", "linkedin", "organization",
             "projects_limit", "skype", "theme_id", "twitter", "website_url"},
    "mr": {"approvals_before_merge"},
}


def recorded(name: str) -> Any:
    """The recorded payload, or the first item of a recorded list."""
    data = fixtures.gitlab(name)
    return data[0] if isinstance(data, list) else data


@pytest.fixture(scope="module")
def fake() -> dict[str, Any]:
    gitlab = FakeGitLab()
    gitlab.add_user("alice")
    gitlab.add_project("a/b")
    iid = gitlab.add_mr("a/b", title="t", author="alice", files={"x.py": ("a\n", "b\n")})
    note = gitlab.add_note("a/b", iid, author="alice", body="hi")
    diff_note = gitlab.add_note("a/b", iid, author="alice", body="hi",
                                position={"new_path": "x.py", "new_line": 1})
    mr = gitlab.find_mr("a/b", iid)
    return {"user": gitlab.bot, "mr": gitlab.mr_json(mr, full=True),
            "mr_list_item": gitlab.mr_json(mr), "note": note, "diff_note": diff_note,
            "discussion": gitlab.discussions("a/b", iid)[-1]}


@pytest.mark.parametrize(("fixture", "kind", "omitted"), [
    ("danger-js_getUser.json", "user", OMITTED["user"]),
    ("danger-js_getMergeRequestInfo.json", "mr", OMITTED["mr"]),
    ("go-gitlab_get_merge_request.json", "mr", OMITTED["mr"]),
    ("vscode_open_mr.json", "mr_list_item", OMITTED["mr"]),
    ("vscode_diff_note.json", "diff_note", set()),
])
def test_fake_sends_every_recorded_key(fake: dict[str, Any], fixture: str, kind: str,
                                       omitted: set[str]) -> None:
    assert set(recorded(fixture)) - set(fake[kind]) - omitted == set()


def test_discussions_and_notes_have_the_recorded_keys(fake: dict[str, Any]) -> None:
    discussion = recorded("danger-js_getMergeRequestDiscussions.json")
    assert set(discussion) <= set(fake["discussion"])
    assert set(discussion["notes"][0]) <= set(fake["note"])
    assert set(fake["diff_note"]["position"]) >= set(recorded("vscode_diff_note.json")["position"])


def test_timestamps_have_milliseconds_and_a_zone(fake: dict[str, Any]) -> None:
    for kind in ("mr", "note", "diff_note"):
        for key in ("created_at", "updated_at"):
            assert TIMESTAMP.match(fake[kind][key]), (kind, key, fake[kind][key])
    assert TIMESTAMP.match(recorded("vscode_diff_note.json")["created_at"])


@pytest.fixture(scope="module")
def fake_github() -> dict[str, Any]:
    github = FakeGitHub()
    github.add_user("alice")
    github.add_repo("a/b")
    number = github.add_pr("a/b", title="t", author="alice", files={"x.py": ("a\n", "b\n")})
    issue = github.add_issue_comment("a/b", number, author="alice", body="hi")
    review = github.add_review_comment("a/b", number, author="alice", body="hi", path="x.py",
                                       line=1)
    with github.lock:
        pull = github.pull_json(github.find_issue("a/b", number, pull=True), full=True)
        return {"pull": pull, "user": pull["user"],
                "issue_comment": github.issue_comment_json(
                    github.find_issue_comment("a/b", issue["id"])),
                "review_comment": github.review_comment_json(
                    github.find_review_comment("a/b", review["id"]))}


# The keys of GitHub's REST reference for each payload (https://docs.github.com/en/rest:
# "Get a pull request", "Get an issue comment", "Get a review comment for a pull request"
# and the simple-user they embed), written out here: the documented example responses
# and schema properties, less the media-type-only `body_text` / `body_html`, the
# reply-only `in_reply_to_id` and the optional `name` / `email` / `starred_at` of a user.
DOCUMENTED = {
    "pull": {
        "url", "id", "node_id", "html_url", "diff_url", "patch_url", "issue_url",
        "commits_url", "review_comments_url", "review_comment_url", "comments_url",
        "statuses_url", "number", "state", "locked", "title", "user", "body", "labels",
        "milestone", "active_lock_reason", "created_at", "updated_at", "closed_at",
        "merged_at", "merge_commit_sha", "assignee", "assignees", "requested_reviewers",
        "requested_teams", "head", "base", "_links", "author_association", "auto_merge",
        "draft", "merged", "mergeable", "rebaseable", "mergeable_state", "merged_by",
        "comments", "review_comments", "maintainer_can_modify", "commits", "additions",
        "deletions", "changed_files"},
    "issue_comment": {
        "id", "node_id", "url", "html_url", "body", "user", "created_at", "updated_at",
        "issue_url", "author_association", "performed_via_github_app", "reactions"},
    "review_comment": {
        "url", "pull_request_review_id", "id", "node_id", "diff_hunk", "path", "position",
        "original_position", "commit_id", "original_commit_id", "user", "body", "created_at",
        "updated_at", "html_url", "pull_request_url", "author_association", "_links",
        "reactions", "start_line", "original_start_line", "start_side", "line",
        "original_line", "side", "subject_type"},
    "user": {
        "login", "id", "node_id", "avatar_url", "gravatar_id", "url", "html_url",
        "followers_url", "following_url", "gists_url", "starred_url", "subscriptions_url",
        "organizations_url", "repos_url", "events_url", "received_events_url", "type",
        "user_view_type", "site_admin"},
}
DOCUMENTED_STAMP = "2011-04-14T16:00:49Z"  # the form of every date in the reference


@pytest.mark.parametrize("kind", ["pull", "issue_comment", "review_comment"])
def test_fake_github_sends_every_documented_key(fake_github: dict[str, Any], kind: str
                                                ) -> None:
    assert DOCUMENTED[kind] - set(fake_github[kind]) == set()
    assert DOCUMENTED["user"] - set(fake_github[kind]["user"]) == set()
    assert GITHUB_TIMESTAMP.match(DOCUMENTED_STAMP)
    assert GITHUB_TIMESTAMP.match(fake_github[kind]["created_at"])
