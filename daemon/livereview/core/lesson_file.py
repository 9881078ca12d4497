"""A lessons file: what `livereview lessons import` reads and `lessons export` writes
(docs/lessons-file.md). Pure: text in, lessons out.

TOML (`[[lessons]]` tables) or JSON (`{"lessons": [...]}` or a bare list). Every entry is
checked before any is stored: a missing or empty `key`/`value`, a field of the wrong type,
an unknown field (a typo would otherwise be dropped silently), a bad `scope` or `status`
is a `LessonFileError` naming the entry (`lessons[2]`, from 0), the field and, for TOML,
the line.
"""

from __future__ import annotations

import json
import re
import tomllib

from livereview.core.lessons import STATUSES, valid_scope
from livereview.core.model import Lesson

FIELDS = ("key", "value", "scope", "status", "source_message_id", "created_by")
REQUIRED = ("key", "value")
DOCS = "docs/lessons-file.md"
_TABLE = re.compile(r"\s*\[\[\s*lessons\s*\]\]\s*(#.*)?$")


class LessonFileError(ValueError):
    """A file `lessons import` refuses; `str()` is the one line to show."""


def read(text: str, json_format: bool) -> list[Lesson]:
    """Every lesson of the file, or LessonFileError for the first bad entry."""
    try:
        if json_format:
            data = json.loads(text)
            items = data.get("lessons") if isinstance(data, dict) else data
        else:
            items = tomllib.loads(text).get("lessons")
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise LessonFileError(f"not {'JSON' if json_format else 'TOML'}: {exc}") from None
    if not isinstance(items, list):
        raise LessonFileError("expected a list of lessons: TOML [[lessons]] tables, or JSON "
                              '{"lessons": [...]} (see ' + DOCS + ")")
    tables = [] if json_format else _tables(text)
    lines = tables if len(tables) == len(items) else []
    return [_lesson(index, item, text, lines) for index, item in enumerate(items)]


def _lesson(index: int, item: object, text: str, tables: list[tuple[int, int]]) -> Lesson:
    def refuse(field: str, reason: str) -> LessonFileError:
        where = f"lessons[{index}]" + (f".{field}" if field else "")
        line = _line_of(text, tables[index], field) if tables else None
        return LessonFileError(where + (f" (line {line})" if line else "") + f": {reason}")

    if not isinstance(item, dict):
        raise refuse("", "expected a table of fields (key, value, …)")
    for name in item:
        if name not in FIELDS:
            raise refuse(str(name), f"unknown field (fields: {', '.join(FIELDS)})")
    for name in FIELDS:
        if name in item and not isinstance(item[name], str):
            raise refuse(name, f"expected a string, got {type(item[name]).__name__}")
    for name in REQUIRED:
        if not str(item.get(name, "")).strip():
            raise refuse(name, "required, a non-empty string")
    scope, status = str(item.get("scope", "global")), str(item.get("status", "proposed"))
    if not valid_scope(scope):
        raise refuse("scope", "expected repo:<host>:<path>, group:<host>:<path> or global, "
                              f"got {scope!r}")
    if status not in STATUSES:
        raise refuse("status", f"expected one of {', '.join(STATUSES)}, got {status!r}")
    return Lesson(key=str(item["key"]), value=str(item["value"]), scope=scope, status=status,
                  source_message_id=str(item.get("source_message_id", "")),
                  created_by=str(item.get("created_by", "")))


def _tables(text: str) -> list[tuple[int, int]]:
    """Each `[[lessons]]` table's first and last line (1-based), outside multi-line strings;
    only used when there is one per entry (an inline array has none)."""
    starts: list[int] = []
    quote = ""
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if not quote and _TABLE.match(line):
            starts.append(number)
        for mark in ('"""', "'''"):
            if (not quote or quote == mark) and line.count(mark) % 2:
                quote = "" if quote else mark
    ends = [*(start - 1 for start in starts[1:]), len(lines)] if starts else []
    return list(zip(starts, ends, strict=True))


def _line_of(text: str, table: tuple[int, int], field: str) -> int:
    """The line of `field = …` within the table, else the table's own line."""
    first, last = table
    if field:
        pattern = re.compile(rf"\s*[\"']?{re.escape(field)}[\"']?\s*=")
        for number, line in enumerate(text.splitlines()[first:last], first + 1):
            if pattern.match(line):
                return number
    return first
