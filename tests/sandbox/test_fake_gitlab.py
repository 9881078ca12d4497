"""The fake GitLab itself, exercised over HTTP the way the daemon talks to GitLab."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx2
import pytest

from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab

TOKEN = "glpat-fake-token"
MR = "/projects/group%2Fapp/merge_requests/1"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2024, 5, 2, 14, 34, 54, 54000, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def tick(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def fake(clock: Clock) -> FakeGitLab:
    fake = FakeGitLab(clock=clock)
    fake.add_user("alice", "Alice")
    fake.add_mr("group/app", title="Add b", author="alice",
                files={"app.py": ("a = 1\n", "a = 1\nb = 2\n")})
    return fake


@pytest.fixture
def api(fake: FakeGitLab) -> Iterator[httpx2.Client]:
    with FakeGitLabServer(fake) as server, httpx2.Client(
            base_url=server.url + "/api/v4", headers={"PRIVATE-TOKEN": TOKEN}) as client:
        yield client


def test_auth_user_version_and_project(api: httpx2.Client) -> None:
    url = api.build_request("GET", "/user").url
    bare = httpx2.get(url)
    assert (bare.status_code, bare.json()) == (401, {"message": "401 Unauthorized"})
    bearer = httpx2.get(url, headers={"Authorization": f"Bearer {TOKEN}"})
    assert bearer.json()["username"] == "livereview"
    assert api.get("/version").json()["version"] == "17.5.0"
    project = api.get("/projects/group%2Fapp")
    assert project.headers["Content-Type"] == "application/json"
    assert all(h in project.headers for h in ("RateLimit-Limit", "RateLimit-Remaining",
                                              "RateLimit-Reset", "RateLimit-Observed"))
    assert project.json()["path_with_namespace"] == "group/app"
    assert api.get(f"/projects/{project.json()['id']}").json()["id"] == project.json()["id"]
    missing = api.get("/projects/group%2Fnope")
    assert (missing.status_code, missing.json()) == (404, {"message": "404 Project Not Found"})
    assert api.get("/projects/group%2Fapp/merge_requests/9").json() == {"message": "404 Not found"}


def test_mr_list_filters_on_or_after_updated_after(
        api: httpx2.Client, fake: FakeGitLab, clock: Clock) -> None:
    first = api.get(MR).json()
    assert STAMP.match(first["updated_at"])
    assert first["references"]["full"] == "group/app!1"
    assert set(first["diff_refs"]) == {"base_sha", "head_sha", "start_sha"}
    clock.tick(120)
    fake.add_mr("group/app", title="Later", author="alice")
    query = {"scope": "all", "state": "opened", "order_by": "updated_at", "sort": "desc"}
    both = api.get("/merge_requests", params={**query, "updated_after": first["updated_at"]})
    assert [mr["iid"] for mr in both.json()] == [2, 1]
    later = api.get("/merge_requests", params={**query, "updated_after": "2024-05-02T14:35:00Z"})
    assert [mr["iid"] for mr in later.json()] == [2]
    assert api.get("/merge_requests").json() == []  # default scope is created_by_me
    fake.set_state("group/app", 2, "merged")
    assert [m["iid"] for m in api.get("/projects/group%2Fapp/merge_requests",
                                       params={"state": "opened"}).json()] == [1]


def test_comment_then_reply_makes_a_thread(api: httpx2.Client, fake: FakeGitLab) -> None:
    note = api.post(f"{MR}/notes", data={"body": "looks good"})
    assert note.status_code == 201
    assert (note.json()["type"], note.json()["noteable_type"]) == (None, "MergeRequest")
    [discussion] = api.get(f"{MR}/discussions").json()
    assert discussion["individual_note"] is True
    assert re.fullmatch("[0-9a-f]{40}", discussion["id"])
    reply = api.post(f"{MR}/discussions/{discussion['id']}/notes", json={"body": "thanks"})
    assert reply.status_code == 201
    assert reply.json()["type"] == "DiscussionNote"
    assert reply.json()["id"] > note.json()["id"]
    thread = api.get(f"{MR}/discussions/{discussion['id']}").json()
    assert thread["individual_note"] is False
    assert [n["type"] for n in thread["notes"]] == ["DiscussionNote", "DiscussionNote"]
    resolved = api.put(f"{MR}/discussions/{discussion['id']}", params={"resolved": "true"})
    assert all(n["resolved"] and n["resolved_by"]["username"] == "livereview"
               for n in resolved.json()["notes"])
    assert [n["body"] for n in fake.notes_by("livereview")] == ["looks good", "thanks"]
    assert api.get(MR).json()["user_notes_count"] == 2


def test_diff_note_position_uses_diff_refs(api: httpx2.Client) -> None:
    refs = api.get(MR).json()["diff_refs"]
    form = {"body": "why b?", "position[position_type]": "text", "position[new_path]": "app.py",
            "position[old_path]": "app.py", "position[new_line]": "2",
            **{f"position[{k}]": v for k, v in refs.items()}}
    created = api.post(f"{MR}/discussions", data=form)
    assert created.status_code == 201
    assert created.json()["individual_note"] is False
    note = created.json()["notes"][0]
    assert (note["type"], note["resolvable"], note["resolved"]) == ("DiffNote", True, False)
    assert note["position"]["new_line"] == 2
    assert note["position"]["old_line"] is None
    assert note["position"]["head_sha"] == refs["head_sha"]
    bad = api.post(f"{MR}/discussions", data={**form, "position[new_line]": "40"})
    assert bad.status_code == 400
    assert "line_code" in bad.json()["message"]


def test_push_adds_system_note_and_moves_refs(api: httpx2.Client, fake: FakeGitLab) -> None:
    before = api.get(MR).json()
    sha = fake.push("group/app", 1, files={"app.py": ("a = 1\n", "a = 1\nb = 3\n")}, title="fix")
    after = api.get(MR).json()
    assert after["sha"] == after["diff_refs"]["head_sha"] == sha != before["sha"]
    [system] = [d["notes"][0] for d in api.get(f"{MR}/discussions").json()]
    assert system["system"] is True
    assert system["body"].startswith("added 1 commit")
    assert system["resolvable"] is False
    assert "resolved" not in system
    assert len(api.get(f"{MR}/commits").json()) == 2
    assert len(api.get(f"{MR}/versions").json()) == 2
    assert "+b = 3" in api.get(f"{MR}/diffs").json()[0]["diff"]
    raw = api.get("/projects/group%2Fapp/repository/files/app.py/raw", params={"ref": sha})
    assert raw.text == "a = 1\nb = 3\n"
    fake.push("group/app", 1, title="rewrite", force=True)
    forced = api.get(MR).json()
    assert forced["diff_refs"]["base_sha"] != after["diff_refs"]["base_sha"]
    assert len(api.get(f"{MR}/commits").json()) == 1


def test_notes_touch_updated_at_at_most_once_a_minute(
        api: httpx2.Client, fake: FakeGitLab, clock: Clock) -> None:
    created = api.get(MR).json()["updated_at"]
    clock.tick(30)
    note = fake.add_note("group/app", 1, author="alice", body="first")
    assert api.get(MR).json()["updated_at"] == created  # within the throttle window
    clock.tick(61)
    fake.add_note("group/app", 1, author="alice", body="second")
    bumped = api.get(MR).json()["updated_at"]
    assert bumped > created
    clock.tick(5)
    fake.award("group/app", 1, note["id"], user="alice", name="thumbsup")
    assert api.get(MR).json()["updated_at"] == bumped  # awards never touch the MR
    fake.push("group/app", 1, title="more")
    assert api.get(MR).json()["updated_at"] > bumped  # a push always does


def test_pagination_headers_across_three_pages(api: httpx2.Client, fake: FakeGitLab) -> None:
    for i in range(45):
        fake.add_note("group/app", 1, author="alice", body=f"note {i}")
    first = api.get(f"{MR}/notes", params={"sort": "asc", "per_page": 20})
    headers = first.headers
    assert (headers["X-Page"], headers["X-Next-Page"], headers["X-Prev-Page"]) == ("1", "2", "")
    assert (headers["X-Total"], headers["X-Total-Pages"]) == ("45", "3")
    assert headers["X-Per-Page"] == "20"
    links = {rel: url for url, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', headers["Link"])}
    assert set(links) == {"next", "first", "last"}
    assert links["next"].startswith("http://127.0.0.1")
    second = httpx2.get(links["next"], headers={"PRIVATE-TOKEN": TOKEN})
    assert second.headers["X-Page"] == "2"
    assert second.json()[0]["body"] == "note 20"
    last = api.get(f"{MR}/notes", params={"sort": "asc", "per_page": 20, "page": 3})
    assert len(last.json()) == 5
    assert last.headers["X-Next-Page"] == ""
    assert len(api.get(f"{MR}/discussions", params={"per_page": 100}).json()) == 45


def test_award_emoji_and_duplicate_error(api: httpx2.Client, fake: FakeGitLab) -> None:
    note = fake.add_note("group/app", 1, author="alice", body="hi")
    path = f"{MR}/notes/{note['id']}/award_emoji"
    award = api.post(path, data={"name": "eyes"})
    assert award.status_code == 201
    assert award.json()["awardable_type"] == "Note"
    assert award.json()["user"]["username"] == "livereview"
    again = api.post(path, data={"name": "eyes"})
    assert again.status_code == 404
    assert "has already been taken" in again.json()["message"]
    assert [a["name"] for a in api.get(path).json()] == ["eyes"]
    assert api.delete(f"{path}/{award.json()['id']}").status_code == 204
    assert fake.awards_on("group/app", 1, note["id"]) == []


def test_fault_injection(api: httpx2.Client, fake: FakeGitLab) -> None:
    fake.inject_fault("GET", r"/merge_requests/1$", status=503, body='{"message":"down"}')
    assert api.get(MR).status_code == 503
    assert api.get(MR).status_code == 200
    fake.inject_fault("POST", r"/notes$", status=502, after_handling=True)
    assert api.post(f"{MR}/notes", data={"body": "once"}).status_code == 502
    assert [n["body"] for n in fake.notes_by("livereview")] == ["once"]  # it was created
    fake.inject_fault("*", r"/notes$", status=0)
    with pytest.raises(httpx2.TransportError):
        api.post(f"{MR}/notes", data={"body": "lost"})
    assert api.get(MR).status_code == 200  # the client reconnects
    fake.inject_fault("GET", r"/user$", status=429, headers={"Retry-After": "7"})
    assert api.get("/user").headers["Retry-After"] == "7"
    assert fake.requests[-1] == ("GET", "/api/v4/user", {})
    fake.reset_requests()
    assert fake.requests == []


def test_mentions_create_one_pending_todo(api: httpx2.Client, fake: FakeGitLab) -> None:
    fake.add_note("group/app", 1, author="alice", body="what do you think, @livereview?")
    fake.add_note("group/app", 1, author="alice", body="@livereview ping")
    [todo] = api.get("/todos", params={"type": "MergeRequest", "state": "pending"}).json()
    assert (todo["action_name"], todo["target"]["iid"]) == ("mentioned", 1)
    assert todo["project"]["path_with_namespace"] == "group/app"
    assert todo["target_url"].endswith("/group/app/-/merge_requests/1#note_101")
    api.post(f"{MR}/notes", data={"body": "here"})  # the bot's own note marks its todos done
    assert api.get("/todos").json() == []
    fake.add_note("group/app", 1, author="alice", body="@livereview again")
    [todo] = api.get("/todos").json()
    assert todo["action_name"] == "directly_addressed"
    done = api.post(f"/todos/{todo['id']}/mark_as_done")
    assert done.status_code == 201
    assert done.json()["state"] == "done"
    assert api.get("/todos").json() == []


def test_a_push_moves_a_diff_note_with_its_line_and_leaves_a_changed_line_outdated(
        api: httpx2.Client, fake: FakeGitLab) -> None:
    """Discussions::UpdateDiffPositionService: a traced line takes the new version's
    position; a changed or removed one keeps the old position (outdated)."""
    fake.push("group/app", 1, title="more", files={"app.py": ("", "a = 1\nb = 2\nc = 3\n")})
    on_b = fake.add_note("group/app", 1, author="alice", body="b?",
                         position={"new_path": "app.py", "new_line": 2})
    on_c = fake.add_note("group/app", 1, author="alice", body="c?",
                         position={"new_path": "app.py", "new_line": 3})
    old = api.get(MR).json()["diff_refs"]
    head = fake.push("group/app", 1, title="rebase", force=True,
                     files={"app.py": ("a = 1\n", "# top\na = 1\nb = 2\nc = 4\n")})
    notes = {n["id"]: n for d in api.get(f"{MR}/discussions").json() for n in d["notes"]}
    moved, changed = notes[on_b["id"]]["position"], notes[on_c["id"]]["position"]
    assert (moved["new_line"], moved["old_line"], moved["head_sha"]) == (3, None, head)
    assert moved["base_sha"] == api.get(MR).json()["diff_refs"]["base_sha"]
    assert (changed["new_line"], changed["head_sha"]) == (3, old["head_sha"])


def test_a_token_of_one_project_reads_that_project_alone(
        api: httpx2.Client, fake: FakeGitLab) -> None:
    """lib/api/helpers.rb `find_project!`: a project the user may not read is
    `not_found!('Project')`, and MergeRequestsFinder lists only projects it may read."""
    fake.add_mr("other/lib", title="Add c", author="alice")
    bot = fake.add_token_bot("other/lib")
    fake.add_token("glpat-other-project", bot, projects=("other/lib",))
    headers = {"PRIVATE-TOKEN": "glpat-other-project"}
    hidden = api.get("/projects/group%2Fapp", headers=headers)
    assert (hidden.status_code, hidden.json()) == (404, {"message": "404 Project Not Found"})
    assert api.get("/projects/group%2Fapp/merge_requests/1", headers=headers).status_code == 404
    assert api.get("/projects/other%2Flib/merge_requests/1", headers=headers).status_code == 200
    listed = api.get("/merge_requests", params={"scope": "all"}, headers=headers).json()
    assert [mr["references"]["full"] for mr in listed] == ["other/lib!1"]
    everyone = api.get("/merge_requests", params={"scope": "all"}).json()
    assert {mr["references"]["full"] for mr in everyone} == {"group/app!1", "other/lib!1"}
