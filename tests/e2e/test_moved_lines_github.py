"""A review thread whose line moved or went away in a force-push, on the fake GitHub
(docs/DESIGN.md §4, "Moved lines"): the answer in the thread says where the line went, and
one note follows the line — a review comment at its new line on the new head, or a PR
comment quoting it when it is gone — posted once even when a post fails on the way."""

from __future__ import annotations

from typing import Any

from livereview.reply.moved import moved_for
from tests.e2e.conftest import (
    GITHUB_FILES,
    GITHUB_REPO,
    GitHubSandbox,
    retries_due,
    write_github_config,
)
from tests.e2e.test_review_gitlab import FINDINGS

OLD, NEW = GITHUB_FILES["src/cache.py"]  # line 9 of NEW: "        return cache.get(key)"
GET = "\n\ndef get(key):\n    with lock:\n        return cache.get(key)\n"
ABOVE = "import os\nimport sys\nimport time\n"  # three lines land above it


def rebase(gh: GitHubSandbox, new: str) -> str:
    """A force-push: the branch rewritten onto a new base commit holding OLD."""
    return gh.github.push(GITHUB_REPO, gh.number, message="rebase", force=True,
                          files={"src/cache.py": (OLD, new)})


def ask_after_rebase(gh: GitHubSandbox, new: str) -> tuple[dict[str, Any], str]:
    question = gh.review_comment("is the read under the lock?")
    head = rebase(gh, new)
    gh.github.reply_review_comment(GITHUB_REPO, gh.number, question["id"], author="alice",
                                   body="@livereview is this fixed now?")
    return question, head


def followers(gh: GitHubSandbox) -> list[dict[str, Any]]:
    return [c for c in gh.github.comments_by("livereview") if moved_for(c["body"])]


def thread_answers(gh: GitHubSandbox, root: int) -> list[dict[str, Any]]:
    return [c for c in gh.github.comments_by("livereview") if c.get("in_reply_to_id") == root]


def test_a_line_moved_by_a_rebase_gets_a_note_at_its_new_line_on_the_new_head(
        gh: GitHubSandbox) -> None:
    question, head = ask_after_rebase(gh, ABOVE + NEW)
    root = next(c for c in gh.github.comments_by("alice") if c["id"] == question["id"])
    assert root["line"] is None and root["original_line"] == 9  # GitHub: outdated
    assert gh.once() == 0
    [answer] = thread_answers(gh, question["id"])
    assert "now at `src/cache.py:12` on the MR's head" in answer["body"]
    [note] = followers(gh)
    # Read back as GitHub's REST API shows a review comment: on line 12 of the new head.
    assert (note["path"], note["line"], note["side"], note["commit_id"]) == \
        ("src/cache.py", 12, "RIGHT", head)
    assert "in_reply_to_id" not in note  # a thread of its own, where the line is
    assert f"#discussion_r{question['id']}" in note["body"]  # links the original thread
    assert "```\ndef get(key):\n    with lock:\n        return cache.get(key)\n```" in note["body"]


def test_a_line_removed_by_a_rebase_gets_a_pr_comment_quoting_the_old_code(
        gh: GitHubSandbox) -> None:
    question, _ = ask_after_rebase(gh, NEW.replace(GET, ""))  # the function deleted
    assert gh.once() == 0
    [answer] = thread_answers(gh, question["id"])
    assert "was removed from the MR since the thread started" in answer["body"]
    [note] = followers(gh)
    assert "path" not in note  # an issue comment: on the PR, not on a line
    assert "It read:\n\n```\n" in note["body"] and "return cache.get(key)" in note["body"]
    assert f"#discussion_r{question['id']}" in note["body"]


def test_a_line_in_place_gets_no_extra_note(gh: GitHubSandbox) -> None:
    question, _ = ask_after_rebase(gh, NEW.replace("return cache.get(key)",
                                                   "return cache.get(key, None)"))
    assert gh.once() == 0
    assert len(thread_answers(gh, question["id"])) == 1
    assert followers(gh) == []


def test_a_failed_answer_after_the_note_posts_the_answer_and_not_the_note_again(
        gh: GitHubSandbox) -> None:
    write_github_config(gh.config, gh.server.enterprise_url, gh.llm.url, gh.db,
                        retry_base_seconds=0.05)
    question, _ = ask_after_rebase(gh, ABOVE + NEW)
    gh.github.inject_fault("POST", r"/comments/\d+/replies$", status=0)  # the crash point
    gh.once()
    assert len(followers(gh)) == 1
    retries_due(gh.db)
    assert gh.once() == 0
    assert len(followers(gh)) == 1
    assert len(thread_answers(gh, question["id"])) == 1
    posts = [path for method, path, _ in gh.github.requests
             if method == "POST" and path.endswith("/replies")]
    assert len(posts) == 2  # the answer's failed POST and the one after it


def test_a_note_whose_response_was_lost_is_adopted_not_posted_again(gh: GitHubSandbox) -> None:
    write_github_config(gh.config, gh.server.enterprise_url, gh.llm.url, gh.db,
                        retry_base_seconds=0.05)
    question, _ = ask_after_rebase(gh, ABOVE + NEW)
    gh.github.inject_fault("POST", rf"/pulls/{gh.number}/comments$", status=0,
                           after_handling=True)
    gh.once()
    assert len(followers(gh)) == 1  # it reached GitHub; the daemon does not know
    retries_due(gh.db)
    assert gh.once() == 0
    assert len(followers(gh)) == 1
    assert len(thread_answers(gh, question["id"])) == 1


def test_a_file_too_big_to_read_at_the_new_head_is_not_taken_for_a_removed_line(
        gh: GitHubSandbox) -> None:
    gh.config.write_text(gh.config.read_text() + "\n[answers]\nmax_file_kb = 1\n")
    padding = "".join(f"# padding line {n} of a file grown past a kilobyte\n" for n in range(40))
    question, _ = ask_after_rebase(gh, NEW + padding)
    assert gh.once() == 0
    [answer] = thread_answers(gh, question["id"])
    assert "removed" not in answer["body"] and "moved" not in answer["body"]
    assert followers(gh) == []


def test_an_inline_note_github_refuses_becomes_a_pr_comment(gh: GitHubSandbox) -> None:
    question, _ = ask_after_rebase(gh, ABOVE + NEW)
    gh.github.inject_fault("POST", rf"/pulls/{gh.number}/comments$", status=422,
                           body='{"message": "Validation Failed"}')
    assert gh.once() == 0
    [note] = followers(gh)
    assert "path" not in note and "is now at `src/cache.py:12`" in note["body"]
    assert len(thread_answers(gh, question["id"])) == 1


def test_a_question_on_an_earlier_review_finding_whose_line_moved_follows_the_line(
        gh: GitHubSandbox) -> None:
    critical, warning, _ = FINDINGS["src/cache.py"]
    gh.llm.llm.review_findings = {"src/cache.py": [critical, warning]}
    gh.comment("@livereview review")
    assert gh.once() == 0
    pr = gh.github.find_issue(GITHUB_REPO, gh.number, pull=True)
    [finding] = [c for c in pr.review_comments if c.line == 8 and c.user.login == "livereview"]
    head = rebase(gh, ABOVE + NEW)
    gh.github.reply_review_comment(GITHUB_REPO, gh.number, finding.id, author="alice",
                                   body="@livereview is this still a problem?")
    assert gh.once() == 0
    [answer] = thread_answers(gh, finding.id)
    assert "now at `src/cache.py:11` on the MR's head" in answer["body"]
    [note] = followers(gh)
    assert (note["path"], note["line"], note["commit_id"]) == ("src/cache.py", 11, head)
    assert f"#discussion_r{finding.id}" in note["body"]
