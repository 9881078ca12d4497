"""The settings models' reusable field types: bounds, required strings, choices, URLs, TOML
lists. The rules themselves are plain functions in settings/checks.py (shared with the light
reader, settings/light.py); here they become pydantic field metadata.
"""

from __future__ import annotations

from typing import Annotated, TypeVar

from pydantic import AfterValidator, BeforeValidator

from livereview.settings.checks import (
    AtMost,
    Between,
    OneOf,
    database_url,
    http_url,
    non_empty_strings,
    required,
    without_userinfo,
)

T = TypeVar("T")

__all__ = ["AtMost", "Between", "HttpUrl", "OneOf", "Required", "TomlList", "at_most",
           "database_url", "http_url", "non_empty_strings", "one_of", "required",
           "without_userinfo"]


def as_tuple(value: object) -> object:
    # TOML arrays arrive as lists; the settings are frozen, so they hold tuples. Anything else
    # (a string, a table) is left for the tuple check to refuse as "expected list".
    return tuple(value) if isinstance(value, list) else value


TomlList = Annotated[tuple[T, ...], BeforeValidator(as_tuple)]
Required = Annotated[str, AfterValidator(required)]
HttpUrl = Annotated[str, AfterValidator(http_url)]


def one_of(*choices: str) -> OneOf:
    return OneOf(choices)


def at_most(length: int) -> AtMost:
    return AtMost(length)
