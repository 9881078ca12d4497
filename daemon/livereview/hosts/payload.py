"""Reading a host's JSON field by field: a missing or mistyped field is a `BadResponse`
naming the endpoint and the field's path (`GET /api/v4/…/discussions: [0].notes[3].created_at
missing`), never a `KeyError` or `TypeError` from deep inside an adapter.

Adapters read every payload through `JsonObject`. It is a thin view over the decoded dict,
cheap enough for a thread of 100 000 notes: one small object per JSON object read, one
type check per field, and the path of a field is only spelled out when it is wrong.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from livereview.hosts.base import BadResponse

# Ids end up in request paths (`…/notes/<id>/award_emoji`): a token is one safe path segment.
_TOKEN = re.compile(r"[A-Za-z0-9_=-]+")
MAX_INT = 2**63 - 1  # what the store's integer columns hold


def _kind(value: object) -> str:
    """The JSON name of a decoded value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


# What no database can store: NUL (PostgreSQL's text refuses it) and lone surrogates (JSON's
# "\ud800" escapes; neither back end encodes them as UTF-8). One comment carrying either
# made its whole MR fail to sync, for good: every mention on it was lost.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(value: str) -> str:
    """`value` with what no database can store replaced by U+FFFD."""
    return _UNSTORABLE.sub("\ufffd", value) if _UNSTORABLE.search(value) else value


# Where a value sits: a field name, an index in a top-level list, or (field, index).
Key = str | int | tuple[str, int]


MIN_YEAR, MAX_YEAR = 1970, 2999


class JsonObject:
    """A JSON object of one response, read with typed accessors."""

    __slots__ = ("_data", "_key", "_parent")

    def __init__(self, data: object, parent: JsonObject | None, key: Key) -> None:
        self._parent = parent
        self._key = key
        if not isinstance(data, dict):
            raise self._bad(None, f"expected an object, got {_kind(data)}")
        self._data: dict[str, object] = data

    # ---- where -----------------------------------------------------------------------
    def _bad(self, key: str | None, problem: str) -> BadResponse:
        parts: list[str] = [] if key is None else [f".{key}"]
        node: JsonObject = self
        while node._parent is not None:
            k = node._key
            parts.append(f"[{k}]" if isinstance(k, int) else f".{k[0]}[{k[1]}]"
                         if isinstance(k, tuple) else f".{k}")
            node = node._parent
        path = "".join(reversed(parts)).lstrip(".")
        separator = " " if problem == "missing" else ": "
        return BadResponse(f"{node._key}: {path}{separator}{problem}" if path
                           else f"{node._key}: {problem}")

    def error(self, key: str, problem: str) -> BadResponse:
        """A BadResponse about field `key` of this object (for checks beyond a type)."""
        return self._bad(key, problem)

    def _wrong(self, key: str, expected: str) -> BadResponse:
        value = self._data.get(key)
        return self._bad(key, "missing" if value is None and key not in self._data
                         else f"expected {expected}, got {_kind(value)}")

    # ---- scalars ----------------------------------------------------------------------
    def has(self, key: str) -> bool:
        """Whether the field is there and not null."""
        return self._data.get(key) is not None

    def text(self, key: str) -> str:
        value = self._data.get(key)
        if isinstance(value, str):
            return storable(value)
        raise self._wrong(key, "a string")

    def text_or(self, key: str, default: str = "") -> str:
        """A string, or `default` when the field is missing or null."""
        value = self._data.get(key)
        if isinstance(value, str):
            return storable(value)
        if value is None:
            return default
        raise self._wrong(key, "a string")

    def token(self, key: str) -> str:
        """An id that goes into a request path: an integer or a plain word."""
        value = self._data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_INT:
            return str(value)
        if isinstance(value, str) and _TOKEN.fullmatch(value):
            return value
        raise self._wrong(key, "an id")

    def number(self, key: str) -> int:
        value = self._data.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_INT:
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            raise self._bad(key, "number out of range")
        raise self._wrong(key, "an integer")

    def number_or_none(self, key: str) -> int | None:
        return None if self._data.get(key) is None else self.number(key)

    def flag(self, key: str) -> bool:
        """A boolean; missing or null is false."""
        value = self._data.get(key)
        if isinstance(value, bool):
            return value
        if value is None:
            return False
        raise self._wrong(key, "a boolean")

    def time(self, key: str) -> datetime:
        """An ISO 8601 timestamp (`Z` or an offset; none is read as UTC)."""
        value = self._data.get(key)
        if not isinstance(value, str):
            raise self._wrong(key, "a timestamp")
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise self._bad(key, "not an ISO 8601 timestamp") from None
        # Time arithmetic on year 9999 (a watermark plus its overlap) overflows: a date no
        # host writes is a bad answer, not a crash of the whole host's cycle.
        if not MIN_YEAR <= parsed.year <= MAX_YEAR:
            raise self._bad(key, f"a timestamp in the year {parsed.year}")
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)

    def time_or_none(self, key: str) -> datetime | None:
        return None if self._data.get(key) is None else self.time(key)

    # ---- nested -----------------------------------------------------------------------
    def obj(self, key: str) -> JsonObject:
        value = self._data.get(key)
        if value is None:
            raise self._wrong(key, "an object")
        return JsonObject(value, self, key)

    def obj_or_none(self, key: str) -> JsonObject | None:
        value = self._data.get(key)
        return None if value is None else JsonObject(value, self, key)

    def objects(self, key: str) -> list[JsonObject]:
        """An array of objects; missing or null is empty."""
        value = self._data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise self._wrong(key, "an array")
        return [JsonObject(item, self, (key, i)) for i, item in enumerate(value)]

    def texts(self, key: str) -> tuple[str, ...]:
        """An array of strings; missing or null is empty."""
        value = self._data.get(key)
        if value is None:
            return ()
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(storable(v) for v in value)
        raise self._wrong(key, "an array of strings")


def json_object(value: object, endpoint: str) -> JsonObject:
    """The decoded body of `endpoint` ("GET /path") as an object."""
    return JsonObject(value, None, endpoint)


def json_objects(value: object, endpoint: str) -> list[JsonObject]:
    """The decoded body of `endpoint` as an array of objects."""
    if not isinstance(value, list):
        raise BadResponse(f"{endpoint}: expected an array, got {_kind(value)}")
    root = JsonObject({}, None, endpoint)
    return [JsonObject(item, root, i) for i, item in enumerate(value)]
