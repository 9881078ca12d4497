"""What a first read asks GitLab for (bench figure 16, sync/commits.py): an MR that asks
nothing of the bot costs its discussions alone — the MR is the listing's row, its commits
and diff refs not read; one whose read makes a job is stored with its commits and diff
refs, and its answer shows them."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from livereview.app.daemon import App
from livereview.metrics import Metrics
from livereview.settings import load
from tests.databases import query
from tests.e2e.conftest import FILES, PROJECT, TOKEN, Sandbox

MRS = 6


def _per_mr(sandbox: Sandbox) -> Counter[tuple[int, str]]:
    """GitLab requests under one MR, by (iid, what was read: "" for the MR itself)."""
    prefix = "/api/v4/projects/"
    counts: Counter[tuple[int, str]] = Counter()
    for _, path, _ in sandbox.gitlab.requests:
        if not path.startswith(prefix) or "/merge_requests/" not in path:
            continue
        iid, _, rest = path.split("/merge_requests/", 1)[1].partition("/")
        counts[int(iid), rest] += 1
    return counts


def _commits_read(sandbox: Sandbox) -> dict[int, bool]:
    return {iid: bool(read) for iid, read in query(
        sandbox.db, "SELECT iid, commits_read FROM mr_conversations")}


def _refs_read(sandbox: Sandbox) -> dict[int, bool]:
    return {iid: bool(read) for iid, read in query(
        sandbox.db, "SELECT iid, diff_refs_read FROM mr_conversations")}


async def test_first_sight_of_active_mrs_reads_each_ones_discussions_alone(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    iids = [sandbox.iid] + [sandbox.gitlab.add_mr(PROJECT, title=f"change {i}", author="bob",
                                                  files=FILES) for i in range(MRS - 1)]
    for iid in iids:  # active since the baseline: read, and nothing asked of the bot
        sandbox.gitlab.add_note(PROJECT, iid, author="alice", body="looks fine")
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        report = (await app.cycle(cold=True))["gl"]
    finally:
        await app.close()
    assert report.fetched == MRS and report.jobs == 0
    # The MR itself is the listing's row: one request per MR read, not two (or three).
    assert _per_mr(sandbox) == Counter({(iid, "discussions"): 1 for iid in iids})
    assert _commits_read(sandbox) == dict.fromkeys(iids, False)  # not read, not "none"
    assert _refs_read(sandbox) == dict.fromkeys(iids, False)
    assert query(sandbox.db, "SELECT count(*) FROM mr_commits") == [(0,)]
    listed = {iid: (title, head) for iid, title, head in query(
        sandbox.db, "SELECT iid, title, head_sha FROM mr_conversations")}
    assert listed == {iid: (mr.title, mr.head_sha) for iid in iids
                      for mr in [sandbox.gitlab.find_mr(PROJECT, iid)]}


async def test_an_idle_mr_stored_without_commits_reads_them_when_it_is_pushed_to(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    sandbox.note("looks fine")
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
        sandbox.gitlab.push(PROJECT, sandbox.iid, title="Take the lock in get")
        await app.cycle(cold=True)
    finally:
        await app.close()
    assert _commits_read(sandbox) == {sandbox.iid: True}
    # A push, told from a force-push by the commits read for it (sync/diff.py).
    events = query(sandbox.db, "SELECT kind FROM events WHERE kind LIKE '%push'")
    assert events == [("commit_push",)]


async def test_an_mr_whose_first_read_makes_a_job_is_stored_with_its_commits_and_answered_with_them(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bot answered in this thread two days ago (before the baseline: the question it
    answered is not asked again), a commit was pushed since, and Alice asks again: the
    answer's prompt shows the commit pushed since the bot spoke (reply/context.py)."""
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    days_ago = datetime.now(UTC) - timedelta(days=2)
    question = sandbox.note("@livereview is this lock needed?", created_at=days_ago,
                            thread=True)
    thread = next(str(d["id"]) for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid)
                  if d["notes"][0]["id"] == question["id"])
    sandbox.gitlab.add_note(PROJECT, sandbox.iid, author="livereview", body="It is.",
                            reply_to_discussion=thread, created_at=days_ago)
    sandbox.gitlab.push(PROJECT, sandbox.iid, title="Take the lock in get")
    sandbox.note("@livereview and now that get takes it?", reply_to_discussion=thread)
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        report = (await app.once())["gl"]
    finally:
        await app.close()
    assert report.jobs == 1
    assert _commits_read(sandbox) == {sandbox.iid: True}
    assert _per_mr(sandbox)[sandbox.iid, "commits"] >= 1
    assert _refs_read(sandbox) == {sandbox.iid: True}  # read with the job, as it was made
    version = sandbox.gitlab.find_mr(PROJECT, sandbox.iid).versions[-1]
    assert query(sandbox.db, "SELECT base_sha, start_sha, head_sha FROM mr_conversations") \
        == [(version.base, version.start, version.head)]
    [prompt] = [p for p in sandbox.llm.llm.prompts
                if "and now that get takes it?" in str(p)]
    assert "Take the lock in get" in str(prompt)
    assert len(sandbox.bot_notes()) == 2  # the answer of two days ago, and this one


async def test_an_mr_stored_from_its_listing_row_reads_its_diff_refs_when_a_later_read_makes_a_job(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """First sight stores the MR as its listing row shows it (no diff refs); a mention
    since is read with the MR itself, stored with its diff refs, and answered."""
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    sandbox.note("looks fine")
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
        assert _refs_read(sandbox) == {sandbox.iid: False}
        assert _per_mr(sandbox)[sandbox.iid, ""] == 0
        sandbox.note("@livereview is the lock released on error?")
        await app.once()
    finally:
        await app.close()
    assert _per_mr(sandbox)[sandbox.iid, ""] >= 1
    assert _refs_read(sandbox) == {sandbox.iid: True}
    version = sandbox.gitlab.find_mr(PROJECT, sandbox.iid).versions[-1]
    assert query(sandbox.db, "SELECT base_sha, start_sha, head_sha FROM mr_conversations") \
        == [(version.base, version.start, version.head)]
    assert len(sandbox.bot_notes()) == 1
