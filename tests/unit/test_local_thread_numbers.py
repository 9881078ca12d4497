"""A local thread's number belongs to its review (docs/local-reviews.md, "Threads"): the
numbers start at 1 in each review, in order of creation, and a store written before they
existed gets them when it is opened (migration 0012), on SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text

from livereview.core.local_model import AuthorKind, NewThread, RangeState, ThreadKind
from livereview.store import local_reviews as rows
from livereview.store.db import Store
from livereview.store.engine import MIGRATIONS

OLD_STORE = Path(__file__).parents[1] / "fixtures" / "local_store_0011" / "livereview.db"
OLD_REPO = "/tmp/cliwords/oldrepo"  # the repository the old store recorded
NOW = datetime(2026, 11, 27, tzinfo=UTC)


def _numbers(store: Store, repo: str) -> list[list[tuple[int, str, int]]]:
    """Per review: (number, first message, message count) of each thread."""
    return [[(t.number, t.messages[0].body, len(t.messages)) for t in review.threads]
            for review in store.transaction(rows.of_repo, repo)]


def test_a_store_of_the_release_before_opens_with_threads_numbered_per_review(
        tmp_path: Path) -> None:
    copy = tmp_path / "livereview.db"
    shutil.copyfile(OLD_STORE, copy)
    store = Store.open(f"sqlite:///{copy}")
    try:
        reviews = store.transaction(rows.of_repo, OLD_REPO)
        assert [[(t.id, t.number) for t in r.threads] for r in reviews] == [
            [(1, 1), (3, 2)], [(2, 1), (4, 2), (5, 3)]]
        second = reviews[1]
        assert [t.resolved for t in second.threads] == [False, True, False]
        assert [m.body for m in second.threads[2].messages] == [
            "on b", "a reply in review 2's third thread"]
        added = store.transaction(rows.add_thread, reviews[0].id, NewThread(
            ThreadKind.COMMENT, "", None, "", "bob", AuthorKind.HUMAN, "new"), NOW)
        assert added.number == 3  # after the review's own last, not the store's
    finally:
        store.close()


def _review(store: Store, repo: str) -> int:
    review = store.transaction(rows.create, repo, "t", "", RangeState("HEAD", "a", "b", False,
                                                                      ()), [], NOW)
    return review.id


def test_new_threads_are_numbered_within_their_review_whatever_others_do(
        database_url: str) -> None:
    store = Store.open(database_url)
    try:
        first, second = _review(store, "/r"), _review(store, "/r")
        for review_id, body in ((first, "a"), (second, "b"), (first, "c"), (second, "d"),
                                (second, "e")):
            store.transaction(rows.add_thread, review_id, NewThread(
                ThreadKind.COMMENT, "", None, "", "bob", AuthorKind.HUMAN, body), NOW)
        assert _numbers(store, "/r") == [[(1, "a", 1), (2, "c", 1)],
                                         [(1, "b", 1), (2, "d", 1), (3, "e", 1)]]
    finally:
        store.close()


def test_the_migration_numbers_older_threads_in_order_of_creation(database_url: str) -> None:
    store = Store.open(database_url)
    try:
        first, second = _review(store, "/r"), _review(store, "/r")
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with store.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.downgrade(config, "0011")  # the schema of the release before
            for review_id in (second, first, second, second, first):
                connection.execute(text(
                    "INSERT INTO local_review_threads (review_id, kind, path, code, "
                    "resolved, created_at) VALUES (:r, 'comment', '', '', false, :now)"),
                    {"r": review_id, "now": NOW})
            command.upgrade(config, "head")
        with store.engine.connect() as connection:
            found = connection.execute(text(
                "SELECT review_id, number FROM local_review_threads ORDER BY id")).all()
        assert [tuple(row) for row in found] == [(second, 1), (first, 1), (second, 2),
                                                 (second, 3), (first, 2)]
    finally:
        store.close()
