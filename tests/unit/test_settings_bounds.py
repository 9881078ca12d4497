"""Every number in the config has a lower and an upper bound, and the docs say which.

0.0001 s was once accepted (about 550 requests in 4 s) and 99999999999999999999 passed only to
raise OverflowError at run time. The bounds are found on the models themselves, so a new
numeric key without bounds, or bounds the configuration reference (docs/configuration.md,
generated from these models) or the example config does not state, fails here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from livereview.settings import (
    AISettings,
    AnswerSettings,
    BotSettings,
    ConfigError,
    DaemonSettings,
    HostSettings,
    ReviewSettings,
    parse,
)
from livereview.settings.rules import Between

ROOT = Path(__file__).parents[2]
ENV = {"T": "x", "OPENAI_API_KEY": "k"}
HOST = {"name": "gl", "type": "gitlab", "url": "https://gitlab.example", "token_env": "T"}
SECTIONS: dict[str, type[BaseModel]] = {
    "daemon": DaemonSettings, "bot": BotSettings, "ai": AISettings, "hosts[]": HostSettings,
    "answers": AnswerSettings}
# Keys whose extreme values need a companion to stay consistent (hot <= cold interval,
# job timeout >= step timeout).
COMPANIONS: dict[str, dict[str, float]] = {
    "hot_poll_interval_seconds": {"poll_interval_seconds": 86_400},
    "poll_interval_seconds": {"hot_poll_interval_seconds": 1},
    "step_timeout_seconds": {"job_timeout_seconds": 7200},
    "job_timeout_seconds": {"step_timeout_seconds": 1},
}


def numeric_fields() -> list[tuple[str, str, type, Between]]:
    found: list[tuple[str, str, type, Between]] = []
    for section, model in SECTIONS.items():
        for name, info in model.model_fields.items():
            if info.annotation in (int, float):
                bounds = [m for m in info.metadata if isinstance(m, Between)]
                assert bounds, f"{section}.{name} is a number without bounds"
                found.append((section, name, int if info.annotation is int else float,
                              bounds[0]))
    return found


NUMBERS = numeric_fields()
IDS = [f"{section}.{name}" for section, name, _, _ in NUMBERS]


def config(section: str, values: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {"hosts": [HOST], "repos": [{"host": "gl", "path": "a/b"}]}
    if section == "hosts[]":
        data["hosts"] = [{**HOST, **values}]
    else:
        data[section] = values
    return data


def with_value(section: str, name: str, value: object) -> dict[str, Any]:
    return config(section, {**COMPANIONS.get(name, {}), name: value})


def attribute(section: str, settings: Any, name: str) -> object:
    part = settings.hosts[0] if section == "hosts[]" else getattr(settings, section)
    return getattr(part, name)


def error(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        parse(data, ENV)
    message = str(caught.value)
    assert "\n" not in message
    return message


def key(section: str, name: str) -> str:
    return f"hosts[0].{name}" if section == "hosts[]" else f"{section}.{name}"


def test_the_numbers_are_found_on_the_models() -> None:
    assert {"daemon.poll_interval_seconds", "bot.max_reply_chars", "ai.temperature",
            "hosts[].request_timeout_seconds"} <= set(IDS)


@pytest.mark.parametrize(("section", "name", "kind", "bounds"), NUMBERS, ids=IDS)
def test_both_bounds_are_accepted(section: str, name: str, kind: type,
                                  bounds: Between) -> None:
    for value in (bounds.low, bounds.high):
        typed = kind(value)
        settings = parse(with_value(section, name, typed), ENV)
        assert attribute(section, settings, name) == typed


@pytest.mark.parametrize(("section", "name", "kind", "bounds"), NUMBERS, ids=IDS)
def test_values_beyond_the_bounds_are_refused(section: str, name: str, kind: type,
                                              bounds: Between) -> None:
    step = 1 if kind is int else bounds.low / 10 or 0.001
    below, above = kind(bounds.low - step), kind(bounds.high + step)
    assert error(with_value(section, name, below)).startswith(
        f"{key(section, name)}: must be > 0" if below <= 0 < bounds.low
        else f"{key(section, name)}: must be >= ")
    assert error(with_value(section, name, above)).startswith(
        f"{key(section, name)}: must be <= ")


@pytest.mark.parametrize(("section", "name", "kind", "bounds"), NUMBERS, ids=IDS)
def test_absurd_numbers_are_one_line_not_an_overflow_at_run_time(
        section: str, name: str, kind: type, bounds: Between) -> None:
    assert error(with_value(section, name, 99999999999999999999)).startswith(
        f"{key(section, name)}: ")
    assert error(with_value(section, name, -(10 ** 400))).startswith(f"{key(section, name)}: ")
    for value in (float("nan"), float("inf"), float("-inf")):
        message = error(with_value(section, name, value))
        assert message.startswith(f"{key(section, name)}: expected ")


@pytest.mark.parametrize(("section", "name", "kind", "bounds"), NUMBERS, ids=IDS)
def test_booleans_and_strings_are_not_numbers(section: str, name: str, kind: type,
                                              bounds: Between) -> None:
    expected = "int" if kind is int else "float"
    assert error(with_value(section, name, True)) == f"{key(section, name)}: expected " \
                                                     f"{expected}, got true"
    assert error(with_value(section, name, "5")) == f"{key(section, name)}: expected " \
                                                    f"{expected}, got '5'"


@pytest.mark.parametrize(("section", "name"),
                         [(s, n) for s, n, kind, _ in NUMBERS if kind is int])
def test_counts_are_integers(section: str, name: str) -> None:
    assert error(with_value(section, name, 2.0)) == f"{key(section, name)}: expected int, got 2.0"


def test_the_hot_interval_is_not_slower_than_the_cold_one() -> None:
    assert error(config("daemon", {"poll_interval_seconds": 5,
                                   "hot_poll_interval_seconds": 6})) == (
        "daemon.hot_poll_interval_seconds: must be <= poll_interval_seconds (5), got 6")
    parse(config("daemon", {"poll_interval_seconds": 5, "hot_poll_interval_seconds": 5}), ENV)


def test_a_job_may_last_at_least_one_step() -> None:
    assert error(config("daemon", {"step_timeout_seconds": 300,
                                   "job_timeout_seconds": 200})) == (
        "daemon.job_timeout_seconds: must be >= step_timeout_seconds (300), got 200")


def test_shutdown_grace_fits_in_the_units_stop_timeout() -> None:
    unit = (ROOT / "systemd/livereview.service").read_text(encoding="utf-8")
    stop = re.search(r"^TimeoutStopSec=(\d+)$", unit, re.MULTILINE)
    assert stop is not None
    grace = next(m for m in DaemonSettings.model_fields["shutdown_grace_seconds"].metadata
                 if isinstance(m, Between))
    assert grace.high < float(stop[1])


@pytest.mark.parametrize(("section", "values"), [
    # What the test suite, the benchmarks and the demo configure: all sensible.
    ("daemon", {"hot_poll_interval_seconds": 0.2, "poll_interval_seconds": 2,
                "retry_base_seconds": 0.05, "shutdown_grace_seconds": 10,
                "busy_timeout_seconds": 0.5, "max_attempts": 1, "max_concurrent_jobs": 32}),
    ("daemon", {"hot_poll_interval_seconds": 1, "poll_interval_seconds": 5,
                "backfill_hours": 24}),
    ("bot", {"max_replies_per_mr_per_hour": 10_000, "automated_reply_seconds": 0.0}),
    ("ai", {"timeout_seconds": 10, "api_key_env": ""}),
    ("hosts[]", {"max_concurrent_requests": 16}),
])
def test_values_the_tests_and_benchmarks_use_are_accepted(section: str,
                                                           values: dict[str, Any]) -> None:
    parse(config(section, values), ENV)


def _number(value: float) -> str:
    return f"{value:f}".rstrip("0").rstrip(".")  # 2000000, 0.01: never 2e+06


def _range(bounds: Between) -> str:
    return f"{_number(bounds.low)}–{_number(bounds.high)}"


# Every table of the file with numbers in it, reviews' and knowledge's included.
DOCUMENTED = [*NUMBERS, *(
    ("review", name, int if info.annotation is int else float, bound)
    for name, info in ReviewSettings.model_fields.items()
    for bound in info.metadata if isinstance(bound, Between))]


@pytest.mark.parametrize(("section", "name", "kind", "bounds"), DOCUMENTED,
                         ids=[f"{s}.{n}" for s, n, _, _ in DOCUMENTED])
def test_the_configuration_reference_states_each_range(section: str, name: str, kind: type,
                                                       bounds: Between) -> None:
    reference = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    row = next((line for line in reference.splitlines()
                if line.startswith(f"| `{section}.{name}` |")), None)
    assert row is not None, f"docs/configuration.md: no row for {section}.{name}"
    assert f"| {_range(bounds)} |" in row
    assert ("integer" if kind is int else "number") in row


@pytest.mark.parametrize(("section", "name", "kind", "bounds"), NUMBERS, ids=IDS)
def test_the_example_config_states_each_range(section: str, name: str, kind: type,
                                              bounds: Between) -> None:
    example = (ROOT / "livereview.toml.example").read_text(encoding="utf-8")
    line = next((line for line in example.splitlines()
                 if re.match(rf"#? ?{name} = ", line)), None)
    assert line is not None, f"the example config does not show {name}"
    assert f"# {_range(bounds)}" in line



def test_bounds_hold_for_settings_built_in_code_too() -> None:
    with pytest.raises(ValidationError):
        HostSettings(name="gl", type="gitlab", url="https://gitlab.example",
                     max_concurrent_requests=0)
