"""Typed reading of host JSON: every wrong field is a BadResponse naming the endpoint and
the field's path, never a KeyError or TypeError."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from livereview.hosts.base import BadResponse
from livereview.hosts.payload import MAX_INT, json_object, json_objects

ENDPOINT = "GET /api/v4/projects/a%2Fb/merge_requests/1/discussions"


def discussions(note: dict[str, object]) -> list[dict[str, object]]:
    ok = {"id": 1, "created_at": "2024-05-02T10:00:00.000Z"}
    return [{"id": "d0", "notes": [ok]}, {"id": "d1", "notes": [ok, ok, ok, note]}]


def created(items: list[dict[str, object]]) -> list[datetime]:
    return [n.time("created_at") for d in json_objects(items, ENDPOINT)
            for n in d.objects("notes")]


def test_a_missing_field_names_the_endpoint_and_the_path() -> None:
    with pytest.raises(BadResponse) as caught:
        created(discussions({"id": 9}))
    assert str(caught.value) == f"{ENDPOINT}: [1].notes[3].created_at missing"


@pytest.mark.parametrize(("value", "problem"), [
    (None, "expected a timestamp, got null"),
    (1714644000, "expected a timestamp, got a number"),
    ("yesterday", "not an ISO 8601 timestamp"),
    (["2024"], "expected a timestamp, got an array"),
])
def test_a_mistyped_field_says_what_it_got(value: object, problem: str) -> None:
    with pytest.raises(BadResponse, match=r"\[1\]\.notes\[3\]\.created_at: ") as caught:
        created(discussions({"created_at": value}))
    assert str(caught.value).endswith(problem)


def test_timestamps_keep_their_zone_and_a_naive_one_is_utc() -> None:
    stamps = json_object({"a": "2024-05-02T10:00:00.123Z", "b": "2024-05-02T12:00:00+02:00",
                          "c": "2024-05-02T10:00:00"}, "GET /x")
    assert stamps.time("a") == datetime(2024, 5, 2, 10, 0, 0, 123000, tzinfo=UTC)
    assert stamps.time("b") == stamps.time("c") == datetime(2024, 5, 2, 10, tzinfo=UTC)


def test_a_non_object_where_an_object_belongs() -> None:
    with pytest.raises(BadResponse, match=r"^GET /x: \[2\]: expected an object, got a string$"):
        json_objects([{}, {}, "<html>"], "GET /x")
    with pytest.raises(BadResponse, match=r"^GET /x: expected an array, got an object$"):
        json_objects({"message": "hi"}, "GET /x")
    with pytest.raises(BadResponse, match=r"^GET /x: author: expected an object, got a number$"):
        json_object({"author": 3}, "GET /x").obj_or_none("author")


def test_numbers_are_integers_the_store_can_hold() -> None:
    item = json_object({"ok": MAX_INT, "big": MAX_INT + 1, "neg": -1, "float": 1.0,
                        "bool": True, "text": "12"}, "GET /x")
    assert item.number("ok") == MAX_INT
    for key, problem in (("big", "number out of range"), ("neg", "number out of range"),
                         ("float", "expected an integer, got a number"),
                         ("bool", "expected an integer, got a boolean"),
                         ("text", "expected an integer, got a string")):
        with pytest.raises(BadResponse, match=f"^GET /x: {key}: {problem}$"):
            item.number(key)


def test_ids_in_request_paths_are_integers_or_plain_words() -> None:
    item = json_object({"a": 12, "b": "6fe51a9c57", "c": "../../admin", "d": "", "e": 1.5},
                       "GET /x")
    assert (item.token("a"), item.token("b")) == ("12", "6fe51a9c57")
    for key in "cde":
        with pytest.raises(BadResponse, match=f"^GET /x: {key}: expected an id"):
            item.token(key)


def test_optional_fields_default_and_null_is_absent() -> None:
    item = json_object({"body": None, "system": None, "notes": None, "labels": ["a", "b"]},
                       "GET /x")
    assert (item.text_or("body"), item.text_or("missing", "opened")) == ("", "opened")
    assert not item.flag("system") and not item.has("body") and item.objects("notes") == []
    assert item.texts("labels") == ("a", "b") and item.texts("nope") == ()
    assert item.obj_or_none("author") is None and item.number_or_none("line") is None
    with pytest.raises(BadResponse, match=r"^GET /x: body: expected a string, got null$"):
        item.text("body")
    with pytest.raises(BadResponse, match=r"^GET /x: labels: expected an array of strings"):
        json_object({"labels": ["a", 1]}, "GET /x").texts("labels")


@pytest.mark.parametrize("stamp", ["9999-12-31T23:59:00Z", "0001-01-01T00:00:00Z"])
def test_a_timestamp_no_host_writes_is_a_bad_response(stamp: str) -> None:
    """A watermark plus its overlap overflowed on year 9999 and stopped the whole host."""
    with pytest.raises(BadResponse, match="updated_at: a timestamp in the year"):
        json_object({"updated_at": stamp}, "GET /x").time("updated_at")
