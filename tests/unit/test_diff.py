from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from livereview.core.model import Event, EventKind, Reaction
from livereview.sync.diff import CommitsNotRead, diff, pushed
from tests.factories import ALICE, BOB, msg, snapshot, thread


def kinds(events: Iterable[Event]) -> list[tuple[str, str]]:
    return sorted((e.kind.value, e.message_id or e.thread_id) for e in events)


def test_first_sight_is_all_additions() -> None:
    snap = snapshot(thread("t1", msg("1"), msg("2", at=1)))
    assert kinds(diff(None, snap)) == [("comment_added", "1"), ("comment_added", "2")]


def test_identical_snapshots_yield_nothing() -> None:
    snap = snapshot(thread("t1", msg("1")))
    assert diff(snap, snap) == []


def test_added_edited_deleted() -> None:
    old = snapshot(thread("t1", msg("1"), msg("2", body="v1", at=1)), thread("t2", msg("3")))
    new = snapshot(thread("t1", msg("1"), msg("2", body="v2", at=1), msg("4", at=2)))
    assert kinds(diff(old, new)) == [
        ("comment_added", "4"), ("comment_deleted", "3"), ("comment_edited", "2")]


def test_reactions_added_and_removed() -> None:
    eyes = Reaction("eyes", BOB)
    old = snapshot(thread("t1", replace(msg("1"), reactions=(eyes,))))
    new = snapshot(thread("t1", replace(msg("1"), reactions=(Reaction("thumbsdown", ALICE),))))
    events = diff(old, new)
    assert [(e.kind, e.detail) for e in events] == [
        (EventKind.REACTION_ADDED, "thumbsdown:1"), (EventKind.REACTION_REMOVED, "eyes:2")]


def test_push_and_force_push() -> None:
    old = snapshot(head="c2", commits=("c2", "c1"))
    pushed = snapshot(head="c3", commits=("c3", "c2", "c1"))
    rebased = snapshot(head="d3", commits=("d3", "d1"))
    assert [e.kind for e in diff(old, pushed)] == [EventKind.COMMIT_PUSH]
    assert [e.kind for e in diff(old, rebased)] == [EventKind.FORCE_PUSH]


def test_resolved_reopened_and_state() -> None:
    old = snapshot(thread("t1", msg("1"), resolved=False), thread("t2", msg("2"), resolved=True))
    new = snapshot(thread("t1", msg("1"), resolved=True), thread("t2", msg("2"), resolved=False),
                   state="merged")
    assert kinds(diff(old, new)) == [
        ("mr_state_changed", ""), ("reopened", "t2"), ("resolved", "t1")]


bodies = st.dictionaries(st.sampled_from([str(i) for i in range(12)]),
                         st.sampled_from(["a", "b", "c"]), max_size=12)


def _snap(messages: dict[str, str]):  # type: ignore[no-untyped-def]
    return snapshot(thread("t1", *(msg(mid, body=b) for mid, b in sorted(messages.items()))))


@given(bodies, bodies)
def test_diff_accounts_for_every_message(before: dict[str, str], after: dict[str, str]) -> None:
    events = diff(_snap(before), _snap(after))
    by_kind = {k: {e.message_id for e in events if e.kind is k} for k in EventKind}
    assert by_kind[EventKind.COMMENT_ADDED] == after.keys() - before.keys()
    assert by_kind[EventKind.COMMENT_DELETED] == before.keys() - after.keys()
    assert by_kind[EventKind.COMMENT_EDITED] == {
        m for m in before.keys() & after.keys() if before[m] != after[m]}


@given(bodies)
def test_diff_against_itself_is_empty(messages: dict[str, str]) -> None:
    assert diff(_snap(messages), _snap(messages)) == []


def test_a_push_diffed_without_the_commits_that_tell_its_kind_is_refused_not_guessed() -> None:
    """A snapshot read without its commits (sync/commits.py) cannot say whether the old
    head is still among them: the poller reads them first; diff never guesses."""
    stored = snapshot(thread("t1", msg("1")))
    fresh = replace(stored, mr=replace(stored.mr, head_sha="new"), commits=None)
    assert pushed(stored, fresh) and not pushed(stored, replace(stored, commits=None))
    with pytest.raises(CommitsNotRead):
        diff(stored, fresh)
