"""A repo's first sight is read every cycle for every watched repo (the baseline of what is
history): once recorded, it costs one query for all of them, not one per repo — at 200
Bitbucket repos, 200 queries a cycle were most of the daemon's idle CPU (bench figure 15)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event

from livereview.store import state
from livereview.store.db import Store
from tests.factories import T0

REPOS = tuple(f"ACME/repo-{n:03d}" for n in range(200))


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store.open(database_url)
    yield opened
    opened.close()


def test_first_seen_reads_every_known_repo_with_one_query(store: Store) -> None:
    first = store.transaction(state.first_seen, "bb", REPOS, T0)
    statements: list[str] = []

    def seen(*args: Any) -> None:
        statements.append(str(args[2]))

    event.listen(store.engine, "before_cursor_execute", seen)
    try:
        later = store.transaction(state.first_seen, "bb", (*REPOS, "ACME/new"),
                                  T0 + timedelta(hours=1))
    finally:
        event.remove(store.engine, "before_cursor_execute", seen)
    assert {r: later[r] for r in REPOS} == first == dict.fromkeys(REPOS, T0)
    assert later["ACME/new"] == T0 + timedelta(hours=1)
    reads = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(reads) <= 3, f"{len(reads)} SELECTs for {len(REPOS) + 1} repos"
