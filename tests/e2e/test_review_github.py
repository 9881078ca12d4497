"""Reviews on the fake GitHub (Enterprise Server), through the real CLI (`once`)."""

from __future__ import annotations

from livereview.review.render import marked
from tests.e2e.conftest import GITHUB_REPO, GitHubSandbox
from tests.e2e.test_review_gitlab import FINDINGS


def bot_reviews(gh: GitHubSandbox) -> list[tuple[str, str]]:
    pr = gh.github.find_issue(GITHUB_REPO, gh.number, pull=True)
    return [(r.state, r.body) for r in pr.reviews if r.user.login == "livereview"]


def bot_review_comments(gh: GitHubSandbox) -> list[tuple[str, str, int | None, str]]:
    pr = gh.github.find_issue(GITHUB_REPO, gh.number, pull=True)
    return [(c.path, c.side, c.line, c.body) for c in pr.review_comments
            if c.user.login == "livereview"]


def test_one_review_with_findings_at_their_lines_and_the_verdict(gh: GitHubSandbox) -> None:
    gh.llm.llm.review_findings = FINDINGS
    gh.comment("@livereview review")
    assert gh.once() == 0
    [(state, body)] = bot_reviews(gh)
    assert state == "CHANGES_REQUESTED"
    assert marked(body) is not None and marked(body)[1] == "summary"  # type: ignore[index]
    assert "Document the locking policy" in body  # outside the diff: in the summary
    comments = sorted(bot_review_comments(gh), key=lambda c: c[2] or 0)
    assert [(p, s, line) for p, s, line, _ in comments] == [
        ("src/cache.py", "LEFT", 7), ("src/cache.py", "RIGHT", 8)]
    [notice] = [c for c in gh.github.comments_by("livereview")
                if (marked(c["body"]) or ("", ""))[1] == "notify"]
    assert notice["body"].startswith("@bob:")
    assert gh.once() == 0
    assert len(bot_reviews(gh)) == 1 and len(bot_review_comments(gh)) == 2


def test_own_pr_becomes_a_comment_review_with_the_verdict_in_its_body(
        gh: GitHubSandbox) -> None:
    gh.llm.llm.review_findings = FINDINGS
    pr = gh.github.find_issue(GITHUB_REPO, gh.number, pull=True)
    pr.user = gh.github.users["livereview"]  # the bot's account opened it
    gh.comment("@livereview review")
    assert gh.once() == 0
    [(state, body)] = bot_reviews(gh)
    assert state == "COMMENTED"
    assert "changes requested" in body
    assert len(bot_review_comments(gh)) == 2


def test_follow_up_after_a_push_resolves_the_fixed_finding_on_github(gh: GitHubSandbox) -> None:
    text = gh.config.read_text(encoding="utf-8")
    gh.config.write_text(text + 'review_on = ["push"]\n', encoding="utf-8")
    critical, warning, _ = FINDINGS["src/cache.py"]
    gh.llm.llm.review_findings = {"src/cache.py": [critical, warning]}
    gh.comment("@livereview review")
    assert gh.once() == 0
    pr = gh.github.find_issue(GITHUB_REPO, gh.number, pull=True)
    [fixed] = [c for c in pr.review_comments if c.line == 8 and c.user.login == "livereview"]
    gh.github.push(GITHUB_REPO, gh.number, files={"src/cache.py": (
        "", "import threading\n\ncache = {}\nlock = threading.Lock()\n\n\ndef get(key):\n"
        "    with lock:\n        return cache.get(key)\n# released\n")})
    gh.llm.llm.review_findings = {"src/cache.py": [warning]}
    assert gh.once() == 0
    thread = gh.github.thread_of(fixed)
    assert thread.resolved
    assert any("Fixed by the new commits" in c.body for c in pr.review_comments
               if gh.github.thread_of(c) is thread)
    # Two summaries (a reply in a thread is a bodiless review of its own on GitHub).
    summaries = [body for _, body in bot_reviews(gh) if body]
    assert len(summaries) == 2 and "1 fixed by the new commits" in summaries[1]
    assert len(bot_review_comments(gh)) == 3  # two findings and the note
