"""Reusable rules for config values: bounds, required strings, choices, URLs, TOML lists.

Each raises `Invalid` with the operator's wording; `errors.describe` adds the key path.
"""

from __future__ import annotations

from typing import Annotated, TypeVar
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator

from livereview.settings.errors import Invalid, number, shown

T = TypeVar("T")
N = TypeVar("N", int, float)


def _as_tuple(value: object) -> object:
    # TOML arrays arrive as lists; the settings are frozen, so they hold tuples. Anything else
    # (a string, a table) is left for the tuple check to refuse as "expected list".
    return tuple(value) if isinstance(value, list) else value


TomlList = Annotated[tuple[T, ...], BeforeValidator(_as_tuple)]


def between(low: float, high: float, why: str = "") -> AfterValidator:
    """Inclusive bounds. `why` explains the lower bound when it is not obvious."""
    allowed = f"range {number(low)} to {number(high)}"

    def check(value: N) -> N:
        if low <= value <= high:
            return value
        if value > high:
            raise Invalid(f"must be <= {number(high)}, got {shown(value)} ({allowed})")
        if value <= 0 < low:
            raise Invalid(f"must be > 0, got {shown(value)} ({allowed})")
        raise Invalid(f"must be >= {number(low)}, got {shown(value)} ({why or allowed})")

    return AfterValidator(check)


def _required(value: str) -> str:
    if not value.strip():
        raise Invalid("is required")
    return value


Required = Annotated[str, AfterValidator(_required)]


def one_of(*choices: str) -> AfterValidator:
    def check(value: str) -> str:
        if value not in choices:
            listed = ", ".join(choices[:-1]) + f" or {choices[-1]}"
            raise Invalid(f"expected {listed}, got {shown(value)}")
        return value

    return AfterValidator(check)


def at_most(length: int) -> AfterValidator:
    def check(value: str) -> str:
        if len(value) > length:
            raise Invalid(f"must be at most {length} characters, got {len(value)}")
        return value

    return AfterValidator(check)


def without_userinfo(url: str) -> str:
    """A URL as an error may show it: `user:password@` dropped."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()


def http_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a port out of range or not a number
    except ValueError:
        raise Invalid(f"expected an http(s) URL, got {shown(without_userinfo(url))}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Invalid(f"expected an http(s) URL, got {shown(without_userinfo(url))}")
    if "@" in parts.netloc:
        raise Invalid("must not carry credentials (user:password@): the token comes from "
                      "token_env or token_file")
    return url.rstrip("/")


HttpUrl = Annotated[str, AfterValidator(http_url)]
