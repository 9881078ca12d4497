"""A replica whose shards the others poll is healthy, and its metrics say so (docs/DESIGN.md §12).

The alert `LivereviewNoSuccessfulPoll` (contrib/prometheus) fires for any series of
`livereview_last_poll_success_timestamp_seconds` older than ten minutes. A replica holding
no shard of a host — its peers poll all of them — used to leave that gauge where it was: at
its last own listing, or never set. Ten minutes after giving its shards up, a healthy
replica raised a critical alert. A cycle that found every shard in live hands is a
successful one: that replica's part of the polling is done.
"""

from __future__ import annotations

import time
from pathlib import Path

from livereview.app.daemon import App
from livereview.metrics import Metrics
from livereview.settings import load
from tests.e2e.conftest import Sandbox, write_config

GAUGE = "livereview_last_poll_success_timestamp_seconds"


def _replica(sandbox: Sandbox, tmp_path: Path, database_url: str, name: str) -> App:
    config = tmp_path / f"replica-{name}.toml"
    write_config(config, sandbox.gitlab_server.url, sandbox.llm.url, database_url, replica=name)
    return App.create(load(config), metrics=Metrics(replica=name))


async def test_a_replica_whose_shards_its_peers_hold_reports_a_successful_poll(
        sandbox: Sandbox, tmp_path: Path, postgres_url: str) -> None:
    first = _replica(sandbox, tmp_path, postgres_url, "a")
    second = _replica(sandbox, tmp_path, postgres_url, "b")
    try:
        assert (await first.cycle())["gl"].fetched == 1  # alone: a holds every shard
        before = time.time()
        report = (await second.cycle())["gl"]
        assert report.ok and report.planned == 0  # a's shards are live: b polls nothing
        polled = second.metrics.registry.get_sample_value(GAUGE, {"host": "gl",
                                                                  "replica": "b"})
        assert polled is not None and polled >= before
    finally:
        await first.close()
        await second.close()
