"""What the poller asks GitLab for, cycle after cycle."""

from __future__ import annotations

import asyncio

import pytest

from livereview.app.daemon import App
from livereview.metrics import Metrics
from livereview.settings import load
from tests.e2e.conftest import TOKEN, Sandbox


async def test_a_hot_mr_is_revalidated_not_downloaded_again(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    sandbox.note("a plain comment keeps the MR hot")
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle()  # first sight: the MR is its listing row, its discussions read
        await app.cycle()  # stored: the MR itself is read (its diff refs), as on any read
        http = app.hosts["gl"].http  # type: ignore[attr-defined]
        assert http.not_modified == 1  # the discussions
        sandbox.gitlab.reset_requests()
        report = (await app.cycle())["gl"]
    finally:
        await app.close()
    assert report.fetched == 1 and report.events == 0
    # The MR and its discussions: 304 each. Its commits were never read (the comment asked
    # nothing of the bot, no push since): not read now either (sync/commits.py).
    assert http.not_modified == 3
    assert not any(p.endswith("/commits") for _, p, _ in sandbox.gitlab.requests)


async def test_with_per_project_listing_mentions_arrive_through_the_todo_list(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """When listing costs a request per repo it runs on the cold cycle only; GitLab's
    to-do list (one request for the instance) brings mentions in on every hot cycle."""
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    sandbox.config.write_text(sandbox.config.read_text().replace(
        'token_env = "LIVEREVIEW_E2E_TOKEN"',
        'token_env = "LIVEREVIEW_E2E_TOKEN"\nlist_strategy = "project"'))
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        assert (await app.cycle(cold=True))["gl"].listed == 1
        sandbox.note("@livereview is this lock needed?")
        sandbox.gitlab.reset_requests()
        hot = (await app.cycle())["gl"]
    finally:
        await app.close()
    paths = [path for _, path, _ in sandbox.gitlab.requests]
    assert not any(p.endswith("/merge_requests") for p in paths)  # no listing this cycle
    assert "/api/v4/todos" in paths
    assert hot.jobs == 1
    assert [t.state for t in sandbox.gitlab.todos("livereview")] == ["done"]  # once fetched


async def test_a_freed_job_slot_starts_the_next_job_at_once(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """With one job at a time and nothing else to wake the worker, every job must still
    start as soon as the previous one is done (it used to wait for the next idle tick)."""
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    sandbox.config.write_text(sandbox.config.read_text().replace(
        "[daemon]", "[daemon]\nmax_concurrent_jobs = 1"))
    notes = [sandbox.note(f"@livereview question {i}?") for i in range(5)]
    app = App.create(load(sandbox.config), metrics=Metrics())
    app.worker.slots.idle_wait_seconds = 3600.0  # only wake-ups can start jobs
    stop = asyncio.Event()
    daemon = asyncio.create_task(app.run(stop))
    try:
        async with asyncio.timeout(60):
            while len(sandbox.bot_notes()) < len(notes):
                await asyncio.sleep(0.05)
    finally:
        stop.set()
        await daemon
        await app.close()
    assert len(sandbox.bot_notes()) == 5


async def test_a_repo_that_vanishes_mid_run_is_set_aside_and_the_others_go_on(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    sandbox.gitlab.add_project("acme/gadgets")
    sandbox.config.write_text(sandbox.config.read_text().replace(
        'token_env = "LIVEREVIEW_E2E_TOKEN"',
        'token_env = "LIVEREVIEW_E2E_TOKEN"\nlist_strategy = "project"')
        + '\n[[repos]]\nhost = "gl"\npath = "acme/gadgets"\n')
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        assert (await app.cycle(cold=True))["gl"].ok
        for path in (r"/projects/acme%2Fgadgets/merge_requests$", r"/projects/acme%2Fgadgets$"):
            sandbox.gitlab.inject_fault("GET", path, status=404,
                                        body='{"message":"404 Project Not Found"}', times=5)
        sandbox.note("@livereview still there?")
        assert not (await app.cycle(cold=True))["gl"].ok  # the listing hit the 404
        report = (await app.cycle(cold=True))["gl"]  # re-checked: gadgets is set aside
    finally:
        await app.close()
    assert report.ok and report.jobs == 1
    assert app.pollers["gl"].unhealthy == {"acme/gadgets": "not found"}
