"""A review on the fake Bitbucket Data Center: 👀 on the ask, a comment per finding anchored
as Bitbucket anchors them (`line`, `lineType`, `fileType`), the summary, the author's
notice, and the verdict as the bot's participant status (NEEDS_WORK) — once, across runs."""

from __future__ import annotations

from collections import Counter

from livereview.hosts.bitbucket_server.payloads import incoming
from livereview.review.render import marked
from tests.e2e.test_bitbucket_server_once import REPO, BitbucketSandbox, bbs  # noqa: F401
from tests.e2e.test_review_gitlab import FINDINGS


def parts(sandbox: BitbucketSandbox) -> dict[str, dict[str, object]]:
    return dict(marked_comments(sandbox))


def marked_comments(sandbox: BitbucketSandbox) -> list[tuple[str, dict[str, object]]]:
    return [((marked(incoming(str(c["text"]))) or ("", ""))[1], c)
            for c in sandbox.fake.comments_by("livereview")]


def test_a_review_on_bitbucket_data_center(bbs: BitbucketSandbox) -> None:  # noqa: F811
    bbs.llm.llm.review_findings = FINDINGS
    ask = bbs.comment("@livereview review")
    assert bbs.once() == 0
    assert bbs.fake.reactions_on(REPO, bbs.pr, ask["id"]) == [("thinking_face", "livereview")]
    posted = parts(bbs)
    assert Counter(part for part, _ in marked_comments(bbs)) == Counter(
        {"finding=1": 1, "finding=2": 1, "summary": 1, "notify": 1})
    added, removed = posted["finding=1"]["anchor"], posted["finding=2"]["anchor"]
    assert isinstance(added, dict) and isinstance(removed, dict)
    assert (added["path"], added["line"], added["lineType"], added["fileType"]) == (
        "src/cache.py", 8, "ADDED", "TO")
    assert (removed["line"], removed["lineType"], removed["fileType"]) == (7, "REMOVED", "FROM")
    assert "anchor" not in posted["summary"]  # the out-of-diff finding is in the summary
    assert "Document the locking policy" in str(posted["summary"]["text"])
    assert bbs.fake.status_of(REPO, bbs.pr, "livereview") == "NEEDS_WORK"
    assert "@bob" in str(posted["notify"]["text"])  # the one mention made on purpose
    before = len(bbs.fake.comments_by("livereview"))
    assert bbs.once() == 0
    assert len(bbs.fake.comments_by("livereview")) == before


def test_a_review_asked_where_the_reaction_is_refused_is_acked_by_a_reply(
        bbs: BitbucketSandbox) -> None:  # noqa: F811
    """Data Center answers an emoticon outside its picker with 400: the review's ack is a
    short reply under the ask (once), and the review goes on."""
    bbs.config.write_text(bbs.config.read_text() + '\n[bot]\nack_reaction = "eyes"\n')
    bbs.llm.llm.review_findings = FINDINGS
    ask = bbs.comment("@livereview review")
    assert bbs.once() == 0
    assert bbs.once() == 0
    assert bbs.fake.reactions_on(REPO, bbs.pr, ask["id"]) == []
    assert len(bbs.acks_for(ask["id"])) == 1
    assert Counter(part for part, _ in marked_comments(bbs))["summary"] == 1
