"""What the poller asks GitLab for, cycle after cycle."""

from __future__ import annotations

import pytest

from livereview.app import App
from livereview.metrics import Metrics
from livereview.settings import load
from tests.e2e.conftest import TOKEN, Sandbox


async def test_a_hot_mr_is_revalidated_not_downloaded_again(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    sandbox.note("a plain comment keeps the MR hot")
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle()
        sandbox.gitlab.reset_requests()
        report = (await app.cycle())["gl"]
    finally:
        await app.close()
    http = app.hosts["gl"].http  # type: ignore[attr-defined]
    assert report.fetched == 1 and report.events == 0
    assert http.not_modified == 3  # the MR, its discussions and its commits: 304 each
