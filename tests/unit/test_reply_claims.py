"""The claim to answer a comment, on SQLite and PostgreSQL: of claimants racing for it
exactly one gets it, in separate connections as separate processes would; the same claimant
resumes it; a lapsed one is taken over with a warning to look on the host first; once
answered it is nobody's to take; and comments answered before the upgrade are claimed."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from threading import Barrier

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import text

from livereview.core.model import MRKey
from livereview.store import engine as engines
from livereview.store import reply_claims
from livereview.store.db import Store
from livereview.store.reply_claims import Outcome
from tests.databases import Postgres
from tests.factories import KEY, T0

COMMENT = "4711"


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store.open(database_url)
    yield opened
    opened.close()


def _claim(store: Store, holder: str, at: float = 0.0, seconds: float = 30.0,
           source: str = reply_claims.TOOL) -> reply_claims.Claim:
    return store.transaction(reply_claims.claim, KEY, COMMENT, source, holder,
                             T0 + timedelta(seconds=at), seconds)


def test_one_claimant_posts_the_other_is_told_who_and_then_which_reply(store: Store) -> None:
    first = _claim(store, "job:1", source=reply_claims.DAEMON)
    assert (first.outcome, first.maybe_posted) == (Outcome.MINE, False)
    busy = _claim(store, "tool:abc", at=5)
    assert (busy.outcome, busy.source, busy.reply_id) == (Outcome.BUSY, "daemon", "")
    assert busy.expires_at == T0 + timedelta(seconds=30)  # when it may be taken over
    assert store.transaction(reply_claims.peek, KEY, COMMENT, "tool:abc", T0) == busy
    assert store.transaction(reply_claims.peek, KEY, COMMENT, "job:1", T0) is None

    again = _claim(store, "job:1", at=10, source=reply_claims.DAEMON)  # the job, retried
    assert (again.outcome, again.maybe_posted) == (Outcome.MINE, True)
    store.transaction(reply_claims.answer, KEY, COMMENT, reply_claims.DAEMON, "job:1", "900",
                      T0 + timedelta(seconds=11))
    for late in (_claim(store, "tool:abc", at=3600), _claim(store, "job:1", at=3600)):
        assert (late.outcome, late.source, late.reply_id) == (Outcome.ANSWERED, "daemon", "900")
    store.transaction(reply_claims.answer, KEY, COMMENT, reply_claims.TOOL, "tool:abc", "901",
                      T0 + timedelta(seconds=12))
    assert _claim(store, "tool:abc", at=3600).reply_id == "900"  # the first answer stands


def test_a_lapsed_claim_is_taken_over_with_a_warning_to_look_on_the_host(store: Store) -> None:
    assert _claim(store, "tool:dead", seconds=30).outcome is Outcome.MINE
    assert _claim(store, "job:7", at=29.9).outcome is Outcome.BUSY
    assert store.transaction(reply_claims.peek, KEY, COMMENT, "job:7",
                             T0 + timedelta(seconds=30)) is None  # free to take
    taken = _claim(store, "job:7", at=30, source=reply_claims.DAEMON)
    assert (taken.outcome, taken.maybe_posted) == (Outcome.MINE, True)
    assert _claim(store, "tool:dead", at=31).outcome is Outcome.BUSY  # back too late


def test_the_same_comment_id_on_two_repositories_is_two_claims(store: Store) -> None:
    other = MRKey(KEY.host, "acme/other", KEY.iid)
    assert _claim(store, "job:1").outcome is Outcome.MINE
    assert store.transaction(reply_claims.claim, other, COMMENT, reply_claims.TOOL, "tool:x",
                             T0, 30.0).outcome is Outcome.MINE


def test_claimants_racing_in_separate_connections_get_it_once(database_url: str) -> None:
    Store.open(database_url).close()  # migrated
    racers = 8
    stores = [Store.open(database_url) for _ in range(racers)]
    start = Barrier(racers)

    def race(n: int) -> Outcome:
        start.wait()
        return _claim(stores[n], f"tool:{n}").outcome

    try:
        with ThreadPoolExecutor(racers) as pool:
            outcomes = list(pool.map(race, range(racers)))
    finally:
        for opened in stores:
            opened.close()
    assert sorted(outcomes) == sorted([Outcome.MINE] + [Outcome.BUSY] * (racers - 1))


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with no schema yet, on each back end."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'old.db'}"
        return
    postgres: Postgres = request.getfixturevalue("postgres")
    name, url = postgres.fresh(migrated=False)
    yield url
    postgres.drop(name)


def _answered_by_the_version_before(url: str) -> None:
    """A database at 0009 where a tool call answered comment 11, the daemon comments 11
    (twice answered: an older version's race) and 12, and a job for 13 never posted."""
    engine = engines.create(url)
    config = Config()
    config.set_main_option("script_location", str(engines.MIGRATIONS))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "0009")
    when = T0 - timedelta(days=3)
    with engine.begin() as connection:
        connection.execute(text(
            "INSERT INTO tool_replies (host, repo, iid, comment_id, thread_id, body_digest, "
            "started_at, reply_id, replied_at) VALUES ('gl', 'acme/widgets', 7, '11', 'd1', "
            "'abc', :when, '101', :when)"), {"when": when})
        for comment, state, posted in (("11", "posted", "102"), ("12", "posted", "103"),
                                       ("13", "answered", None)):
            connection.execute(text(
                "INSERT INTO reply_jobs (key, host, repo, iid, host_thread_id, "
                "host_message_id, reason, state, attempts, next_attempt_at, last_error, "
                "comment_created_at, created_at, updated_at, lessons_used, "
                "posted_message_id, posted_at) VALUES (:key, 'gl', 'acme/widgets', 7, 'd', "
                ":comment, 'mention', :state, 1, :when, '', :when, :when, :when, '', "
                ":posted, :posted_at)"),
                {"key": f"gl:acme/widgets:7:{comment}", "comment": comment, "state": state,
                 "when": when, "posted": posted, "posted_at": when if posted else None})
    engine.dispose()


def test_comments_answered_before_the_upgrade_are_claimed_for_good(empty_url: str) -> None:
    _answered_by_the_version_before(empty_url)
    store = Store.open(empty_url)  # migrates to the head
    try:
        key = MRKey("gl", "acme/widgets", 7)
        seen = {c: store.transaction(reply_claims.claim, key, c, reply_claims.TOOL, "tool:new",
                                     T0, 30.0)
                for c in ("11", "12", "13")}
    finally:
        store.close()
    assert (seen["11"].outcome, seen["11"].source, seen["11"].reply_id) == (
        Outcome.ANSWERED, "tool", "101")  # one row, though an old version answered twice
    assert (seen["12"].outcome, seen["12"].source, seen["12"].reply_id) == (
        Outcome.ANSWERED, "daemon", "103")
    assert seen["13"].outcome is Outcome.MINE  # never posted: free
