"""The fake GitHub's comments on a whole file: a review comment with `subject_type: file`,
no line and no position (https://docs.github.com/rest/pulls/comments#create-a-review-
comment-for-a-pull-request: "subject_type … The level at which the comment is targeted",
`line` or `file`; a path that is not part of the diff is a 422)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from livereview.sandbox.github.model import JSON, PullRequest, ReviewComment, invalid

if TYPE_CHECKING:
    from livereview.sandbox.github.state import FakeGitHub

DOCS = "https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request"


def file_comment(fake: FakeGitHub, pr: PullRequest, author: str, body: str, path: str,
                 commit_id: str | None) -> JSON:
    commit = commit_id or pr.head_sha
    if commit not in pr.commits:
        raise invalid("PullRequestReviewComment", "commit_id",
                      "commit_id is not part of the pull request", DOCS)
    files = {f.filename for f in fake.compare(pr.repo, pr.base_sha, commit)[1]}
    if path not in files:
        raise invalid("PullRequestReviewComment", "pull_request_review_thread.path",
                      "pull_request_review_thread.path is invalid", DOCS)
    user, when = fake._user(author), fake.now()
    review = fake._review(pr, user, "", "COMMENTED")
    c = ReviewComment(fake._next("comment", 1_000_000), pr, review, user, body, path,
                      "RIGHT", None, 0, commit, commit, "", None, 0, None, when, when,
                      subject_type="file")
    return fake._file_comment(pr, c)
