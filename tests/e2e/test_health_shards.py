"""`health` with replicas (docs/DESIGN.md §12): each host is judged by its stalest poll shard.

Replicas split a host's repos into shards, each with its own watermark; a shard held by a
replica that stopped polling, or polled by nobody, goes stale while the others stay fresh.
Health must see it. The watermark rows are written through the store, as the poller does.
On SQLite (one process, one scope "*") health says what it always said.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time

from livereview.cli.commands import main
from livereview.store import state
from livereview.store.db import Store
from livereview.store.leases import INSTANCE, poll_scopes

REPOS = ("acme/api", "acme/web", "acme/docs", "acme/infra")
STALE = timedelta(hours=1)  # older than health's default max-age (300 s)


def _config(path: Path, database_url: str, repos: tuple[str, ...]) -> Path:
    lines = ["[daemon]", f'database_url = "{database_url}"', "", "[ai]",
             'base_url = "http://127.0.0.1:9"', 'model = "m"', 'api_key_env = ""', "",
             "[[hosts]]", 'name = "gl"', 'type = "gitlab"', 'url = "http://127.0.0.1:9"',
             'token_env = "LIVEREVIEW_E2E_TOKEN"', ""]
    for repo in repos:
        lines += ["[[repos]]", 'host = "gl"', f'path = "{repo}"', ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store.open(database_url)
    yield opened
    opened.close()


def _listed(store: Store, scope: str, at: datetime) -> None:
    store.transaction(state.advance_watermark, "gl", scope, at)


def _health(config: Path, capsys: pytest.CaptureFixture[str], *args: str
            ) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["--config", str(config), "health", *args])
    return code, capsys.readouterr().out.strip()


def test_one_stale_shard_makes_the_host_unhealthy_and_is_named(
        tmp_path: Path, database_url: str, store: Store,
        capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path / "livereview.toml", database_url, REPOS)
    scopes = sorted(poll_scopes(store, REPOS))
    now = datetime.now(UTC)
    stale = scopes[-1]
    for scope in scopes:
        _listed(store, scope, now - STALE if scope == stale else now)
    with freeze_time(now):  # health reads the clock when it runs: exactly an hour later
        code, out = _health(config, capsys)
    assert code == 1, out
    assert "(older than 300s)" in out
    if store.engine.dialect.name == "sqlite":  # one process, one scope: the line of old
        assert scopes == [INSTANCE]
        assert out.startswith("gl: last successful poll 3600s ago")
    else:
        assert len(scopes) > 1
        repos = poll_scopes(store, REPOS)[stale]
        assert out.startswith(f"gl: stalest shard {stale} ({', '.join(repos)}): "
                              "last successful poll 3600s ago"), out

    _listed(store, stale, now)  # its replica polls again
    with freeze_time(now):
        code, out = _health(config, capsys)
    assert code == 0, out
    assert "last successful poll 0s ago" in out


def test_a_shard_nobody_ever_listed_is_unhealthy(
        tmp_path: Path, database_url: str, store: Store,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A shard a replica claimed but never listed (its row has no success), or one that no
    replica took (no row at all), while the other shards are fresh."""
    config = _config(tmp_path / "livereview.toml", database_url, REPOS)
    scopes = sorted(poll_scopes(store, REPOS))
    if len(scopes) == 1:
        pytest.skip("SQLite polls one scope: covered by test_operations' first-poll test")
    now = datetime.now(UTC)
    for scope in scopes[:-2]:
        _listed(store, scope, now)
    store.transaction(state.watermark, "gl", scopes[-2], now)  # claimed, never listed
    code, out = _health(config, capsys)
    assert code == 1, out
    assert out.startswith(f"gl: stalest shard {scopes[-2]} ("), out
    assert out.endswith("no successful poll yet"), out

    _listed(store, scopes[-2], now)  # the last shard has no row at all
    code, out = _health(config, capsys)
    assert (code, out.startswith(f"gl: stalest shard {scopes[-1]} (")) == (1, True), out
    assert out.endswith("no successful poll yet"), out


def test_a_repo_set_change_leaves_the_former_shards_behind_without_failing_forever(
        tmp_path: Path, database_url: str, store: Store,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Adding a repo re-splits the host: every shard is a new scope. The former set's
    scopes are never polled again and are not judged; a new shard, until first listed,
    counts from the host's last success under the former set (max-age of grace, no more)."""
    grown = (*REPOS, "acme/new")
    config = _config(tmp_path / "livereview.toml", database_url, grown)
    former, split = poll_scopes(store, REPOS), poll_scopes(store, grown)
    for scope in former:
        _listed(store, scope, datetime.now(UTC) - STALE)
    code, out = _health(config, capsys)
    assert code == 1, out
    assert "(older than 300s)" in out, out
    if len(split) > 1:
        assert not set(split) & set(former)
        assert out.startswith("gl: stalest shard *"), out
        assert "(the shard is new since the repo set changed)" in out, out
    code, out = _health(config, capsys, "--max-age", "7200")
    assert code == 0, out

    for scope in split:  # the new shards polled; the former ones stay an hour old
        _listed(store, scope, datetime.now(UTC))
    code, out = _health(config, capsys)
    assert code == 0, out
    assert "new since" not in out, out
