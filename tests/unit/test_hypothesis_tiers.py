"""The fast tier runs each property on a fifth of its examples; the full run, what CI runs,
on all of them (tests/hypothesis_tiers.py)."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.hypothesis_tiers import FAST, examples

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def profile() -> Iterator[None]:
    """Whatever a test loads, the run's own profile is back after it."""
    before = settings.get_current_profile_name()
    yield
    settings.load_profile(before)


@pytest.mark.usefixtures("profile")
def test_a_property_runs_the_count_it_names_under_the_default_profile() -> None:
    settings.load_profile("default")
    assert [examples(n) for n in (20, 60, 100, 400)] == [20, 60, 100, 400]
    assert settings().max_examples == 100


@pytest.mark.usefixtures("profile")
def test_the_fast_profile_runs_a_fifth_and_never_none() -> None:
    settings.load_profile(FAST)
    assert [examples(n) for n in (1, 20, 60, 100, 400)] == [1, 4, 12, 20, 80]
    assert settings().max_examples == 20


def test_the_fast_tier_loads_the_fast_profile_and_any_other_run_the_default(
        pytestconfig: pytest.Config) -> None:
    named = pytestconfig.getoption("hypothesis_profile")
    fast = pytestconfig.option.markexpr == "not slow"
    current = settings.get_current_profile_name()
    if named or fast:
        assert current == (named or FAST)
    else:  # hypothesis's own: "ci" where it sees a CI (CI=true, as .ci/run's caller sets)
        assert current in ("default", "ci")
        assert settings().max_examples == 100


def test_ci_runs_the_full_tier_only() -> None:
    """`.ci/run` never selects the fast tier, so its properties run at full strength."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8").replace("\\\n", " ")
    commands = [shlex.split(line, comments=True) for line in script.splitlines()
                if "-m pytest" in line]
    assert commands, "no pytest command in .ci/run"
    for words in commands:
        tiers = [words[i + 1] for i, word in enumerate(words[:-1]) if word == "-m"][1:]
        assert "not slow" not in tiers, words
        assert not any(word.startswith("--hypothesis-profile") for word in words), words


@pytest.mark.usefixtures("profile")
@pytest.mark.parametrize("name", ["default", FAST, "ci"])
def test_no_profile_a_run_loads_has_a_deadline_a_loaded_machine_could_miss(name: str) -> None:
    settings.load_profile(name)
    assert settings().deadline is None
    assert HealthCheck.too_slow in settings().suppress_health_check
