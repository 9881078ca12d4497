"""The listing watermark never moves past a change no stored read saw (docs/DESIGN.md §6,
sync/watermark.py): reads go on in the background after a tick, and a later cycle's
closer moves the watermark when they are done. Two ways it moved past a question:

- a read that outlasts `watermark_overlap_seconds` fetched the MR before a question was
  asked; the cycles that list the MR meanwhile skip it (being read), and once the read
  ended the last of their closers moved the watermark to its start: the question was never
  listed again;
- a read left running by an earlier cycle failed to store: a later cycle whose own reads
  stored fine moved the watermark past the MR.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from livereview.core.model import MergeRequest, MRKey, Snapshot
from livereview.store import jobs
from livereview.store.engine import StoreError
from tests.e2e.conftest import BACKSTOP_SECONDS, GitHubSandbox
from tests.e2e.test_github_active import open_prs, watch

QUIET = "acme/quiet-0"
LATER = timedelta(minutes=10)  # longer than watermark_overlap_seconds (120 s)


def _later_on_the_host(gh: GitHubSandbox) -> None:
    """The fake's timestamps have whole seconds: what is written from now on is later."""
    gh.github._clock = lambda: datetime.now(UTC) + timedelta(seconds=2)


@pytest.mark.parametrize("minutes", [0, 10])  # how long the read goes on, simulated
async def test_a_question_asked_while_a_long_read_of_its_mr_runs_is_answered(
        gh: GitHubSandbox, tmp_path: Path, minutes: int) -> None:
    open_prs(gh, [QUIET], hours_ago=1)
    app = watch(gh, [QUIET], tmp_path)
    try:
        await app.cycle(cold=True)
        await app.cycle()
        poller = app.pollers["gh"]
        host = poller.host
        fetched, gate, real_fetch = asyncio.Event(), asyncio.Event(), host.fetch_mr

        async def slow_fetch(repo: str, iid: int,
                             reactions_for: frozenset[str] = frozenset()) -> Snapshot:
            snapshot = await real_fetch(repo, iid, reactions_for)
            fetched.set()
            await gate.wait()  # a 100 000-note MR: storing it takes a while
            return snapshot

        host.fetch_mr = slow_fetch  # type: ignore[method-assign]
        # Something that is not a person's message bumps the PR: listed, not hot.
        gh.github.add_issue_comment(QUIET, 1, author="livereview", body="CI: green")
        first = await asyncio.wait_for(poller.cycle(wait=0), BACKSTOP_SECONDS)
        assert first.planned == 1
        await asyncio.wait_for(fetched.wait(), BACKSTOP_SECONDS)
        _later_on_the_host(gh)
        gh.github.add_issue_comment(QUIET, 1, author="alice", body="@livereview why?")
        poller.clock = lambda: datetime.now().astimezone() + timedelta(minutes=minutes)
        await asyncio.wait_for(poller.cycle(wait=0), BACKSTOP_SECONDS)  # lists it, skips it
        gate.set()
        await asyncio.wait_for(poller.caught_up(), BACKSTOP_SECONDS)
        host.fetch_mr = real_fetch  # type: ignore[method-assign]
        await app.cycle()
        await app.cycle()
        made = await app.store.run(jobs.listing, repo=QUIET)
    finally:
        await app.close()
    assert len(made) == 1


@pytest.mark.parametrize("fail", [False, True])
async def test_a_question_whose_background_read_failed_to_store_is_answered_later(
        gh: GitHubSandbox, tmp_path: Path, fail: bool) -> None:
    open_prs(gh, [QUIET], hours_ago=1)
    app = watch(gh, [QUIET], tmp_path)
    try:
        await app.cycle(cold=True)
        await app.cycle()
        poller = app.pollers["gh"]
        gate, real = asyncio.Event(), poller.sync_mr

        async def slow_read(key: MRKey, baseline: datetime,
                            concessions: frozenset[str] = frozenset(),
                            listed: MergeRequest | None = None) -> tuple[int, int]:
            await gate.wait()
            if fail:
                raise StoreError("database is locked")  # one transaction's trouble
            return await real(key, baseline, concessions, listed)

        poller.sync_mr = slow_read  # type: ignore[method-assign]
        _later_on_the_host(gh)
        gh.github.add_issue_comment(QUIET, 1, author="alice", body="@livereview why?")
        first = await asyncio.wait_for(poller.cycle(wait=0), BACKSTOP_SECONDS)
        assert first.in_background == 1  # the read goes on after the tick
        poller.clock = lambda: datetime.now().astimezone() + LATER
        await asyncio.wait_for(poller.cycle(wait=0), BACKSTOP_SECONDS)
        gate.set()
        await asyncio.wait_for(poller.caught_up(), BACKSTOP_SECONDS)
        poller.sync_mr = real  # type: ignore[method-assign]
        await app.cycle()  # the store works again: the next cycles find the question
        await app.cycle()
        made = await app.store.run(jobs.listing, repo=QUIET)
    finally:
        await app.close()
    assert len(made) == 1
