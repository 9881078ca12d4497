"""The fake Bitbucket Cloud's query language (BBQL) and sorting, over the JSON it answers.

A subset of https://developer.atlassian.com/cloud/bitbucket/rest/intro/#filtering:
`field op value` terms joined by `AND` / `OR` (AND binds tighter), ops `=`, `!=`, `>`,
`>=`, `<`, `<=`, `~` (contains); values are "quoted" or 'quoted' strings, numbers, `true`,
`false`, `null`, or ISO 8601 dates and datetimes written bare
(`updated_on > 2020-12-10T00:00:00-07:00`). Fields are dotted paths into the answer
(`source.branch.name`). `sort=field` / `sort=-field` orders by one field. Anything else is
a 400, as Bitbucket refuses a query it cannot read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from livereview.sandbox.bitbucket_cloud.model import JSON, BitbucketError

_TOKEN = re.compile(r"""\s*(?:
    (?P<op>>=|<=|!=|=|>|<|~)
  | "(?P<dq>(?:[^"\\]|\\.)*)"
  | '(?P<sq>(?:[^'\\]|\\.)*)'
  | (?P<word>[^\s()=<>!~"']+))""", re.VERBOSE)


def _value(token: re.Match[str]) -> object:
    if token["dq"] is not None or token["sq"] is not None:
        return re.sub(r"\\(.)", r"\1", token["dq"] if token["dq"] is not None else token["sq"])
    word = token["word"]
    if word in ("true", "false"):
        return word == "true"
    if word == "null":
        return None
    if re.fullmatch(r"-?\d+", word):
        return int(word)
    when = _time(word)
    if when is None:
        raise BitbucketError(400, f"Invalid query: unexpected value {word!r}")
    return when


def _time(text: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _field(item: JSON, path: str) -> object:
    node: Any = item
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            raise BitbucketError(400, f"Invalid field name: {path}")
        node = node[part]
    return node


def _compare(actual: object, op: str, wanted: object) -> bool:
    if isinstance(wanted, datetime) and isinstance(actual, str):
        actual = _time(actual)
    if op == "~":
        return isinstance(actual, str) and isinstance(wanted, str) and \
            wanted.lower() in actual.lower()
    if op in ("=", "!="):
        return (actual == wanted) == (op == "=")
    if actual is None or wanted is None or type(actual) is not type(wanted):
        return False
    less = bool(actual < wanted)  # type: ignore[operator]
    more = bool(actual > wanted)  # type: ignore[operator]
    return {">": more, ">=": not less, "<": less, "<=": not more}[op]


def parse(query: str) -> Callable[[JSON], bool]:
    """`q` → a predicate over one item of the list."""
    tokens = []
    position = 0
    while position < len(query.rstrip()):
        found = _TOKEN.match(query, position)
        if found is None or found.end() == position:
            raise BitbucketError(400, f"Invalid query: {query[position:position + 20]!r}")
        tokens.append(found)
        position = found.end()
    alternatives: list[list[tuple[str, str, object]]] = [[]]
    index = 0
    while index < len(tokens):
        if len(tokens) < index + 3 or tokens[index]["word"] is None or \
                tokens[index + 1]["op"] is None or tokens[index + 2]["op"] is not None:
            raise BitbucketError(400, f"Invalid query: {query!r}")
        alternatives[-1].append((tokens[index]["word"], tokens[index + 1]["op"],
                                 _value(tokens[index + 2])))
        index += 3
        if index < len(tokens):
            joiner = (tokens[index]["word"] or "").upper()
            if joiner not in ("AND", "OR"):
                raise BitbucketError(400, f"Invalid query: expected AND or OR in {query!r}")
            if joiner == "OR":
                alternatives.append([])
            index += 1

    def matches(item: JSON) -> bool:
        return any(all(_compare(_field(item, f), op, v) for f, op, v in terms)
                   for terms in alternatives)

    return matches


def ordered(items: list[JSON], sort: str) -> list[JSON]:
    """`sort=field` ascending, `sort=-field` descending (null sorts first)."""
    field = sort.lstrip("-")
    keyed = [(_field(item, field), item) for item in items]
    return [item for _, item in sorted(
        keyed, key=lambda pair: (pair[0] is not None, pair[0] if pair[0] is not None else 0),
        reverse=sort.startswith("-"))]
