"""The bot's GitHub notifications as its mention inbox: read when X-Poll-Interval allows,
marked read only once what they announced is stored, nothing lost across a restart.

https://docs.github.com/en/rest/activity/notifications — "the X-Poll-Interval header …
tells you how often (in seconds) you are allowed to poll"; a thread is marked read with
PATCH /notifications/threads/{id}. Assertions count requests and replies, never time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

import pytest
from sqlmodel import Session

from livereview.app.daemon import App
from livereview.hosts.github.adapter import GitHub
from livereview.metrics import Metrics
from livereview.settings import load
from livereview.store.db import Store
from livereview.store.engine import StoreError
from livereview.sync import ingest
from tests.e2e.conftest import GITHUB_REPO, GITHUB_TOKEN, GitHubSandbox

P = ParamSpec("P")
R = TypeVar("R")


class Clock:
    """The host's monotonic clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def github(app: App) -> GitHub:
    host = app.hosts["gh"]
    assert isinstance(host, GitHub)
    return host


def unread(gh: GitHubSandbox) -> list[str]:
    return [n["reason"] for n in gh.github.notifications_of("livereview") if n["unread"]]


def notification_reads(gh: GitHubSandbox) -> int:
    return sum(1 for method, path, _ in gh.github.requests
               if method == "GET" and path.endswith("/notifications"))


class FailingIngest(Store):
    """The real store, except that storing an MR's snapshot and its reply jobs fails
    (`failures` times) as a full disk would fail it."""

    def __init__(self, real: Store, failures: int) -> None:
        super().__init__(real.engine)
        self.left = failures

    async def run(self, fn: Callable[Concatenate[Session, P], R], *args: P.args,
                  **kwargs: P.kwargs) -> R:
        if fn is ingest.store and self.left > 0:
            self.left -= 1
            raise StoreError("database or disk is full")
        return await super().run(fn, *args, **kwargs)


async def test_a_mention_made_while_the_daemon_is_down_is_answered_once_after_restart(
        gh: GitHubSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_GITHUB_TOKEN", GITHUB_TOKEN)
    first = App.create(load(gh.config), metrics=Metrics())
    try:
        await first.cycle(cold=True)
        await first.cycle()
    finally:
        await first.close()
    question = gh.comment("@livereview did you see this while you were away?")
    assert unread(gh) == ["mention"]
    for _ in range(2):  # two lives after the mention: one answer
        app = App.create(load(gh.config), metrics=Metrics())
        try:
            await app.cycle(cold=True)
            await app.worker.drain()
            await app.cycle()
            await app.worker.drain()
        finally:
            await app.close()
    assert len(gh.replies_to(f"issuecomment-{question['id']}")) == 1
    assert unread(gh) == []  # marked read once the trigger was stored


async def test_a_notification_stays_unread_while_storing_its_trigger_fails(
        gh: GitHubSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_GITHUB_TOKEN", GITHUB_TOKEN)
    app = App.create(load(gh.config), metrics=Metrics())
    clock = Clock()
    github(app).notifications.clock = clock
    try:
        await app.cycle(cold=True)
        await app.cycle()
        question = gh.comment("@livereview please look at the lock")
        real = app.pollers["gh"].store
        app.pollers["gh"].store = FailingIngest(real, failures=1)
        clock.now += 3600  # the notifications are due: this cycle reads them
        gh.github.reset_requests()
        with pytest.raises(StoreError):  # what the daemon's loop says once, and polls on
            await app.cycle()
        assert notification_reads(gh) == 1
        assert unread(gh) == ["mention"]  # the trigger is not stored: not marked read
        assert not any(method == "PATCH" for method, _, _ in gh.github.requests)
        clock.now += 3600
        await app.cycle()  # stored this time (the unread thread is handed out again)
        await app.worker.drain()
    finally:
        await app.close()
    assert unread(gh) == []
    assert len(gh.replies_to(f"issuecomment-{question['id']}")) == 1


async def test_notifications_are_read_no_more_often_than_x_poll_interval_says(
        gh: GitHubSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_GITHUB_TOKEN", GITHUB_TOKEN)
    gh.github.poll_interval = 120
    app = App.create(load(gh.config), metrics=Metrics())
    clock = Clock()
    github(app).notifications.clock = clock
    try:
        gh.github.reset_requests()
        await app.cycle(cold=True)
        assert notification_reads(gh) == 1  # first sight reads them
        for step in (30, 30, 59):  # 119 s after the read: still not allowed
            clock.now += step
            await app.cycle()
        assert notification_reads(gh) == 1
        searches_before = len([1 for _, path, _ in gh.github.requests if "graphql" in path])
        clock.now += 1  # 120 s: allowed, and read instead of the search on that cycle
        await app.cycle()
        assert notification_reads(gh) == 2
        searches = len([1 for _, path, _ in gh.github.requests if "graphql" in path])
        assert searches == searches_before
    finally:
        await app.close()
    assert GITHUB_REPO  # the sandbox's one watched repo
