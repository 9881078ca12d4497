"""`livereview once` against the fake GitHub (GHES form) and the fake LLM: what a user sees
on the pull request."""

from __future__ import annotations

import re
import time
from pathlib import Path

from tests.e2e.conftest import (
    GITHUB_FILES,
    GITHUB_REPO,
    GitHubSandbox,
    retries_due,
    write_github_config,
)


def test_a_mention_in_a_review_comment_gets_eyes_and_a_reply_in_its_thread(
        gh: GitHubSandbox) -> None:
    question = gh.review_comment("@livereview why hold the lock for a read?")
    assert gh.once() == 0
    assert gh.github.reactions_on(GITHUB_REPO, "review", question["id"]) == [("eyes", "livereview")]
    [reply] = gh.replies_to(f"discussion_r{question['id']}")
    assert reply["in_reply_to_id"] == question["id"]  # in the same review thread
    assert (reply["path"], reply["line"]) == ("src/cache.py", 9)
    assert "sandbox answer engine" in reply["body"]
    user = gh.llm.llm.prompts[0][-1]["content"]
    assert "Guard the cache with a lock" in user and "file: src/cache.py, line 9" in user
    assert re.search(r">>\s+9 \+\s+return cache.get\(key\)", user), user


def test_a_mention_in_the_conversation_gets_a_pr_comment_quoting_it(
        gh: GitHubSandbox) -> None:
    question = gh.comment("@livereview is this lock needed?\nReads look atomic.")
    assert gh.once() == 0
    assert gh.github.reactions_on(GITHUB_REPO, "issue", question["id"]) == [("eyes", "livereview")]
    [reply] = gh.replies_to(f"issuecomment-{question['id']}")
    assert reply["issue_url"].endswith(f"/issues/{gh.number}")  # a comment on the PR
    assert reply["body"].startswith("> @\u2060livereview is this lock needed?\n> Reads look atomic."
                                    "\n\n")


def test_exactly_once_across_a_restart(gh: GitHubSandbox) -> None:
    conversation = gh.comment("@livereview is this lock needed?")
    review = gh.review_comment("@livereview and this line?")
    assert gh.once() == 0
    assert gh.once() == 0
    assert len(gh.replies_to(f"issuecomment-{conversation['id']}")) == 1
    assert len(gh.replies_to(f"discussion_r{review['id']}")) == 1
    assert len(gh.github.comments_by("livereview")) == 2
    assert len(gh.llm.llm.prompts) == 2


def test_a_reply_to_the_bots_answer_in_a_review_thread_is_answered(gh: GitHubSandbox) -> None:
    question = gh.review_comment("@livereview why hold the lock for a read?")
    assert gh.once() == 0
    follow_up = gh.github.reply_review_comment(GITHUB_REPO, gh.number, question["id"],
                                               author="alice",
                                               body="But reads are atomic in CPython, no?")
    assert gh.once() == 0
    [answer] = gh.replies_to(f"discussion_r{follow_up['id']}")
    assert answer["in_reply_to_id"] == question["id"]  # GitHub threads hang off the first
    assert "you (livereview)" in gh.llm.llm.prompts[-1][-1]["content"]
    assert len(gh.github.comments_by("livereview")) == 2


def test_a_github_app_bot_mentioning_is_ignored(gh: GitHubSandbox) -> None:
    gh.github.add_user("dependabot[bot]")
    gh.comment("@livereview Bumps requests from 2.31 to 2.32.", author="dependabot[bot]")
    assert gh.github.users["dependabot[bot]"].type == "Bot"
    assert gh.once() == 0
    assert gh.github.comments_by("livereview") == []
    assert gh.llm.llm.prompts == []


def test_a_mention_in_a_review_body_is_acknowledged_and_answered(gh: GitHubSandbox) -> None:
    review = gh.github.add_review(GITHUB_REPO, gh.number, author="alice",
                                  body="@livereview does this need a test?",
                                  state="CHANGES_REQUESTED")
    assert gh.once() == 0
    assert gh.github.reactions_on(GITHUB_REPO, "review-body", review["id"]) == [
        ("eyes", "livereview")]  # through GraphQL: REST has no reactions on reviews
    [reply] = gh.replies_to(f"pullrequestreview-{review['id']}")
    assert reply["body"].startswith("> @\u2060livereview does this need a test?\n\n")


def test_a_reply_posted_but_lost_is_adopted_not_posted_again(
        gh: GitHubSandbox, tmp_path: Path) -> None:
    """The PR comment reached GitHub, the response did not reach us: the next run finds it
    among the later comments by its marker."""
    write_github_config(gh.config, gh.server.enterprise_url, gh.llm.url,
                        tmp_path / "state" / "lr.db", retry_base_seconds=0.05)
    question = gh.comment("@livereview is this lock needed?")
    gh.github.inject_fault("POST", rf"/issues/{gh.number}/comments$", status=0,
                           after_handling=True)
    gh.once()
    assert len(gh.replies_to(f"issuecomment-{question['id']}")) == 1  # it did reach GitHub
    retries_due(tmp_path / "state" / "lr.db")
    assert gh.once() == 0
    assert len(gh.replies_to(f"issuecomment-{question['id']}")) == 1
    assert len(gh.llm.llm.prompts) == 1


def test_a_secondary_rate_limit_is_waited_out(gh: GitHubSandbox) -> None:
    question = gh.review_comment("@livereview why hold the lock for a read?")
    gh.github.secondary_rate_limit("POST", r"/replies$", retry_after=1)
    started = time.monotonic()
    assert gh.once() == 0
    assert time.monotonic() - started >= 0.9
    assert len(gh.replies_to(f"discussion_r{question['id']}")) == 1
    posts = [r for r in gh.github.requests if r[0] == "POST" and r[1].endswith("/replies")]
    assert len(posts) == 2


def test_livereview_resolve_in_a_review_thread_answers_and_resolves_it(
        gh: GitHubSandbox) -> None:
    question = gh.review_comment("I renamed it as you said. @livereview resolve")
    conversation = gh.comment("@livereview resolve")  # no thread to resolve there
    assert gh.once() == 0
    assert len(gh.replies_to(f"discussion_r{question['id']}")) == 1
    assert gh.github.thread_of_comment(GITHUB_REPO, question["id"]).resolved  # through GraphQL
    assert len(gh.replies_to(f"issuecomment-{conversation['id']}")) == 1


def test_a_thread_from_before_a_force_push_is_answered_with_its_own_version_of_the_code(
        gh: GitHubSandbox) -> None:
    question = gh.review_comment("why hold the lock for a read?")
    old, new = GITHUB_FILES["src/cache.py"]
    gh.github.push(GITHUB_REPO, gh.number, force=True, message="rewrite",
                   files={"src/cache.py": (old, "# header\n# more\n" + new.replace(
                       "return cache.get(key)", "return cache.get(key, None)"))})
    ask = gh.github.reply_review_comment(GITHUB_REPO, gh.number, question["id"], author="alice",
                                         body="@livereview still needed after the rebase?")
    assert gh.once() == 0
    assert len(gh.replies_to(f"discussion_r{ask['id']}")) == 1
    user = gh.llm.llm.prompts[-1][-1]["content"]
    assert "file: src/cache.py, line 9, of an earlier version" in user
    assert re.search(r">>\s+9 \+\s+return cache.get\(key\)$", user, re.MULTILINE), user
