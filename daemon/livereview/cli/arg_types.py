"""Argument types the commands share: a bad value is one line and exit 2 (argparse calls
the parser's `error`), never a number the database or the host cannot take.

`int` took `99999999999999999999999` as an id, and the database answered with an
OverflowError (SQLite stores 64-bit integers); `float` took `nan` as a timeout, which never
runs out.
"""

from __future__ import annotations

import argparse
import math
import re

from livereview.tools.errors import MAX_ID


def row_id(text: str) -> int:
    """An id of something stored: 1 … 2**63 - 1."""
    value = _integer(text)
    if not 1 <= value <= MAX_ID:
        raise argparse.ArgumentTypeError(f"expected an id from 1 to {MAX_ID}, got {text[:40]!r}")
    return value


def seconds(text: str) -> float:
    """A duration: finite and not negative (at most a year)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text[:40]!r}") from None
    if not math.isfinite(value) or not 0 <= value <= 366 * 86_400:
        raise argparse.ArgumentTypeError(
            f"expected seconds from 0 to {366 * 86_400}, got {text[:40]!r}")
    return value


_INTEGER = re.compile(r"[+-]?[0-9]{1,30}")


def _integer(text: str) -> int:
    if not _INTEGER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:40]!r}")
    return int(text)
