"""The fake answers with the keys real GitLab sends (../shared/fixtures/gitlab, recorded
from gitlab.com): a daemon that passes against the fake reads real payloads too."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from livereview.sandbox.gitlab_state import FakeGitLab

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "gitlab"
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(Z|[+-]\d\d:\d\d)$")
# Keys the fake leaves out on purpose: EE-only, or profile fields only admins see.
OMITTED = {
    "user": {"color_scheme_id", "confirmed_at", "current_sign_in_at", "identities",
             "extra_shared_runners_minutes_limit", "shared_runners_minutes_limit",
             "last_activity_on", "last_sign_in_at", "linkedin", "organization",
             "projects_limit", "skype", "theme_id", "twitter", "website_url"},
    "mr": {"approvals_before_merge"},
}


def recorded(name: str) -> Any:
    if not FIXTURES.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"shared fixtures missing at {FIXTURES}")
        pytest.skip(f"shared fixtures not beside this checkout ({FIXTURES})")
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    if isinstance(data, list) and data and isinstance(data[0], dict) and "response" in data[0]:
        data = data[0]["response"]
    return data[0] if isinstance(data, list) else data


@pytest.fixture(scope="module")
def fake() -> dict[str, Any]:
    gitlab = FakeGitLab()
    gitlab.add_user("alice")
    gitlab.add_project("a/b")
    iid = gitlab.add_mr("a/b", title="t", author="alice", files={"x.py": ("a\n", "b\n")})
    note = gitlab.add_note("a/b", iid, author="alice", body="hi")
    diff_note = gitlab.add_note("a/b", iid, author="alice", body="hi",
                                position={"new_path": "x.py", "new_line": 1})
    mr = gitlab.find_mr("a/b", iid)
    return {"user": gitlab.bot, "mr": gitlab.mr_json(mr, full=True),
            "mr_list_item": gitlab.mr_json(mr), "note": note, "diff_note": diff_note,
            "discussion": gitlab.discussions("a/b", iid)[-1]}


@pytest.mark.parametrize(("fixture", "kind", "omitted"), [
    ("danger-js_getUser.json", "user", OMITTED["user"]),
    ("danger-js_getMergeRequestInfo.json", "mr", OMITTED["mr"]),
    ("go-gitlab_get_merge_request.json", "mr", OMITTED["mr"]),
    ("vscode_open_mr.json", "mr_list_item", OMITTED["mr"]),
    ("vscode_diff_note.json", "diff_note", set()),
])
def test_fake_sends_every_recorded_key(fake: dict[str, Any], fixture: str, kind: str,
                                       omitted: set[str]) -> None:
    assert set(recorded(fixture)) - set(fake[kind]) - omitted == set()


def test_discussions_and_notes_have_the_recorded_keys(fake: dict[str, Any]) -> None:
    discussion = recorded("danger-js_getMergeRequestDiscussions.json")
    assert set(discussion) <= set(fake["discussion"])
    assert set(discussion["notes"][0]) <= set(fake["note"])
    assert set(fake["diff_note"]["position"]) >= set(recorded("vscode_diff_note.json")["position"])


def test_timestamps_have_milliseconds_and_a_zone(fake: dict[str, Any]) -> None:
    for kind in ("mr", "note", "diff_note"):
        for key in ("created_at", "updated_at"):
            assert TIMESTAMP.match(fake[kind][key]), (kind, key, fake[kind][key])
    assert TIMESTAMP.match(recorded("vscode_diff_note.json")["created_at"])
