"""A failure that repeats is said once per cause while it lasts, and once when it is over
(log_setup.FailureLog: the store, the pollers, the job slots and the worker say theirs so)."""

from __future__ import annotations

import structlog
from hypothesis import given
from hypothesis import strategies as st

from livereview.log_setup import CAUSES_KEPT, FailureLog


def test_a_cause_that_comes_back_within_a_failure_is_not_said_again() -> None:
    """A full disk whose cycles now and then meet a locked database: said full and locked
    once each, not full again after each lock."""
    failures = FailureLog(structlog.get_logger("test"))
    with structlog.testing.capture_logs() as logs:
        for _ in range(3):
            failures.failed("store", "store_unavailable", "disk full")
            failures.failed("store", "store_unavailable", "locked")
        assert failures.failing("store") == "locked"
        failures.ok("store", "store_unavailable")
        failures.failed("store", "store_unavailable", "disk full")  # a new failure
    assert [(e["event"], e.get("reason")) for e in logs] == [
        ("store_unavailable", "disk full"), ("store_unavailable", "locked"),
        ("store_unavailable_recovered", None), ("store_unavailable", "disk full")]


@given(st.lists(st.sampled_from("abcdefgh"[:CAUSES_KEPT]), max_size=40))
def test_a_failure_is_said_at_most_once_per_cause_it_has_while_it_lasts(
        causes: list[str]) -> None:
    failures = FailureLog(structlog.get_logger("test"))
    with structlog.testing.capture_logs() as logs:
        for cause in causes:
            failures.failed("store", "store_unavailable", cause)
    said = [entry["reason"] for entry in logs]
    assert said == list(dict.fromkeys(said))  # eight causes: all kept
    assert set(said) == set(causes) and (not causes or failures.failing("store") == causes[-1])


def test_a_failure_keeps_its_latest_causes_not_every_one() -> None:
    """A cause that counts ("retry 12 of …") would grow the memory without end: the ninth
    new cause pushes the first out, and the first is then said again."""
    failures = FailureLog(structlog.get_logger("test"))
    causes = [f"cause {n}" for n in range(CAUSES_KEPT + 1)]
    with structlog.testing.capture_logs() as logs:
        for cause in [*causes, causes[1], causes[0]]:
            failures.failed("store", "store_unavailable", cause)
    assert [entry["reason"] for entry in logs] == [*causes, causes[0]]
