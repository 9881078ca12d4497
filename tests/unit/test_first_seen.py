"""A poll cycle reads every watched repo's first-seen time (its baseline: older comments
are history); with 200 repos that was 200 queries a cycle, every few seconds — the idle CPU
that grew with the number of repos (bench figure 2c). One query reads them all now."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event
from sqlmodel import Session

from livereview.store import state
from livereview.store.db import Store
from tests.factories import T0

REPOS = tuple(f"acme/service-{n:03d}" for n in range(200))


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store.open(database_url)
    yield opened
    opened.close()


def test_first_seen_times_of_many_repos_cost_one_query_and_never_move(store: Store) -> None:
    with Session(store.engine) as session:
        first = state.first_seen(session, "gh", REPOS[:150], T0)
        session.commit()
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(str(args[2]))

    event.listen(store.engine, "before_cursor_execute", count)
    try:
        later = T0 + timedelta(hours=1)
        with Session(store.engine) as session:
            again = state.first_seen(session, "gh", REPOS[:150], later)
    finally:
        event.remove(store.engine, "before_cursor_execute", count)
    assert again == first == dict.fromkeys(REPOS[:150], T0)
    assert len([s for s in statements if s.lstrip().upper().startswith("SELECT")]) == 1
    with Session(store.engine) as session:  # a repo watched from now on starts now
        grown = state.first_seen(session, "gh", REPOS, T0 + timedelta(hours=2))
        session.commit()
    assert grown == {**first, **dict.fromkeys(REPOS[150:], T0 + timedelta(hours=2))}
