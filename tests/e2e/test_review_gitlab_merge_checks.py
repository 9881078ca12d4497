"""A review must not hold up a GitLab merge by itself: in a project where "All threads must
be resolved", the bot's summary and notice are notes nobody has to resolve, while its inline
findings stay threads the author resolves. A reply to the summary still reaches the bot."""

from __future__ import annotations

from typing import Any

from livereview.core.triggers import replied_to
from livereview.review.render import marked
from tests.e2e.conftest import PROJECT, Sandbox
from tests.e2e.test_review_gitlab import FINDINGS


def strict(sandbox: Sandbox) -> None:
    sandbox.gitlab.edit_project(PROJECT, {
        "only_allow_merge_if_all_discussions_are_resolved": True})


def unblocked(sandbox: Sandbox) -> bool:
    fake = sandbox.gitlab
    with fake.lock:
        return bool(fake.mr_json(fake.find_mr(PROJECT, sandbox.iid))[
            "blocking_discussions_resolved"])


def review_discussions(sandbox: Sandbox) -> dict[str, dict[str, Any]]:
    """The review's discussions by part (finding=N, summary, notify)."""
    return {m[1]: d for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid)
            if (m := marked(str(d["notes"][0]["body"])))}


def test_a_review_with_only_a_summary_leaves_the_mr_mergeable(sandbox: Sandbox) -> None:
    strict(sandbox)
    sandbox.note("@livereview review")
    assert unblocked(sandbox)
    assert sandbox.once() == 0
    posted = review_discussions(sandbox)
    assert list(posted) == ["summary"]
    summary = posted["summary"]
    assert summary["individual_note"] is True
    assert summary["notes"][0]["resolvable"] is False
    assert unblocked(sandbox)  # nobody has to resolve the bot's summary to merge


def test_inline_findings_block_until_resolved_and_the_summary_and_notice_never_do(
        sandbox: Sandbox) -> None:
    strict(sandbox)
    sandbox.llm.llm.review_findings = FINDINGS
    sandbox.note("@livereview review")
    assert sandbox.once() == 0
    posted = review_discussions(sandbox)
    assert sorted(posted) == ["finding=1", "finding=2", "notify", "summary"]
    for part in ("summary", "notify"):
        assert posted[part]["notes"][0]["resolvable"] is False, part
    for part in ("finding=1", "finding=2"):
        assert posted[part]["notes"][0]["type"] == "DiffNote", part
        assert posted[part]["notes"][0]["resolvable"] is True, part
    assert not unblocked(sandbox)  # the findings are questions for the author
    for part in ("finding=1", "finding=2"):
        sandbox.gitlab.resolve(PROJECT, sandbox.iid, str(posted[part]["id"]), True, user="bob")
    assert unblocked(sandbox)


def test_a_reply_to_the_summary_is_answered_in_its_thread_once(sandbox: Sandbox) -> None:
    sandbox.note("@livereview review")
    assert sandbox.once() == 0
    summary = review_discussions(sandbox)["summary"]
    reply = sandbox.note("Why approve without a test for the lock?",
                         reply_to_discussion=str(summary["id"]))
    assert sandbox.once() == 0
    assert sandbox.once() == 0  # and not again
    thread = review_discussions(sandbox)["summary"]
    assert thread["id"] == summary["id"]  # GitLab keeps the id when a note becomes a thread
    answers = [n for n in thread["notes"] if replied_to(str(n["body"])) == str(reply["id"])]
    assert len(answers) == 1 and answers[0]["author"]["username"] == "livereview"
