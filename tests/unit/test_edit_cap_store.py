"""The cap on answers to edits, in the store (SQLite and PostgreSQL): edits asked faster
than the bot answers them still get at most `max_edit_answers` jobs, whatever replica or
poll made the earlier ones; a job that failed or was skipped does not count."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlmodel import Session

from livereview.core.model import JobReason, JobState, ReplyJob, ReplyRequest
from livereview.store import jobs
from livereview.store.db import Store
from tests.factories import KEY, T0


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    opened = Store.open(database_url)
    yield opened
    opened.close()


def _edit(version: str, message: str = "n1") -> ReplyRequest:
    return ReplyRequest(KEY, "t1", message, JobReason.EDITED_QUESTION, T0, edit=version)


def _cap(store: Store, requests: list[ReplyRequest], cap: int = 2
         ) -> tuple[list[str], list[str]]:
    def run(session: Session) -> tuple[list[str], list[str]]:
        kept, over = jobs.within_edit_cap(session, requests, cap)
        jobs.enqueue(session, kept, T0)
        return [r.edit for r in kept], [r.edit for r in over]
    return store.transaction(run)


def test_edits_past_the_cap_are_refused_across_polls_and_the_same_version_is_not_counted_twice(
        store: Store) -> None:
    assert _cap(store, [_edit("a"), _edit("b"), _edit("c")]) == (["a", "b"], ["c"])
    assert _cap(store, [_edit("a"), _edit("d")]) == (["a"], ["d"])  # a: already a job
    assert _cap(store, [_edit("e", message="n2")]) == (["e"], [])  # another question
    mention = ReplyRequest(KEY, "t1", "n1", JobReason.MENTION, T0)
    assert _cap(store, [mention]) == ([""], [])  # only answers to edits are capped


def test_a_failed_answer_to_an_edit_does_not_use_up_the_cap(store: Store) -> None:
    _cap(store, [_edit("a"), _edit("b")])
    failed: ReplyJob = next(j for j in store.transaction(jobs.due, T0, 10)
                            if j.key.endswith(":edit-a"))
    assert failed.target == "n1:edit-a"
    store.transaction(jobs.finish, failed.id, T0, JobState.FAILED, attempts=1, reason="boom")
    assert _cap(store, [_edit("c")]) == (["c"], [])
