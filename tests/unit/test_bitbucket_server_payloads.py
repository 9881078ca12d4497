"""Bitbucket Data Center JSON → the model, on payloads written from Atlassian's published
shapes (tests/fixtures/bitbucket_server/SOURCES.md)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from unidiff.patch import PatchSet

from livereview.core.model import MRKey, Thread
from livereview.hosts.base import BadResponse
from livereview.hosts.bitbucket_server import payloads
from livereview.hosts.payload import JsonObject, json_object

FIXTURES = Path(__file__).parents[1] / "fixtures" / "bitbucket_server"
KEY = MRKey("bbs", "ACME/widgets", 7)
HEAD = "9f2c1b7e4a6d8c0b3e5f7a9d1c3e5b7a9d0f2e4c"


def load(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def obj(data: Any, where: str = "GET /test") -> JsonObject:
    return json_object(data, where)


def conversation(activities: Any, reactions_for: frozenset[str] = frozenset()) -> list[Thread]:
    page = obj(activities, "GET …/activities")
    roots, deleted = [], set()
    for a in page.objects("values"):
        if a.text_or("action") != "COMMENTED":
            continue
        if a.text_or("commentAction") == "DELETED":
            deleted.add(str(a.obj("comment").number("id")))
            continue
        roots.append((a.obj("comment"), a.obj_or_none("commentAnchor")))
    return payloads.threads(roots, HEAD, reactions_for, frozenset(deleted))


def test_a_pull_request_is_read_with_its_refs_author_and_link() -> None:
    mr = payloads.merge_request(KEY, obj(load("pull_request.json")))
    assert (mr.title, mr.state, mr.author.username, mr.author.name) == (
        "Guard the cache with a lock", "opened", "bob", "Bob Builder")
    assert (mr.source_branch, mr.target_branch) == ("feature-cache-lock", "main")
    assert mr.head_sha == HEAD and mr.diff_refs().base_sha.startswith("1a3c5e7")
    assert mr.web_url.endswith("/projects/ACME/repos/widgets/pull-requests/7")
    assert mr.updated_at == datetime(2024, 5, 2, 15, 34, 54, 123000, tzinfo=UTC)


@pytest.mark.parametrize(("state", "expected"), [("MERGED", "merged"), ("DECLINED", "closed"),
                                                 ("OPEN", "opened")])
def test_states(state: str, expected: str) -> None:
    pr = load("pull_request.json") | {"state": state}
    assert payloads.merge_request(KEY, obj(pr)).state == expected
    assert payloads.changed_mr(KEY.repo, obj(pr)).state == expected


def test_activities_become_threads_of_nested_replies_without_deleted_comments() -> None:
    threads = conversation(load("activities.json"))
    assert [t.id for t in threads] == ["11", "12"]  # by their first comment's time
    general, inline = threads
    assert [m.body for m in general.messages] == ["@livereview is this lock needed at all?"]
    assert general.anchor is None and not general.resolved
    # Two levels of replies flattened into one thread, in the order they were written.
    assert [(m.id, m.author.username) for m in inline.messages] == [
        ("12", "alice"), ("13", "bob"), ("14", "widgets-ci")]
    assert {m.thread_id for m in inline.messages} == {"12"}
    assert "15" not in {m.id for t in threads for m in t.messages}  # deleted
    assert inline.resolvable and inline.resolved


def test_an_edit_is_read_from_the_highest_version() -> None:
    general = conversation(load("activities.json"))[0]
    [message] = general.messages
    assert message.body == "@livereview is this lock needed at all?"
    assert message.updated_at > message.created_at


def test_a_service_users_comments_are_marked_automated() -> None:
    inline = conversation(load("activities.json"))[1]
    assert [m.author.bot for m in inline.messages] == [False, False, True]
    assert payloads.actor(obj(load("user_service.json"))).bot


def test_an_inline_anchor_is_the_new_line_at_the_head_it_was_written_on() -> None:
    anchor = conversation(load("activities.json"))[1].anchor
    assert anchor is not None
    assert (anchor.new_path, anchor.new_line, anchor.old_line) == ("src/cache.py", 9, None)
    assert anchor.head_sha == HEAD and anchor.base_sha.startswith("1a3c5e7")


def test_an_anchor_on_a_removed_line_with_openapi_path_objects() -> None:
    thread = payloads.threads([(obj(load("comment_openapi_path.json")), None)], HEAD)[0]
    assert thread.anchor is not None
    assert (thread.anchor.new_path, thread.anchor.old_path) == ("src/cache.py",
                                                                "src/old_cache.py")
    assert (thread.anchor.new_line, thread.anchor.old_line) == (None, 4)
    assert not thread.resolvable  # this server sends no threadResolved: it cannot resolve


def test_reactions_are_read_for_the_messages_asked_only() -> None:
    asked = conversation(load("activities.json"), frozenset({"12"}))[1]
    [reaction] = asked.messages[0].reactions
    assert (reaction.name, reaction.user.username) == ("thumbsdown", "bob")
    assert all(m.reactions == () for m in asked.messages[1:])
    assert conversation(load("activities.json"))[1].messages[0].reactions == ()


def test_a_reply_tree_deeper_than_the_limit_is_cut_not_a_crash() -> None:
    node: dict[str, Any] = {"id": 1, "createdDate": 1, "text": "root", "comments": []}
    top = node
    for i in range(2, payloads.MAX_DEPTH + 50):
        child = {"id": i, "createdDate": i, "text": str(i), "comments": []}
        node["comments"] = [child]
        node = child
    [thread] = payloads.threads([(obj(top), None)], HEAD)
    assert len(thread.messages) == payloads.MAX_DEPTH + 1


def test_a_loop_of_replies_in_a_hostile_payload_ends() -> None:
    first = {"id": 1, "createdDate": 1, "comments": [{"id": 2, "createdDate": 2, "comments": []}]}
    second = {"id": 2, "createdDate": 2, "comments": [{"id": 1, "createdDate": 1, "comments": []}]}
    found = payloads.threads([(obj(first), None), (obj(second), None)], HEAD)
    assert sorted(m.id for t in found for m in t.messages) == ["1", "2"]


@pytest.mark.parametrize("value", [2**62, 2**45, -(2**40), "1714660494000", None, 1.5])
def test_a_timestamp_out_of_range_or_mistyped_is_a_bad_response(value: object) -> None:
    pr = copy.deepcopy(load("pull_request.json"))
    pr["createdDate"] = value
    with pytest.raises(BadResponse, match="createdDate"):
        payloads.merge_request(KEY, obj(pr, "GET …/pull-requests/7"))


def test_commits_newest_first_with_parents() -> None:
    commits = [payloads.commit(c) for c in obj(load("commits.json")).objects("values")]
    assert [c.title for c in commits] == ["Hold the lock while reading", "Add a lock"]
    assert commits[0].parent_ids == (commits[1].sha,)
    assert commits[0].created_at == datetime(2024, 5, 2, 14, 40, 50, tzinfo=UTC)  # committer
    assert commits[1].created_at == datetime(2024, 5, 2, 14, 33, 20, tzinfo=UTC)  # author


def test_the_raw_diff_is_read_with_gits_prefixes() -> None:
    text = payloads.unified_diff((FIXTURES / "pull_request.diff").read_text(encoding="utf-8"))
    assert "src://" not in text and "dst://" not in text
    [patched] = PatchSet(text)
    assert patched.path == "src/cache.py" and patched.added == 3


@pytest.mark.parametrize(("to_ref", "expected"), [
    ({"repository": {"slug": "widgets", "project": {"key": "ACME"}}}, "ACME/widgets"),
    ({"repository": {"slug": "widgets"}}, ""),
    ({}, ""),
    (None, ""),
    ({"repository": {"slug": "a b\u202e", "project": {"key": "X/Y"}}}, "X/Y/a b\u202e"),
])
def test_a_dashboard_entrys_repository_is_named_or_empty_never_an_error(
        to_ref: dict[str, Any] | None, expected: str) -> None:
    """The dashboard lists every repository the bot can read: an entry of one nobody watches
    that is odd must not stop the others being read (its name only ever fails to match)."""
    pr = json_object({"id": 1, "toRef": to_ref} if to_ref is not None else {"id": 1}, "GET")
    assert payloads.target_repo(pr) == expected
