"""The rules of config values that need no pydantic: bounds, choices, lengths, required
strings, URLs and database URLs.

The settings models apply them through their fields' metadata (settings/rules.py), and the
light reader of `livereview mr` (settings/light.py) calls the very same functions, so that a
rule changed here changes both (docs/getting-started.md, "A CLI for loops"). Each raises
`Invalid` with the operator's wording; `errors.describe` adds the key path.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from livereview.settings.errors import Invalid, Rank, number, shown

if TYPE_CHECKING:  # pydantic is imported only when a model is built from these
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

N = TypeVar("N", int, float)


def _after(check: object, source: type, handler: GetCoreSchemaHandler) -> CoreSchema:
    from pydantic_core import core_schema

    assert callable(check)
    return core_schema.no_info_after_validator_function(check, handler(source))


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
        return _after(self.check, source, handler)


@dataclass(frozen=True)
class OneOf:
    """A string among `choices`, as field metadata (`Annotated[str, OneOf(("a", "b"))]`)."""

    choices: tuple[str, ...]

    def check(self, value: str) -> str:
        if value not in self.choices:
            listed = ", ".join(self.choices[:-1]) + f" or {self.choices[-1]}"
            raise Invalid(f"expected {listed}, got {shown(value)}")
        return value

    def __get_pydantic_core_schema__(self, source: type, handler: GetCoreSchemaHandler
                                     ) -> CoreSchema:
        return _after(self.check, source, handler)


@dataclass(frozen=True)
class AtMost:
    """A string of at most `length` characters, as field metadata."""

    length: int

    def check(self, value: str) -> str:
        if len(value) > self.length:
            raise Invalid(f"must be at most {self.length} characters, got {len(value)}")
        return value

    def __get_pydantic_core_schema__(self, source: type, handler: GetCoreSchemaHandler
                                     ) -> CoreSchema:
        return _after(self.check, source, handler)


def required(value: str) -> str:
    if not value.strip():
        raise Invalid("is required", rank=Rank.MISSING)
    return value


def non_empty_strings(values: tuple[str, ...]) -> tuple[str, ...]:
    if not all(values):
        raise Invalid("expected a list of non-empty strings")
    return values


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
