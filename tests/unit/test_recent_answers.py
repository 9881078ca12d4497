"""The console's recent answers and lesson sources read what they show, not every job: a
store of many posted replies is read with a LIMIT (the rows loaded are counted)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from sqlalchemy import event
from sqlalchemy.orm import Session as OrmSession

from livereview.core.model import JobReason, ReplyRequest
from livereview.settings import parse
from livereview.store import jobs
from livereview.store.db import Store
from livereview.tools import console
from tests.factories import KEY, T0


def _posted(store: Store, count: int) -> None:
    requests = [ReplyRequest(KEY, f"t{n}", f"m{n}", JobReason.MENTION, T0)
                for n in range(count)]
    store.transaction(jobs.enqueue, requests, T0)
    for n, row in enumerate(store.transaction(jobs.listing)):
        assert row.id is not None
        store.transaction(jobs.mark_posted, row.id, f"reply{n}", T0 + timedelta(seconds=n),
                          citations=[], lesson=None)


@contextmanager
def _rows_loaded() -> Iterator[list[object]]:
    loaded: list[object] = []

    def count(_session: OrmSession, instance: object) -> None:
        loaded.append(instance)

    event.listen(OrmSession, "loaded_as_persistent", count)
    try:
        yield loaded
    finally:
        event.remove(OrmSession, "loaded_as_persistent", count)


def test_recent_posted_loads_only_the_newest_rows_newest_first(database_url: str) -> None:
    store = Store.open(database_url)
    _posted(store, 30)
    with _rows_loaded() as loaded:
        newest = store.transaction(jobs.recent_posted, 5)
    assert [r.posted_message_id for r in newest] == [f"reply{n}" for n in (29, 28, 27, 26, 25)]
    assert len(loaded) == 5
    store.close()


def test_jobs_are_found_by_the_replies_they_posted_and_nothing_else_is_read(
        database_url: str) -> None:
    store = Store.open(database_url)
    _posted(store, 30)
    with _rows_loaded() as loaded:
        found = store.transaction(jobs.by_posted_ids, ["reply3", "reply7", "nowhere"])
    assert sorted(r.posted_message_id or "" for r in found) == ["reply3", "reply7"]
    assert len(loaded) == 2
    assert store.transaction(jobs.by_posted_ids, []) == []
    store.close()


def test_the_consoles_recent_answers_read_only_the_rows_it_shows(database_url: str) -> None:
    store = Store.open(database_url)
    _posted(store, 30)
    store.close()
    settings = parse({"daemon": {"database_url": database_url, "metrics_listen": ""},
                      "ai": {"api_key_env": ""},
                      "hosts": [{"name": "gl", "type": "gitlab", "url": "http://127.0.0.1:9",
                                 "token_env": "UNSET_TOKEN"}],
                      "repos": [{"host": "gl", "path": "a/b"}]},
                     {}, secrets=False)
    with _rows_loaded() as loaded:
        shown = console.recent(settings, limit=3)
    assert [a.message_id for a in shown] == ["m29", "m28", "m27"]
    assert len(loaded) == 3
