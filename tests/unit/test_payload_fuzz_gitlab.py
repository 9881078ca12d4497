"""Every GitLab adapter method that reads JSON, fed mutated copies of real payloads (the
gitlab.com recordings in tests/fixtures/gitlab; the fake's, shape-checked against them,
where nothing was recorded): the result is a model object or a HostError, never any other
exception."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given

from livereview.core.model import (
    DiffRefs,
    Identity,
    InlineComment,
    Message,
    MRKey,
    PostedReview,
    Side,
    Snapshot,
    Thread,
    Verdict,
)
from livereview.hosts.gitlab.adapter import GitLab
from livereview.sandbox.gitlab.state import FakeGitLab
from tests.fixtures.recorded import gitlab as recorded
from tests.unit.fuzz_payloads import (
    FUZZ,
    Host,
    Route,
    broken_routes,
    client,
    collect,
    outcome,
)

REPO = "gitlab-org/gitlab-ce"
KEY = MRKey("gl", REPO, 27117)


def fake_payloads() -> dict[str, Any]:
    """What nobody recorded (projects, to-dos, awards, trees, single discussions)."""
    fake = FakeGitLab()
    fake.add_user("alice")
    fake.add_project(REPO)
    iid = fake.add_mr(REPO, title="t", author="alice", files={"docs/a.md": ("a\n", "b\n")})
    note = fake.add_note(REPO, iid, author="alice", body="@livereview why?",
                         position={"new_path": "docs/a.md", "new_line": 1})
    thread = fake.discussions(REPO, iid)[0]["id"]
    fake.add_note(REPO, iid, author="alice", body="and?", reply_to_discussion=thread)
    fake.award(REPO, iid, note["id"], user="alice", name="thumbsup")
    with fake.lock:
        return {"project": {**fake.project_json(fake.find_project(REPO)), "id": 278964},
                "todos": [fake.todo_json(t) for t in fake.todos("livereview")],
                "awards": fake.awards_on(REPO, iid, note["id"]),
                "discussion": fake.discussions(REPO, iid)[0],
                "tree": fake.tree(REPO, "docs", None),
                "approval": fake.approve(REPO, iid, user="livereview"),
                "approvals": fake.approvals(REPO, iid)}


FAKE = fake_payloads()
DISCUSSIONS = [*recorded("danger-js_getMergeRequestDiscussions.json"), FAKE["discussion"],
               {"id": "0a1b2c", "individual_note": False,
                "notes": [recorded("vscode_diff_note.json")]}]
VERSIONS = recorded("vscode_versions.json")
ROUTES = [
    Route("GET", r"/api/v4/user$", recorded("danger-js_getUser.json")),  # 0
    Route("GET", r"/api/v4/projects/[^/]+$", FAKE["project"]),
    Route("GET", r"/api/v4/merge_requests$", [recorded("vscode_open_mr.json")]),
    Route("GET", r"/projects/[^/]+/merge_requests$", [recorded("vscode_open_mr.json")]),
    Route("GET", r"/api/v4/todos$", FAKE["todos"]),
    Route("GET", r"/merge_requests/\d+$", recorded("danger-js_getMergeRequestInfo.json")),  # 5
    Route("GET", r"/merge_requests/\d+/discussions$", DISCUSSIONS),
    Route("GET", r"/merge_requests/\d+/commits$", recorded(
        "danger-js_getMergeRequestCommits.json")),
    Route("GET", r"/notes/\d+/award_emoji$", FAKE["awards"]),
    Route("GET", r"/discussions/[0-9a-f]+$", FAKE["discussion"]),
    Route("GET", r"/versions$", VERSIONS),  # 10
    Route("GET", r"/versions/\d+$", recorded("vscode_mr_version.json")),
    Route("GET", r"/diffs$", recorded("danger-js_getMergeRequestDiffs.json")),
    Route("GET", r"/repository/files/.+/raw$", "Every cache needs a lock.\n"),
    Route("GET", r"/repository/tree$", FAKE["tree"]),
    Route("POST", r"/discussions/[0-9a-f]+/notes$", recorded("vscode_diff_note.json"), 201),
    Route("POST", r"/discussions$", FAKE["discussion"], 201),
    Route("POST", r"/award_emoji$", {"message": "404 Award Emoji Name has already been "
                                                "taken Not Found"}, 404),
    Route("PUT", r"/discussions/[0-9a-f]+$", FAKE["discussion"]),
    Route("POST", r"/merge_requests/\d+/approve$", FAKE["approval"], 201),
    Route("GET", r"/merge_requests/\d+/approvals$", FAKE["approvals"]),  # 20
    Route("POST", r"/merge_requests/\d+/unapprove$", FAKE["approval"], 201),
    # a review's summary and notice: individual notes (not resolvable), as recorded
    Route("POST", r"/merge_requests/\d+/notes$", recorded(
        "danger-js_getMergeRequestNotes.json")[0], 201),  # 22
]
NOTE = str(DISCUSSIONS[0]["notes"][0]["id"])
REFS = DiffRefs("a" * 40, "a" * 40, "b" * 40)
FINDING = InlineComment("docs/a.md", 1, Side.OLD, "A finding.")
Call = Callable[[GitLab], Awaitable[object]]
CALLS: dict[str, tuple[list[int], Call, type | tuple[type, ...]]] = {
    "whoami": ([0], lambda h: h.whoami(), Identity),
    "repo_exists": ([1], lambda h: h.repo_exists(REPO), bool),
    "list_changed_mrs": ([1, 2], lambda h: h.list_changed_mrs(
        (REPO,), datetime(2020, 1, 1, tzinfo=UTC)), list),
    "list_changed_mrs_per_project": ([3], lambda h: GitLab(
        "gl", h.http, list_strategy="project").list_changed_mrs((REPO,), None), list),
    "mention_inbox": ([4], lambda h: h.mention_inbox((REPO,)), dict),
    "fetch_mr": ([5, 6, 7, 8], lambda h: h.fetch_mr(REPO, KEY.iid, frozenset({NOTE})),
                 Snapshot),
    "fetch_thread": ([9], lambda h: h.fetch_thread(KEY, "0a1b2c"), Thread),
    "diff_of_a_version": ([10, 11], lambda h: h.diff(KEY, VERSIONS[0]["head_commit_sha"]),
                          str),
    "diff": ([12], lambda h: h.diff(KEY), str),
    "file_content": ([13], lambda h: h.file_content(REPO, "main", "README.md"), str),
    "list_files": ([14], lambda h: h.list_files(REPO, "main", "docs"), list),
    "reply": ([15], lambda h: h.reply(KEY, "0a1b2c", "An answer."), Message),
    "comment": ([16], lambda h: h.comment(KEY, "A remark."), Message),
    "react": ([0, 8], lambda h: h.react(KEY, NOTE, "thumbsup"), type(None)),
    "resolve": ([18], lambda h: h.resolve(KEY, "0a1b2c"), type(None)),
    "diffstat": ([12], lambda h: h.diffstat(KEY), list),
    "diff_files": ([12], lambda h: collect(h.diff_files(KEY)), list),
    "note": ([22], lambda h: h.note(KEY, "A statement."), Message),
    "post_review": ([16, 22, 19], lambda h: h.post_review(KEY, REFS, [FINDING], "Summary.",
                                                      Verdict.APPROVED), PostedReview),
    "request_changes": ([22, 21], lambda h: h.request_changes(KEY, "Why."), Message),
    "reviews_posted": ([0, 6], lambda h: h.reviews_posted(KEY), list),
}


def run(name: str, broken: int = -1, body: bytes = b"") -> str:
    _, call, expected = CALLS[name]
    host = GitLab("gl", client("https://gitlab.example", "gitlab",
                               Host(ROUTES, broken, body)))
    return outcome(lambda: call(host), expected)


@pytest.mark.parametrize("name", sorted(set(CALLS) - {"react"}))
def test_the_seeds_themselves_make_model_objects(name: str) -> None:
    assert run(name) == "result"


def test_react_to_an_award_already_there_reads_the_awards() -> None:
    # The seed awards are not the bot's own, so the 404 stands: a HostError, not a crash.
    assert run("react") == "host error"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_mutated_payloads_end_in_a_model_object_or_a_host_error(name: str) -> None:
    used = CALLS[name][0]

    @FUZZ
    @given(broken_routes(ROUTES, used))
    def prop(broken: tuple[int, bytes]) -> None:
        run(name, *broken)

    prop()
