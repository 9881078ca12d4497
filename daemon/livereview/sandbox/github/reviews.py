"""The fake GitHub's reviews as a reviewer makes them: one POST with its event, body and
comments, each comment a new review thread of that review; dismissals; a review's comments.

Shapes and refusals: https://docs.github.com/en/rest/pulls/reviews (create: `event`
APPROVE | REQUEST_CHANGES | COMMENT, `comments` an array of {path, line, side, body};
422 "Can not approve your own pull request" / "Can not request changes on your own pull
request"; REQUEST_CHANGES and COMMENT need a body or comments; a line outside the diff:
422 "Line could not be resolved"; dismiss: only an APPROVED or CHANGES_REQUESTED review).
"""

from __future__ import annotations

from typing import Any

from livereview.sandbox.github.model import (
    JSON,
    GitHubError,
    PullRequest,
    Review,
    ReviewComment,
    locate,
)
from livereview.sandbox.github.state import FakeGitHub

DOCS = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
_STATE = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}


def _unprocessable(error: str, docs: str = DOCS) -> GitHubError:
    return GitHubError(422, "Unprocessable Entity", docs, errors=[error])  # type: ignore[list-item]


def create_review(fake: FakeGitHub, repo: str, number: int, *, user: str,
                  payload: dict[str, Any]) -> JSON:
    comments = payload.get("comments", [])
    if not isinstance(comments, list):
        raise GitHubError(422, "Invalid request.\n\nFor 'properties/comments', "
                          f"{comments!r} is not an array.", DOCS)
    event, body = payload.get("event"), str(payload.get("body") or "")
    with fake.lock:
        pr = fake.find_issue(repo, number, pull=True)
        who = fake.users.get(user) or fake.users[fake.bot_login]
        if event not in _STATE:  # no event: a PENDING review (the fake has no use for it)
            raise GitHubError(422, f"Invalid request.\n\n{event!r} is not a valid event.", DOCS)
        if pr.user is who and event == "APPROVE":
            raise _unprocessable("Can not approve your own pull request")
        if pr.user is who and event == "REQUEST_CHANGES":
            raise _unprocessable("Can not request changes on your own pull request")
        if event != "APPROVE" and not body and not comments:
            raise _unprocessable("Review body is required")
        commit = str(payload.get("commit_id") or pr.head_sha)
        patches = {f.filename: f.patch for f in fake.compare(pr.repo, pr.base_sha, commit)[1]}
        placed = []
        for c in comments:
            side = str(c.get("side") or "RIGHT")
            found = locate(patches.get(str(c.get("path")), ""), int(c.get("line") or 0), side)
            if found is None or not c.get("body"):
                raise _unprocessable("Line could not be resolved")
            placed.append((c, side, found))
        review = Review(fake._next("review", 70_000), pr, who, body, _STATE[event], fake.now(),
                        commit)
        pr.reviews.append(review)
        fake._node("PRR", review, review.id)
        if who in pr.requested_reviewers:  # reviewed: no longer requested (state._review)
            pr.requested_reviewers.remove(who)
        for c, side, (position, hunk) in placed:
            line = int(c["line"])
            comment = ReviewComment(
                fake._next("comment", 1_000_000), pr, review, who, str(c["body"]),
                str(c["path"]), side, line, line, commit, commit, hunk, position, position,
                None, review.submitted_at, review.submitted_at)
            fake._file_comment(pr, comment)
        pr.updated_at = max(pr.updated_at, review.submitted_at)
        return fake.review_json(review)


def review_comments(fake: FakeGitHub, pr: PullRequest, review_id: int) -> list[JSON]:
    review = fake.find_review(pr, review_id)
    return [fake.review_comment_json(c) for c in pr.review_comments if c.review is review]


def dismiss(fake: FakeGitHub, pr: PullRequest, review_id: int, message: str) -> JSON:
    review = fake.find_review(pr, review_id)
    if not message:
        raise GitHubError(422, "Invalid request.\n\n\"message\" wasn't supplied.", DOCS)
    if review.state not in ("APPROVED", "CHANGES_REQUESTED"):
        raise _unprocessable("Can not dismiss a commented pull request review")
    review.state = "DISMISSED"
    return fake.review_json(review)


def standing(fake: FakeGitHub, repo: str, number: int, login: str) -> str:
    """What GitHub shows of a reviewer: their latest approving or blocking review's state."""
    with fake.lock:
        pr = fake.find_issue(repo, number, pull=True)
        states = [r.state for r in pr.reviews if r.user.login == login
                  and r.state in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")]
        return states[-1] if states else ""
