"""An idle GitHub poll cycle costs the same whatever the number of watched repositories.

Every cycle used to list each repo with three conditional requests (57 a minute per repo
at the 3 s hot interval): 450 requests a cycle at 150 repos. Now one GraphQL request
searches every watched repo's recently updated PRs (batched into aliases: a search query is
at most 256 characters), and the bot's notifications are read when X-Poll-Interval allows.
Counts of requests the fake GitHub saw, never times.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from livereview.app.daemon import App
from livereview.metrics import Metrics
from livereview.settings import load
from tests.e2e.conftest import GITHUB_TOKEN, GitHubSandbox, write_github_config

REPOS = 150


def watch(gh: GitHubSandbox, repos: list[str], config: Path, db: Path) -> App:
    """An app on its own database watching `repos` of the sandbox's fake GitHub."""
    write_github_config(config, gh.server.enterprise_url, gh.llm.url, db)
    text = config.read_text(encoding="utf-8").split("[[repos]]")[0]  # not the sandbox's repo
    config.write_text(text + "".join(f'\n[[repos]]\nhost = "gh"\npath = "{repo}"\n'
                                     for repo in repos), encoding="utf-8")
    return App.create(load(config), metrics=Metrics())


def open_quiet_prs(gh: GitHubSandbox) -> list[str]:
    """One PR in each of REPOS repos, last touched an hour ago (outside the hot window)."""
    repos = [f"acme/service-{n:03d}" for n in range(REPOS)]
    gh.github._clock = lambda: datetime.now(UTC) - timedelta(hours=1)
    for repo in repos:
        gh.github.add_pr(repo, title="Change", body="A change.", author="bob")
    gh.github._clock = lambda: datetime.now(UTC)
    return repos


async def idle_requests(gh: GitHubSandbox, app: App) -> list[tuple[str, str]]:
    """The requests of one idle cycle after first sight and one cycle more."""
    await app.cycle(cold=True)
    await app.cycle()
    gh.github.reset_requests()
    report = (await app.cycle())["gh"]
    assert report.ok and report.jobs == 0
    return [(method, path) for method, path, _ in gh.github.requests]


async def test_an_idle_cycle_over_150_repos_makes_as_many_requests_as_over_one(
        gh: GitHubSandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_GITHUB_TOKEN", GITHUB_TOKEN)
    repos = open_quiet_prs(gh)
    counts = {}
    for size in (1, REPOS):
        app = watch(gh, repos[:size], tmp_path / f"{size}.toml", tmp_path / f"{size}.db")
        try:
            counts[size] = await idle_requests(gh, app)
        finally:
            await app.close()
    assert counts[1] == counts[REPOS] == [("POST", "/api/graphql")]


async def test_a_mention_on_an_idle_repo_among_150_is_acked_and_answered_once(
        gh: GitHubSandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_GITHUB_TOKEN", GITHUB_TOKEN)
    repos = open_quiet_prs(gh)
    app = watch(gh, repos, tmp_path / "many.toml", tmp_path / "many.db")
    try:
        await idle_requests(gh, app)
        quiet = repos[137]
        question = gh.github.add_issue_comment(quiet, 1, author="alice",
                                               body="@livereview why this change?")
        busy = (await app.cycle())["gh"]
        assert busy.jobs == 1
        await app.worker.drain()
        await app.cycle()
        await app.worker.drain()
    finally:
        await app.close()
    assert ("eyes", "livereview") in gh.github.reactions_on(quiet, "issue", question["id"])
    answers = [c for c in gh.github.comments_by("livereview")
               if f"issuecomment-{question['id']}" in c["body"]]
    assert len(answers) == 1
