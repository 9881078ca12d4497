"""One MR too big for the daemon's budget, and one merely long: neither holds up the
others, and the too-big one says why (docs/DESIGN.md §6)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Concatenate, ParamSpec, TypeVar, cast

import pytest
from sqlmodel import Session

from livereview.app.daemon import App
from livereview.core.model import MRKey
from livereview.core.triggers import replied_to
from livereview.metrics import Metrics
from livereview.settings import load
from livereview.store import snapshots
from livereview.store.db import Store
from tests.databases import query
from tests.e2e.conftest import PROJECT, Sandbox, write_config

P = ParamSpec("P")
R = TypeVar("R")


def answers(sandbox: Sandbox, note_id: object) -> list[dict[str, object]]:
    return [n for n in sandbox.bot_notes() if replied_to(str(n["body"])) == str(note_id)]


def long_mr(sandbox: Sandbox, notes: int, mention_last: bool) -> tuple[int, dict[str, object]]:
    iid = sandbox.gitlab.add_mr(PROJECT, title="long", author="bob",
                                files={"l.py": ("a = 1\n", "a = 2\n")})
    first = sandbox.gitlab.add_note(PROJECT, iid, author="bob", body="start", thread=True)
    discussion = str(next(d["id"] for d in sandbox.gitlab.discussions(PROJECT, iid)
                          if d["notes"][0]["id"] == first["id"]))
    note = first
    for n in range(notes):
        body = "@livereview and now?" if mention_last and n == notes - 1 else (
            f"note {n}: " + "words " * 40)
        note = sandbox.gitlab.add_note(PROJECT, iid, author=("bob", "carol")[n % 2],
                                       body=body, reply_to_discussion=discussion)
    return iid, note


def test_an_mr_over_max_response_mb_is_skipped_with_its_reason(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    sandbox.gitlab.add_user("carol")
    long_mr(sandbox, 2_500, mention_last=True)  # ~1.5 MB of discussions
    text = sandbox.config.read_text().replace('token_env = "LIVEREVIEW_E2E_TOKEN"',
                                              'token_env = "LIVEREVIEW_E2E_TOKEN"\n'
                                              "max_response_mb = 1")
    sandbox.config.write_text(text)
    other = sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    assert len(answers(sandbox, other["id"])) == 1  # the other MR is answered
    events = [json.loads(line) for line in capsys.readouterr().err.splitlines()
              if line.startswith("{")]
    [failure] = [e for e in events if e["event"] == "mr_fetch_failed"]
    assert "larger than max_response_mb (1 MB)" in failure["reason"]
    assert failure["mr"] == 2


def test_a_mention_at_the_end_of_a_long_thread_is_answered_once(sandbox: Sandbox) -> None:
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db)
    sandbox.gitlab.add_user("carol")
    _, last = long_mr(sandbox, 4_000, mention_last=True)
    assert sandbox.once() == 0
    assert sandbox.once() == 0
    assert len(answers(sandbox, last["id"])) == 1


class LoadLog(Store):
    """The real store, noting which MRs' snapshots are loaded."""

    def __init__(self, real: Store) -> None:
        super().__init__(real.engine)
        self.loaded: list[MRKey] = []

    async def run(self, fn: Callable[Concatenate[Session, P], R], *args: P.args,
                  **kwargs: P.kwargs) -> R:
        if fn is snapshots.load:
            self.loaded.append(cast(MRKey, args[0]))
        return await super().run(fn, *args, **kwargs)


async def test_a_long_mr_refetched_unchanged_is_not_loaded_and_diffed_again(
        sandbox: Sandbox) -> None:
    sandbox.gitlab.add_user("carol")
    iid, _ = long_mr(sandbox, 3_000, mention_last=False)
    key = MRKey("gl", PROJECT, iid)
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
        store = LoadLog(app.store)
        app.store = app.worker.store = app.worker.composer.store = store
        for poller in app.pollers.values():
            poller.store = store
        await app.cycle()  # the long MR is hot: fetched again, unchanged
        assert key not in store.loaded
        # First sight stored it from its listing row; the diff refs read since are kept.
        version = sandbox.gitlab.find_mr(PROJECT, iid).versions[-1]
        refs = query(sandbox.db, "SELECT iid, base_sha, start_sha, diff_refs_read FROM "
                     "mr_conversations")
        assert [r[1:] for r in refs if r[0] == iid] == [(version.base, version.start, True)]
        note = sandbox.gitlab.add_note(PROJECT, iid, author="alice", body="@livereview ok?")
        await app.cycle()  # it changed: loaded, diffed and stored as usual
        assert key in store.loaded
        await app.worker.drain()
    finally:
        await app.close()
    assert len(answers(sandbox, note["id"])) == 1


def test_an_mr_whose_fetch_failed_is_synced_again_after_a_restart(sandbox: Sandbox) -> None:
    """The listing watermark moves on at the end of a cycle: an MR whose fetch failed then
    was lost for good once its change was older than the listing's overlap."""
    old = datetime.now(UTC) - timedelta(minutes=30)
    note = sandbox.gitlab.add_note(PROJECT, sandbox.iid, author="alice",
                                   body="@livereview is this lock needed?", created_at=old)
    with sandbox.gitlab.lock:
        sandbox.gitlab.find_mr(PROJECT, sandbox.iid).updated_at = old
    sandbox.gitlab.inject_fault("GET", r"/merge_requests/1/discussions", status=200,
                                body="<html>maintenance</html>",
                                headers={"Content-Type": "text/html"})
    assert sandbox.once() == 0  # the fetch fails; the watermark moves on
    assert answers(sandbox, note["id"]) == []
    assert query(sandbox.db, "SELECT repo, iid FROM mr_sync_failures") == [
        (PROJECT, sandbox.iid)]
    assert sandbox.once() == 0  # a new process: the failure is in the store, not memory
    assert len(answers(sandbox, note["id"])) == 1
    assert query(sandbox.db, "SELECT count(*) FROM mr_sync_failures") == [(0,)]


async def test_only_the_last_few_long_mrs_are_kept_in_memory(sandbox: Sandbox) -> None:
    """A long MR's last stored snapshot is kept to skip reloading it unchanged — for the
    most recent few only, so one that went cold does not stay in memory for good."""
    from livereview.sync.read import INGESTED_KEPT
    keys = []
    for n in range(INGESTED_KEPT + 2):  # a 300 kB note makes an MR long
        iid = sandbox.gitlab.add_mr(PROJECT, title=f"big {n}", author="bob",
                                    files={f"f{n}.py": ("a = 1\n", "a = 2\n")})
        sandbox.gitlab.add_note(PROJECT, iid, author="bob", body="word " * 60_000)
        keys.append(MRKey("gl", PROJECT, iid))
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        await app.cycle(cold=True)
    finally:
        await app.close()
    kept = list(app.pollers["gl"]._reader.ingested)
    assert len(kept) == INGESTED_KEPT and set(kept) <= set(keys)
