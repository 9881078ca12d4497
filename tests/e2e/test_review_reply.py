"""The review id in the author's notice, and the follow-up a reply on the review starts at
once, without a push (docs/DESIGN.md §11) — on every host, through the real CLI (`once`).

The id is the one the host's create response gave (GitHub: the review; elsewhere: the
summary comment), stored in the run's row and matched here against the fake host's own
object. A reply that references the review — in its summary's thread where the host takes
replies there, or a comment naming "review <id>" — asks for one follow-up, keyed by the
reply, and gets it instead of a conversational answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from livereview.core.triggers import replied_to
from livereview.hosts.bitbucket_server.payloads import incoming
from livereview.review.render import marked
from tests.databases import query
from tests.e2e.bitbucket_cloud_sandbox import BitbucketSandbox as CloudSandbox
from tests.e2e.conftest import GITHUB_REPO, PROJECT, GitHubSandbox, Sandbox
from tests.e2e.test_bitbucket_server_once import REPO, BitbucketSandbox, bbs  # noqa: F401
from tests.e2e.test_review_bitbucket_cloud import bb  # noqa: F401
from tests.e2e.test_review_followup import finding_discussions
from tests.e2e.test_review_gitlab import FINDINGS

TWO = {"src/cache.py": FINDINGS["src/cache.py"][:2]}  # the critical and the warning


def runs(db: Path) -> list[tuple[str, str, str, str, str]]:
    return [(str(t), str(s), str(v), str(r), str(m)) for t, s, v, r, m in query(
        db, "SELECT trigger, state, verdict, review_id, trigger_message_id "
            "FROM review_runs ORDER BY id")]


def previous_of_last(db: Path) -> tuple[object, object]:
    [(previous, last_head)] = query(db, "SELECT previous_run_id, previous_head_sha "
                                        "FROM review_runs ORDER BY id DESC LIMIT 1")
    return previous, last_head


def says_how_to_reply(notice: str, review_id: str) -> bool:
    return (f"review {review_id} requests changes" in notice
            and f'"review {review_id}"' in notice and "resolve the threads" in notice)


# ---- GitLab: a reply in the summary's discussion --------------------------------------------
def test_gitlab_a_reply_in_the_summary_thread_starts_the_follow_up_at_once(
        sandbox: Sandbox) -> None:
    text = sandbox.config.read_text(encoding="utf-8")
    sandbox.config.write_text(text + 'review_on = ["push"]\n', encoding="utf-8")
    sandbox.llm.llm.review_findings = TWO
    sandbox.note("@livereview review")
    assert sandbox.once() == 0
    [(trigger, state, verdict, review_id, _)] = runs(sandbox.db)
    assert (trigger, state, verdict) == ("mention", "done", "changes_requested")
    notes = {(marked(str(n["body"])) or ("", ""))[1]: n for n in sandbox.bot_notes()}
    summary, notice = notes["summary"], notes["notify"]
    assert review_id == str(summary["id"])  # the create response's id, read back
    assert says_how_to_reply(str(notice["body"]), review_id)
    # The author resolves both threads and replies on the review.
    for discussion in finding_discussions(sandbox).values():
        sandbox.gitlab.resolve(PROJECT, sandbox.iid, str(discussion["id"]), True, user="bob")
    [home] = [d for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid)
              if any(n["id"] == summary["id"] for n in d["notes"])]
    prompts = len(sandbox.llm.llm.prompts)
    reply = sandbox.gitlab.add_note(PROJECT, sandbox.iid, author="bob",
                                    body="Released the lock in a finally; resolved both.",
                                    reply_to_discussion=str(home["id"]))
    assert sandbox.once() == 0
    _, follow = runs(sandbox.db)
    assert follow[:3] == ("reply", "done", "approved") and follow[4] == str(reply["id"])
    assert previous_of_last(sandbox.db)[0] is not None
    assert len(sandbox.llm.llm.prompts) == prompts  # same head: no file to read again
    assert sandbox.gitlab.approvers(PROJECT, sandbox.iid) == ["livereview"]
    # No conversational answer to the reply: it asked for the review.
    assert not [n for n in sandbox.bot_notes() if replied_to(str(n["body"])) == str(reply["id"])]
    awards = sandbox.gitlab.awards_on(PROJECT, sandbox.iid, int(str(reply["id"])))
    assert [a["name"] for a in awards] == ["eyes"]  # acked like the ask it is
    assert sandbox.once() == 0
    assert len(runs(sandbox.db)) == 2  # once per reply
    sandbox.gitlab.push(PROJECT, sandbox.iid, title="more", files={"src/cache.py": (
        "", "import threading\n\ncache = {}\nlock = threading.Lock()\n# more\n")})
    assert sandbox.once() == 0
    assert [r[0] for r in runs(sandbox.db)] == ["mention", "reply", "push"]


def test_gitlab_a_reply_elsewhere_that_does_not_name_the_review_asks_for_nothing(
        sandbox: Sandbox) -> None:
    sandbox.llm.llm.review_findings = TWO
    sandbox.note("@livereview review")
    assert sandbox.once() == 0
    sandbox.gitlab.add_note(PROJECT, sandbox.iid, author="bob", body="Working on it.")
    sandbox.gitlab.add_note(PROJECT, sandbox.iid, author="bob",
                            body="> review 1 quoted\n\nnot a reply to it")
    assert sandbox.once() == 0
    assert len(runs(sandbox.db)) == 1


# ---- GitHub: a PR comment naming the review --------------------------------------------------
def test_github_a_comment_naming_the_review_starts_the_follow_up_at_once(
        gh: GitHubSandbox) -> None:
    gh.llm.llm.review_findings = TWO
    gh.comment("@livereview review")
    assert gh.once() == 0
    [(_, _, verdict, review_id, _)] = runs(gh.db)
    pr = gh.github.find_issue(GITHUB_REPO, gh.number, pull=True)
    [review] = [r for r in pr.reviews if r.user.login == "livereview"]
    assert (review_id, review.state, verdict) == (
        str(review.id), "CHANGES_REQUESTED", "changes_requested")
    [notice] = [c for c in gh.github.comments_by("livereview")
                if (marked(c["body"]) or ("", ""))[1] == "notify"]
    assert says_how_to_reply(notice["body"], review_id)
    reply = gh.comment(f"Fixed both points of review {review_id}.", author="bob")
    assert gh.once() == 0
    _, follow = runs(gh.db)
    assert follow[:2] == ("reply", "done") and follow[4] == f"issuecomment-{reply['id']}"
    assert gh.once() == 0
    assert len(runs(gh.db)) == 2


# ---- Bitbucket Data Center and Cloud: a reply to the summary comment -------------------------
def _summary_of(comments: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return dict(comments)["summary"]


def test_bitbucket_data_center_a_reply_to_the_summary_starts_the_follow_up_at_once(
        bbs: BitbucketSandbox) -> None:  # noqa: F811
    bbs.llm.llm.review_findings = TWO
    bbs.comment("@livereview review")
    assert bbs.once() == 0
    [(_, _, verdict, review_id, _)] = runs(bbs.db)
    mine = [((marked(incoming(str(c["text"]))) or ("", ""))[1], c)
            for c in bbs.fake.comments_by("livereview")]
    summary = _summary_of(mine)
    assert (review_id, verdict) == (str(summary["id"]), "changes_requested")
    assert says_how_to_reply(incoming(str(dict(mine)["notify"]["text"])), review_id)
    reply = bbs.comment("Moved the read under the lock.", author="bob",
                        parent=int(summary["id"]))
    assert bbs.once() == 0
    _, follow = runs(bbs.db)
    assert follow[:2] == ("reply", "done") and follow[4] == str(reply["id"])
    assert bbs.once() == 0
    assert len(runs(bbs.db)) == 2


def test_bitbucket_cloud_a_reply_to_the_summary_starts_the_follow_up_at_once(
        bb: CloudSandbox) -> None:  # noqa: F811
    bb.llm.llm.review_findings = TWO
    bb.comment("@livereview review")
    assert bb.once() == 0
    [(_, _, verdict, review_id, _)] = runs(bb.db)
    mine = [((marked(c["content"]["raw"]) or ("", ""))[1], c)
            for c in bb.bitbucket.comments_by(bb.bot)]
    summary = _summary_of(mine)
    assert (review_id, verdict) == (str(summary["id"]), "changes_requested")
    assert says_how_to_reply(str(dict(mine)["notify"]["content"]["raw"]), review_id)
    reply = bb.comment("Done, see the new commit.", author="bob", parent=int(summary["id"]))
    assert bb.once() == 0
    _, follow = runs(bb.db)
    assert follow[:2] == ("reply", "done") and follow[4] == str(reply["id"])
    assert bb.once() == 0
    assert len(runs(bb.db)) == 2


def test_github_a_review_mention_that_names_the_review_is_one_ask(gh: GitHubSandbox) -> None:
    gh.llm.llm.review_findings = TWO
    gh.comment("@livereview review")
    assert gh.once() == 0
    [(_, _, _, review_id, _)] = runs(gh.db)
    gh.comment(f"@livereview review {review_id} again please", author="bob")
    assert gh.once() == 0
    assert [r[0] for r in runs(gh.db)] == ["mention", "mention"]
