"""The quiet-repo schedule (sync/quiet.py) keeps its promise for any number of repos and
any spacing of cycles: idle, a repo costs at most two requests per quiet interval (its
listing in the sweep, and its share of the dashboard reads), and no repo waits longer than
the quiet interval plus one cycle for its listing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from livereview.sync.quiet import QuietSchedule

START = datetime(2026, 5, 4, tzinfo=UTC)


@given(repos=st.integers(1, 500), quiet=st.floats(3, 600),
       gaps=st.lists(st.floats(3, 30), min_size=1, max_size=400))
def test_idle_requests_stay_within_two_per_repo_per_quiet_interval(
        repos: int, quiet: float, gaps: list[float]) -> None:
    schedule = QuietSchedule(quiet=timedelta(seconds=quiet), hot=timedelta(seconds=3))
    now, sweeps, feeds, last_sweep, longest = START, 0, 0, START, timedelta(0)
    schedule.swept(now)  # first sight, not counted
    for gap in gaps:
        now += timedelta(seconds=gap)
        if schedule.sweep_due(now):
            sweeps += 1
            longest = max(longest, now - last_sweep)
            last_sweep = now
            schedule.swept(now)
        elif schedule.feed_due(now, repos):
            feeds += 1
            schedule.fed(now)
    intervals = (now - START) / timedelta(seconds=quiet)
    assert sweeps * repos + feeds <= 2 * repos * (intervals + 1)
    assert longest <= timedelta(seconds=quiet + max(gaps))


def test_a_clock_set_back_makes_the_sweep_due_at_once() -> None:
    schedule = QuietSchedule(quiet=timedelta(seconds=60), hot=timedelta(seconds=3))
    schedule.swept(START)
    assert not schedule.sweep_due(START + timedelta(seconds=30))
    assert schedule.sweep_due(START - timedelta(seconds=1))
