"""How a configuration problem is told: one line, `key.path: message`, nothing secret in it.

A config error once echoed a whole `[hosts]` table with its token. So a message never shows a
table or a list, nor the value of a key whose name looks secret, nor a string that looks like
a token wherever it sits; other values are short and escaped (one line, no control or
direction-changing characters).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only `describe` meets pydantic's errors; the rest is plain (settings/light.py)
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

# A key whose name has a word like these holds (or names) a secret; `max_output_tokens`
# counts tokens and is not one.
_SECRET_WORD = re.compile(r"token|\w*key|pwd|\w*(passw|secret|credential)\w*", re.IGNORECASE)
# Well-known token prefixes (GitLab, GitHub, OpenAI, Slack, AWS, Atlassian, JWT), and long
# random-looking runs: upper case, lower case and digits mixed, or long hex.
_TOKEN = re.compile(
    r"(?:gl(?:pat|oas|dt|rt|cbt|ptt|ft|imt|agent|soat|ffct|tst)-|gh[pousr]_|github_pat_|sk-"
    r"|xox[abprs]-|AKIA|ATBB|ATATT|eyJ)[A-Za-z0-9_\-.]{4,}"
    r"|(?=[A-Za-z0-9_\-+=]*[a-z])(?=[A-Za-z0-9_\-+=]*[A-Z])(?=[A-Za-z0-9_\-+=]*[0-9])"
    r"[A-Za-z0-9_\-+=]{20,}"
    r"|[0-9a-fA-F]{32,}")
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]{1,40}")
SHORT = 40


class ConfigError(Exception):
    """A configuration problem, already phrased for the operator (one line)."""


class Rank(IntEnum):
    """Which problem is reported first: a misspelt key before the value it leaves missing,
    and a wrong value before a missing one (the wrong one is what the operator just wrote)."""

    UNKNOWN = 0
    WRONG = 1
    MISSING = 2


class Invalid(ValueError):
    """A rule a value broke, phrased for the operator. `at` names keys below the one being
    validated (a model validator's error belongs to one of its keys)."""

    def __init__(self, message: str, *at: str | int, rank: Rank = Rank.WRONG) -> None:
        super().__init__(message)
        self.message, self.at, self.rank = message, at, rank


def secret_key(name: str) -> bool:
    words = re.findall(r"[a-z0-9]+|[A-Z][a-z0-9]*", name)  # snake_case, kebab-, camelCase
    return any(_SECRET_WORD.fullmatch(word) for word in words)


def looks_like_token(text: str) -> bool:
    return _TOKEN.search(text) is not None


def redact(text: str) -> str:
    return _TOKEN.sub("***", text)


def one_line(text: str) -> str:
    """Line breaks of any kind become spaces; other invisible characters are dropped."""
    text = " ".join(text.splitlines())
    return "".join(c for c in text if c.isprintable())


def plain(text: str, limit: int = 200) -> str:
    """`text` as is when it is short, printable and not token-like (paths, variable names);
    else as `shown` would put it."""
    if len(text) <= limit and text.isprintable() and not looks_like_token(text):
        return text
    return shown(text)


def _kind(value: object) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}
    return next((name for t, name in names.items() if type(value) is t), "a value")


def shown(value: object, *, secret: bool = False) -> str:
    """A value as an error message may show it: tables and lists by their kind only, secret
    keys' values by their type only, strings escaped and cut short."""
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    if secret:
        return _kind(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        # repr() of a 5 000-digit integer raises; TOML itself stops at 64 bits.
        return str(value) if value.bit_length() <= 128 else "a huge integer"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()[:SHORT]
    if isinstance(value, str):
        if looks_like_token(value):
            return "a string that looks like a secret"
        return repr(value if len(value) <= SHORT else value[: SHORT - 1] + "…")
    return _kind(value)


def number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def key_path(loc: Sequence[str | int]) -> str:
    """('hosts', 0, 'url') → hosts[0].url; odd key names are quoted, secret-like ones hidden."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
            continue
        if looks_like_token(part):
            name = "<a key that looks like a secret>"
        elif _PLAIN_KEY.fullmatch(part):
            name = part
        else:
            name = shown(part)
        path += f".{name}" if path else name
    return path


_TYPE_MESSAGES = {
    "int_type": "expected int", "float_type": "expected float", "bool_type": "expected bool",
    "string_type": "expected str", "tuple_type": "expected list", "list_type": "expected list",
    "model_type": "expected a table", "dict_type": "expected a table",
    "model_attributes_type": "expected a table", "finite_number": "expected a finite number",
}


@dataclass(frozen=True)
class _Problem:
    path: str
    message: str
    rank: Rank


def _problem(error: ErrorDetails) -> _Problem:
    loc: tuple[str | int, ...] = tuple(error["loc"])
    kind = error["type"]
    cause = error.get("ctx", {}).get("error")
    if kind == "value_error" and isinstance(cause, Invalid):
        return _Problem(key_path(loc + cause.at), cause.message, cause.rank)
    if kind == "extra_forbidden":
        return _Problem(key_path(loc), "unknown key", Rank.UNKNOWN)
    if kind == "missing":
        return _Problem(key_path(loc), "is required", Rank.MISSING)
    secret = any(isinstance(p, str) and secret_key(p) for p in loc)
    got = shown(error.get("input"), secret=secret)
    if kind in _TYPE_MESSAGES:
        return _Problem(key_path(loc), f"{_TYPE_MESSAGES[kind]}, got {got}", Rank.WRONG)
    # Pydantic's own wording for anything else; its messages name rules, not inputs.
    return _Problem(key_path(loc), f"{error['msg']}, got {got}", Rank.WRONG)


def describe(error: ValidationError) -> str:
    """The one problem to report: the first of the highest rank, in the order of the file's
    sections and keys."""
    problems = [_problem(e) for e in error.errors(include_url=False)]
    first = min(problems, key=lambda p: p.rank)
    return one_line(redact(f"{first.path or 'the file'}: {first.message}"))
