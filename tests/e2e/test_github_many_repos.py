"""Idle cycles stay free of rate limit with many GitHub repos.

GitHub has no instance-wide listing: every cycle revalidates, per repo, the open PRs'
first page and the repo-wide comment lists, and GitHub does not charge a 304 to the rate
limit. What is remembered for that was capped at 256 responses, least recently used out
first: with 86 repos or more (three URLs each), every cycle pushed out the very responses
the next one needed, so an idle cycle cost a full rate-limited request per URL — 450 per
cycle at 150 repos, the hourly 5 000 gone in a few minutes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from livereview.app.daemon import App
from livereview.metrics import Metrics
from livereview.settings import load
from tests.e2e.conftest import GITHUB_TOKEN, GitHubSandbox

REPOS = 150
LONG_BODY = "The description of a change, as people write them. " * 80  # ~4 kB a PR


async def test_an_idle_cycle_over_150_repos_is_all_304s(
        gh: GitHubSandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_GITHUB_TOKEN", GITHUB_TOKEN)
    repos = [f"acme/service-{n:03d}" for n in range(REPOS)]
    for repo in repos:
        gh.github.add_pr(repo, title="Change", body=LONG_BODY, author="bob")
    gh.config.write_text(gh.config.read_text(encoding="utf-8") + "".join(
        f'\n[[repos]]\nhost = "gh"\npath = "{repo}"\n' for repo in repos), encoding="utf-8")
    app = App.create(load(gh.config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
        await app.cycle()  # the watermark now exists: the comment lists join the listing
        await app.cycle()  # a URL is kept for revalidation from its second read on
        # The comment lists ask from the watermark rounded down to 10 minutes, so the
        # cycle after a 10-minute boundary asks for new URLs: the next one is idle again.
        for _ in range(2):
            used = gh.github.rate_limit_used()
            gh.github.reset_requests()
            idle = (await app.cycle())["gh"]
            if gh.github.rate_limit_used() == used:
                break
        http = app.hosts["gh"].http  # type: ignore[attr-defined]
    finally:
        await app.close()
    assert idle.ok and idle.jobs == 0
    assert idle.requests >= 3 * (REPOS + 1)
    assert gh.github.rate_limit_used() == used, "an idle cycle was charged to the rate limit"
    # What is kept to revalidate a listing is what it yields, not the PRs' payloads.
    listing = http.validated.get(http.validated.key(
        f"/repos/{repos[0]}/pulls", {"state": "open", "sort": "updated", "direction": "desc",
                                     "per_page": 100, "page": 1}))
    assert listing is not None and listing.json() == [
        {"number": 1, "updated_at": listing.json()[0]["updated_at"]}]
