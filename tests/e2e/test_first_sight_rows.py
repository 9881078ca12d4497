"""A first read built from a listing row (hosts/base.py ReadsFromListing) stores the MR as
the listing showed it: only a row of the poller's newest cycle may be used. A first sweep's
read queued for minutes reads the MR itself — closed or merged since its listing, it is
never listed again (the listing is of opened MRs), and would stay stored as opened."""

from __future__ import annotations

import asyncio
import threading

import pytest

from livereview.app.daemon import App
from livereview.metrics import Metrics
from livereview.settings import load
from livereview.sync.mr_syncs import MR_CONCURRENCY
from tests.databases import query
from tests.e2e.conftest import BACKSTOP_SECONDS, FILES, PROJECT, TOKEN, Sandbox


async def _arrived(*events: threading.Event) -> None:
    """Until each request held in the fake has come (off the loop: the reads go on)."""
    for event in events:
        assert await asyncio.to_thread(event.wait, BACKSTOP_SECONDS)


async def test_an_mr_closed_between_its_listing_and_its_queued_read_is_stored_closed(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    # Updated after the sandbox's MR: read before it, most recent first (sync/first_sight.py).
    others = [sandbox.gitlab.add_mr(PROJECT, title=f"change {n}", author="bob", files=FILES)
              for n in range(MR_CONCURRENCY)]
    # Every read slot taken by a read that waits in the fake: the sandbox's MR is queued.
    # (Request slots to spare: the next cycle lists meanwhile.)
    sandbox.config.write_text(sandbox.config.read_text().replace(
        'token_env = "LIVEREVIEW_E2E_TOKEN"',
        f'token_env = "LIVEREVIEW_E2E_TOKEN"\nmax_concurrent_requests = {2 * MR_CONCURRENCY}'))
    held = [sandbox.gitlab.hold("GET", rf"/merge_requests/{iid}/discussions$",
                                timeout=BACKSTOP_SECONDS) for iid in others]
    app = App.create(load(sandbox.config), metrics=Metrics())
    try:
        first = (await app.cycle(cold=True, wait=0))["gl"]  # listed; the sweep begun
        assert first.planned == MR_CONCURRENCY + 1
        await _arrived(*(hold.arrived for hold in held))
        sandbox.gitlab.set_state(PROJECT, sandbox.iid, "closed")
        await app.cycle(wait=0)  # a newer cycle: the MR is not listed (it is not opened)
        sandbox.gitlab.reset_requests()
        for hold in held:
            hold.release()
        await app.pollers["gl"].caught_up()
    finally:
        for hold in held:
            hold.release()
        await app.close()
    assert query(sandbox.db, "SELECT state FROM mr_conversations WHERE iid = :iid",
                 iid=sandbox.iid) == [("closed",)]
    # Read whole: the MR itself, not its row of the first cycle.
    paths = {path for _, path, _ in sandbox.gitlab.requests}
    assert f"/api/v4/projects/acme%2Fwidgets/merge_requests/{sandbox.iid}" in paths
