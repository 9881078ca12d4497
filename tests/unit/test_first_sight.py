"""Which listed MRs a first sight reads (docs/DESIGN.md §6, "First sight"): properties."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from livereview.core.model import ChangedMR, MRKey
from livereview.sync.first_sight import by_recency, to_read

NOW = datetime(2026, 11, 27, 6, 0, tzinfo=UTC)
OVERLAP = timedelta(seconds=120)
REPOS = ("a/one", "a/two")
BASELINES = {"a/one": NOW - timedelta(hours=24), "a/two": NOW - timedelta(minutes=1)}

moments = st.integers(min_value=-3 * 86_400, max_value=0).map(
    lambda s: NOW + timedelta(seconds=s))
listed = st.lists(st.tuples(st.sampled_from(REPOS), st.integers(1, 40), moments),
                  unique_by=lambda t: (t[0], t[1]), max_size=30)


@st.composite
def situations(draw: st.DrawFn) -> tuple[list[ChangedMR], dict[MRKey, tuple[datetime, datetime]],
                                         dict[MRKey, datetime]]:
    changed = [ChangedMR(repo, iid, at) for repo, iid, at in draw(listed)]
    keys = [MRKey("gl", mr.repo, mr.iid) for mr in changed]
    stored = draw(st.lists(st.sampled_from(keys), unique=True)) if keys else []
    marks = {key: (draw(moments), draw(moments)) for key in stored}
    sighted_keys = draw(st.lists(st.sampled_from(keys), unique=True)) if keys else []
    sighted = {key: draw(moments) for key in sighted_keys if key not in marks}
    return changed, marks, sighted


@given(situations())
def test_an_mr_is_left_unread_only_when_every_note_it_can_hold_is_older_than_the_baseline(
        situation: tuple[list[ChangedMR], dict[MRKey, tuple[datetime, datetime]],
                         dict[MRKey, datetime]]) -> None:
    changed, marks, sighted = situation
    targets, idle = to_read("gl", changed, marks, sighted, BASELINES, OVERLAP)
    for mr in changed:
        key = MRKey("gl", mr.repo, mr.iid)
        if key in marks:  # stored MRs: the watermark rule as before, sightings aside
            seen, fetched = marks[key]
            assert (key in targets) == (seen != mr.updated_at
                                        or fetched < mr.updated_at + OVERLAP)
        elif mr.updated_at + OVERLAP > BASELINES[mr.repo]:  # may hold a note to answer
            assert targets[key] == mr.updated_at
        else:  # idle since before the baseline: never read, kept (once) as a sighting
            assert key not in targets
            assert ((key, mr.updated_at) in idle) == (sighted.get(key) != mr.updated_at)


@given(st.dictionaries(st.integers(1, 50), moments, max_size=20),
       st.sets(st.integers(51, 60), max_size=5))
def test_mrs_not_from_the_listing_come_first_then_the_most_recently_updated(
        listed_at: dict[int, datetime], others: set[int]) -> None:
    recency = {MRKey("gl", "a/one", iid): at for iid, at in listed_at.items()}
    keys = set(recency) | {MRKey("gl", "a/one", iid) for iid in others}
    order = by_recency(keys, recency)
    assert set(order[:len(others)]) == {MRKey("gl", "a/one", iid) for iid in others}
    times = [recency[key] for key in order[len(others):]]
    assert times == sorted(times, reverse=True)
