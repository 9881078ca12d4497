"""How many examples each property runs, per tier (docs/development.md, "The fast tier").

The full run (the README's command, `.ci/run`) keeps hypothesis's default profile: 100
examples, and the counts a test names. The fast tier, `pytest -m "not slow"`, loads the
`fast` profile (tests/conftest.py does, unless `--hypothesis-profile` names another): a
fifth of those, so every property still runs, on fewer examples. A test naming its count
writes `max_examples=examples(N)`: N in the full run, scaled with the profile's count.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

DEFAULT_EXAMPLES = 100  # hypothesis's own default: the counts tests name are relative to it
FAST = "fast"
# No outcome may depend on the machine's speed: hypothesis's 200 ms deadline per example
# failed a property on a loaded 2-core machine (`DeadlineExceeded`, 237 ms), and its
# `too_slow` health check times how long examples take to generate. Its own `ci` profile,
# which CI=true loads, has no deadline either. Registering over the active profile takes
# effect at once.
SLOW_IS_FINE = [HealthCheck.too_slow]
settings.register_profile("default", deadline=None, suppress_health_check=SLOW_IS_FINE)
settings.register_profile("ci", settings.get_profile("ci"), deadline=None,
                          suppress_health_check=SLOW_IS_FINE)
settings.register_profile(FAST, max_examples=DEFAULT_EXAMPLES // 5, deadline=None,
                          suppress_health_check=SLOW_IS_FINE)


def examples(full: int) -> int:
    """`full` under the default profile; under another, scaled as its count is (at least 1).

    Read when a test module is imported: after tests/conftest.py loaded the tier's profile."""
    return max(1, full * settings().max_examples // DEFAULT_EXAMPLES)
