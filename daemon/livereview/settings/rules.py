"""Reusable rules for config values: bounds, required strings, choices, URLs, TOML lists.

Each raises `Invalid` with the operator's wording; `errors.describe` adds the key path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, TypeVar
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

from livereview.settings.errors import Invalid, Rank, number, shown

T = TypeVar("T")
N = TypeVar("N", int, float)


def _as_tuple(value: object) -> object:
    # TOML arrays arrive as lists; the settings are frozen, so they hold tuples. Anything else
    # (a string, a table) is left for the tuple check to refuse as "expected list".
    return tuple(value) if isinstance(value, list) else value


TomlList = Annotated[tuple[T, ...], BeforeValidator(_as_tuple)]


@dataclass(frozen=True)
class Between:
    """Inclusive bounds for a number, as field metadata (`Annotated[float, Between(1, 60)]`)
    that tests can find on every numeric field. `why` explains a lower bound that is not
    obvious."""

    low: float
    high: float
    why: str = ""

    def check(self, value: N) -> N:
        if self.low <= value <= self.high:
            return value
        allowed = f"range {number(self.low)} to {number(self.high)}"
        if value > self.high:
            raise Invalid(f"must be <= {number(self.high)}, got {shown(value)} ({allowed})")
        if value <= 0 < self.low:
            raise Invalid(f"must be > 0, got {shown(value)} ({allowed})")
        raise Invalid(f"must be >= {number(self.low)}, got {shown(value)} "
                      f"({self.why or allowed})")

    def __get_pydantic_core_schema__(self, source: type, handler: GetCoreSchemaHandler
                                     ) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))


def _required(value: str) -> str:
    if not value.strip():
        raise Invalid("is required", rank=Rank.MISSING)
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
    """A URL as an error may show it: anything up to the last `@` (`user:password@`) dropped.
    No parsing: this also serves URLs that do not parse."""
    return re.sub(r"^([A-Za-z][\w+.-]*://).*@", r"\1", url, flags=re.DOTALL)


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


def database_url(url: str) -> str:
    """A database the daemon can keep: a SQLite file (`sqlite:///PATH`) or PostgreSQL.
    `sqlite://HOST/…` is no file SQLite can open, and an in-memory database (`sqlite://`,
    `sqlite:///:memory:`) is gone when the process ends: a copy to it would report success
    and keep nothing."""
    expected = ("expected sqlite:///PATH or postgresql+psycopg://USER@HOST/DB, got "
                f"{shown(without_userinfo(url))}")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise Invalid(expected) from None
    scheme = parts.scheme.lower()
    if scheme.startswith("postgresql"):
        return url
    if scheme not in ("sqlite", "sqlite+pysqlite"):
        raise Invalid(expected)
    if parts.netloc:
        raise Invalid(f"a SQLite database is a file, sqlite:///PATH (three slashes), got "
                      f"{shown(without_userinfo(url))}")
    if parts.path.lstrip("/") in ("", ":memory:") or "mode=memory" in parts.query:
        raise Invalid(f"an in-memory SQLite database keeps nothing, got {shown(url)}")
    return url
