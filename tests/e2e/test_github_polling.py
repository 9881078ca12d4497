"""What the poller asks GitHub for, cycle after cycle: an idle cycle is one search (GraphQL)
plus revalidations of hot PRs that GitHub does not charge to the REST rate limit, and a
comment is seen within one cycle."""

from __future__ import annotations

from pathlib import Path

import pytest

from livereview.app.daemon import App
from livereview.metrics import Metrics
from livereview.settings import load
from tests.e2e.conftest import GITHUB_REPO, GITHUB_TOKEN, GitHubSandbox


async def test_idle_cycles_cost_no_rest_rate_limit_and_a_comment_is_seen_at_once(
        gh: GitHubSandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_GITHUB_TOKEN", GITHUB_TOKEN)
    gh.comment("a plain comment keeps the PR hot")
    app = App.create(load(gh.config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
        await app.cycle()  # the watermark now exists: the search replaces the listing
        used = gh.github.rate_limit_used()
        gh.github.reset_requests()
        idle = (await app.cycle())["gh"]
        assert idle.jobs == 0 and idle.requests == len(gh.github.requests) > 0
        assert gh.github.rate_limit_used() == used  # every request was a 304
        question = gh.comment("@livereview is this lock needed?")
        busy = (await app.cycle())["gh"]
        assert busy.jobs == 1
        await app.worker.drain()
    finally:
        await app.close()
    assert len(gh.replies_to(f"issuecomment-{question['id']}")) == 1
    paths = {path for _, path, _ in gh.github.requests}
    assert "/api/graphql" in paths  # the search over every watched repo
    assert f"/api/v3/repos/{GITHUB_REPO}/issues/comments" not in paths  # no per-repo list
