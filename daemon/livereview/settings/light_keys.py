"""The keys the light reader knows (settings/light.py): one frozen dataclass per section,
each field a key with its default, its TOML type and the very rules its model applies
(settings/checks.py, host_rules.py, section_rules.py).

Defaults and bounds are written here a second time, beside the models': a test
(tests/unit/test_settings_light_drift.py) compares each field's name, default, bounds,
choices and rules with its model's, so a setting added or changed in a model without
teaching this reader fails CI (docs/getting-started.md, "A CLI for loops").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")
SPEC = "light"


class Unproven(Exception):
    """A value the light reader does not take on trust: the models decide (and say why)."""


@dataclass(frozen=True)
class Spec:
    """How a key is read: `check` takes the TOML value (or the default) to the field's
    value; `rules` are the model's own rules it applies, for the drift test."""

    check: Callable[[object], object]
    rules: tuple[object, ...]
    required: bool
    derived: bool = False  # set by the reader (a token, the API key), never by the file


def key(default: T, read: Callable[[object], T], *rules: Callable[[T], T],
        required: bool = False) -> T:
    def check(raw: object) -> object:
        value = read(raw)
        for rule in rules:
            value = rule(value)
        return value

    spec = Spec(check, rules, required)
    return field(default=default, metadata={SPEC: spec})


def derived(default: T) -> T:
    def refuse(raw: object) -> object:
        raise Unproven

    return field(default=default, metadata={SPEC: Spec(refuse, (), False, derived=True)})


# ---- TOML types, as the models' strict mode takes them -------------------------------------
def text(raw: object) -> str:
    if type(raw) is not str:
        raise Unproven
    return raw


def integer(raw: object) -> int:
    if type(raw) is not int:  # a boolean is not a count
        raise Unproven
    return raw


def number(raw: object) -> float:
    # An integer is a number (and becomes a float), a boolean is not; no NaN, no infinity.
    # An integer a float cannot hold exactly (TOML's have any size) is left to the models:
    # math.isfinite would raise on one too big for a float.
    if type(raw) is int and abs(raw) <= 2**53:
        return float(raw)
    if type(raw) is not float or not math.isfinite(raw):
        raise Unproven
    return raw


def boolean(raw: object) -> bool:
    if type(raw) is not bool:
        raise Unproven
    return raw


def strings(raw: object) -> tuple[str, ...]:
    if not isinstance(raw, list | tuple) or not all(type(item) is str for item in raw):
        raise Unproven
    return tuple(raw)


def text_or_none(raw: object) -> str | None:
    return None if raw is None else text(raw)


@dataclass(frozen=True)
class WhenText:
    """Rules of an optional string's text (`Annotated[Required, at_most(64)] | None`)."""

    rules: tuple[Callable[[str], str], ...]

    def __call__(self, value: str | None) -> str | None:
        if value is None:
            return None
        for rule in self.rules:
            value = rule(value)
        return value

