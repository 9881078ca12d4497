"""First sight of a big GitLab: bounded by the listing, not by the number of MRs
(docs/DESIGN.md, "First sight"), and a daemon stopped in the middle of it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from livereview.app.daemon import App
from livereview.core.triggers import replied_to
from livereview.metrics import Metrics
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.sandbox.llm_server import FakeLLMServer
from livereview.settings import load
from tests.databases import query
from tests.e2e.conftest import FILES, PROJECT, TOKEN, Daemon, wait_for, write_config


class Clock:
    """The fake's clock, set back to make activity that is days old."""

    def __init__(self) -> None:
        self.back = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) - self.back


@dataclass
class BigGitLab:
    gitlab: FakeGitLab
    server: FakeGitLabServer
    clock: Clock
    config: Path
    db: Path

    def add_mrs(self, count: int, *, days_ago: float = 0.0, body: str = "looks fine"
                ) -> list[int]:
        self.clock.back = timedelta(days=days_ago)
        iids = []
        for i in range(count):
            iid = self.gitlab.add_mr(PROJECT, title=f"change {i}", author="bob", files=FILES)
            self.gitlab.add_note(PROJECT, iid, author="alice", body=body)
            iids.append(iid)
        self.clock.back = timedelta(0)
        return iids

    def discussions_read(self) -> list[int]:
        """The MRs whose discussions the daemon read, in order."""
        return [int(path.split("/")[-2]) for _, path, _ in self.gitlab.requests
                if path.endswith("/discussions")]

    def bot_notes(self) -> list[dict[str, object]]:
        return self.gitlab.notes_by("livereview")


@pytest.fixture
def big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BigGitLab]:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    clock = Clock()
    gitlab = FakeGitLab(token=TOKEN, clock=clock)
    gitlab.add_user("alice", "Alice")
    gitlab.add_project(PROJECT)
    with FakeGitLabServer(gitlab) as server, FakeLLMServer() as llm:
        config, db = tmp_path / "livereview.toml", tmp_path / "state" / "livereview.db"
        write_config(config, server.url, llm.url, db, log_format="json",
                     shutdown_grace_seconds=10.0)
        yield BigGitLab(gitlab, server, clock, config, db)


async def test_first_sight_reads_only_the_mrs_active_since_the_baseline(
        big: BigGitLab) -> None:
    """An MR idle since before the baseline (backfill_hours = 24 here) holds nothing to
    answer: the listing row is enough until it changes, and then it is read in full. Only
    those the bot's to-do list names (old mentions) are read, once, to clear the to-dos."""
    stale = big.add_mrs(30, days_ago=3)
    [old_mention] = big.add_mrs(1, days_ago=3, body="@livereview an old question?")
    [active] = big.add_mrs(1, body="@livereview a question from today?")
    app = App.create(load(big.config), metrics=Metrics())
    try:
        first = (await app.cycle(cold=True))["gl"]
        assert sorted(big.discussions_read()) == sorted([old_mention, active])
        assert (first.listed, first.fetched, first.jobs) == (32, 2, 1)
        big.gitlab.reset_requests()
        await app.cycle(cold=True)
        assert big.discussions_read() == [active]  # hot; the idle ones are still not read
        big.gitlab.reset_requests()
        asked = big.gitlab.add_note(PROJECT, stale[7], author="alice",
                                    body="@livereview and a new one?")
        again = (await app.cycle(cold=True))["gl"]
    finally:
        await app.close()
    assert sorted(big.discussions_read()) == sorted([stale[7], active])
    assert again.jobs == 1  # the new question, never the old one
    [(message_id,)] = query(big.db, "SELECT host_message_id FROM reply_jobs WHERE iid = :iid",
                            iid=stale[7])
    assert message_id == str(asked["id"])
    assert query(big.db, "SELECT iid FROM mr_sightings WHERE iid = :iid", iid=stale[7]) == []


async def test_a_sweep_reads_the_most_recently_updated_mr_first(big: BigGitLab) -> None:
    """A reply made just before the start (in a thread the bot is in, say) is on the MR
    updated last: read first, not after the thousands of others."""
    iids = big.add_mrs(12, days_ago=0.5)
    big.gitlab.add_note(PROJECT, iids[8], author="alice", body="one more thing")
    _one_request_at_a_time(big)
    app = App.create(load(big.config), metrics=Metrics())
    try:
        report = (await app.cycle(cold=True))["gl"]
    finally:
        await app.close()
    assert report.fetched == 12
    assert big.discussions_read()[0] == iids[8]


async def test_at_first_sight_the_to_do_list_is_read_before_the_repos_and_the_listing(
        big: BigGitLab) -> None:
    """Checking the repos and listing a big instance take many requests; a mention the
    bot's to-do list names is read while they run — before any MR the listing names, even
    one updated later — and only once."""
    iids = big.add_mrs(12, days_ago=0.5)
    big.gitlab.add_note(PROJECT, iids[3], author="alice", body="@livereview quick one?")
    big.gitlab.add_note(PROJECT, iids[8], author="alice", body="a later, plain comment")
    _one_request_at_a_time(big)
    app = App.create(load(big.config), metrics=Metrics())
    try:
        report = (await app.cycle(cold=True))["gl"]
    finally:
        await app.close()
    assert big.discussions_read()[:2] == [iids[3], iids[8]]
    assert (report.fetched, report.jobs) == (12, 1)
    assert [t.state for t in big.gitlab.todos("livereview")] == ["done"]


def _one_request_at_a_time(big: BigGitLab) -> None:
    """The order of reads, as the server sees it, is the order they were begun."""
    big.config.write_text(big.config.read_text().replace(
        'token_env = "LIVEREVIEW_E2E_TOKEN"',
        'token_env = "LIVEREVIEW_E2E_TOKEN"\nmax_concurrent_requests = 1'))


def _start(big: BigGitLab, name: str) -> Daemon:
    log = big.config.with_name(name)
    env = {**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(big.config), "run"],
        stdout=log.open("w", encoding="utf-8"), stderr=subprocess.STDOUT, env=env, text=True)
    return Daemon(process, log)


def _events(daemon: Daemon, name: str) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in daemon.output().splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == name]


def _logged(daemon: Daemon, name: str) -> Callable[[], bool]:
    return lambda: bool(_events(daemon, name))


def test_a_daemon_stopped_mid_sweep_exits_within_its_grace_and_the_next_start_resumes(
        big: BigGitLab) -> None:
    """Was: the stop waited its whole grace for a queue of thousands of MR reads it could
    never finish, then cancelled them one by one. The reads waiting for their turn are
    dropped at once; the few being read finish; the listing watermark stays, so the next
    start lists and reads the rest."""
    from livereview.sync.mr_syncs import MR_CONCURRENCY
    iids = big.add_mrs(120, days_ago=0.5)
    asked = big.gitlab.add_note(PROJECT, iids[60], author="alice", body="@livereview why?")
    # Mid-sweep for sure, on a machine of any speed: the first reads (as many as run at
    # once) wait in the fake until the daemon is stopping, the rest wait for their turn.
    held = [big.gitlab.hold("GET", r"/discussions$", timeout=120)
            for _ in range(MR_CONCURRENCY)]
    first = _start(big, "first.log")
    try:
        wait_for(lambda: all(hold.arrived.is_set() for hold in held), timeout=60)
        first.process.send_signal(signal.SIGTERM)
        wait_for(_logged(first, "stopping"), timeout=60)
    finally:
        for hold in held:
            hold.release()
    assert first.process.wait(timeout=60) == 0
    [stopped] = _events(first, "daemon_stopped")
    grace = load(big.config).daemon.shutdown_grace_seconds
    assert float(str(stopped["seconds"])) < grace
    assert "Traceback" not in first.output()
    stored = query(big.db, "SELECT count(*) FROM mr_conversations")[0][0]
    # The reads begun (those held at the fake) were let finish and stored — whether or
    # not a later hot cycle was listing at the signal (that one is cancelled, and says
    # cycle_finished=false): a cancelled read stores nothing, and the rest were queued.
    assert len(held) <= stored < len(iids)  # and stopped mid-sweep indeed
    assert query(big.db, "SELECT listed_until FROM poll_watermarks WHERE scope = '*'") in (
        [], [(None,)])

    second = _start(big, "second.log")
    wait_for(lambda: query(big.db, "SELECT count(*) FROM mr_conversations")[0][0]
             == len(iids), timeout=120)
    wait_for(lambda: len(big.bot_notes()) == 1, timeout=60)
    assert second.stop(timeout=60) == 0
    assert [replied_to(str(n["body"])) for n in big.bot_notes()] == [str(asked["id"])]


def test_a_daemon_stopped_while_it_lists_a_big_instance_exits_at_once(big: BigGitLab) -> None:
    """Was: the stop waited its whole grace for a first listing that takes minutes on a big
    instance (100 pages of 100 MRs). Nothing of a listing is kept but what is complete:
    it is cancelled at once, and the next start lists again."""
    big.add_mrs(3, days_ago=3)
    listing = big.gitlab.hold("GET", r"^/api/v4/merge_requests$", timeout=120)
    daemon = _start(big, "listing.log")
    try:
        assert listing.arrived.wait(60)
        assert daemon.stop(timeout=60) == 0
    finally:
        listing.release()
    [stopped] = _events(daemon, "daemon_stopped")
    grace = load(big.config).daemon.shutdown_grace_seconds
    assert stopped["cycle_finished"] is False
    assert float(str(stopped["seconds"])) < grace / 2  # not the grace waited out
    assert "Traceback" not in daemon.output()
    assert query(big.db, "SELECT listed_until FROM poll_watermarks WHERE scope = '*'") in (
        [], [(None,)])


async def test_a_sweep_holds_a_task_only_for_the_mrs_being_read(big: BigGitLab) -> None:
    """A task per MR made up front held ~22 MiB at first sight of 10 000 MRs (bench figure
    5): the sweep starts each MR's task when its turn comes, and still reads them all."""
    from livereview.sync.mr_syncs import MR_CONCURRENCY
    big.add_mrs(30, days_ago=0.5)
    app = App.create(load(big.config), metrics=Metrics())
    try:
        report = (await app.cycle(cold=True, wait=0))["gl"]  # returns with the sweep begun
        syncs = [t for t in asyncio.all_tasks()
                 if t.get_name().startswith("sync-") and t.get_name() != "sync-sweep"]
        assert report.planned == 30
        assert len(syncs) <= MR_CONCURRENCY
        assert report.in_background == 30 - report.fetched - report.errors
        await asyncio.wait([t for t in asyncio.all_tasks() if t.get_name() == "sync-sweep"])
        assert (await app.cycle(cold=True))["gl"].planned == 0  # every MR read once
    finally:
        await app.close()
    assert sorted(big.discussions_read()) == sorted(set(big.discussions_read()))
    assert len(big.discussions_read()) == 30
