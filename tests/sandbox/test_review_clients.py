"""The fakes' review endpoints answer as the real hosts do: checked with clients no one on
this project wrote — python-gitlab, PyGithub and atlassian-python-api — doing what a
reviewer does (approve, withdraw, request changes, comment on a line, read the diff by
file), then with our own adapters reading what those clients left."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import gitlab
import pytest
from atlassian import Bitbucket
from atlassian.bitbucket.cloud import Cloud
from github import Auth, Github, GithubException

from livereview.app.hosts import connect
from livereview.core.model import MRKey
from livereview.hosts.base import PostsNotes
from livereview.metrics import Metrics
from livereview.sandbox.bitbucket_cloud.server import FakeBitbucketCloudServer
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.sandbox.github.reviews import standing
from livereview.sandbox.github.server import FakeGitHubServer
from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.settings import HostSettings, Secret

TOKEN = "review-clients-SECRET-0042"
REPO = "acme/widgets"
OLD = "import threading\n\ncache = {}\n\n\ndef get(key):\n    return cache.get(key)\n"
NEW = ("import threading\n\ncache = {}\nlock = threading.Lock()\n\n\ndef get(key):\n"
       "    with lock:\n        return cache.get(key)\n")
FILES = {"src/cache.py": (OLD, NEW), "logo.png": ("", "\0PNG\0binary\n"),
         **{f"docs/f{n:03d}.txt": ("", f"page {n}\n") for n in range(120)}}


# ---- GitLab: python-gitlab ----------------------------------------------------------------
@pytest.fixture
def gl() -> Iterator[tuple[FakeGitLab, FakeGitLabServer]]:
    fake = FakeGitLab(token=TOKEN)
    fake.add_project(REPO)
    with FakeGitLabServer(fake) as server:
        yield fake, server


def test_python_gitlab_approves_comments_on_lines_and_reads_diffs(
        gl: tuple[FakeGitLab, FakeGitLabServer]) -> None:
    fake, server = gl
    iid = fake.add_mr(REPO, title="Lock", author="bob", files=FILES)
    client = gitlab.Gitlab(server.url, private_token=TOKEN)
    mr = client.projects.get(REPO).mergerequests.get(iid)
    mr.approve()
    assert fake.approvers(REPO, iid) == ["livereview"]
    assert [a["user"]["username"] for a in mr.approvals.get().approved_by] == ["livereview"]
    with pytest.raises(gitlab.exceptions.GitlabAuthenticationError):
        mr.approve()  # a second approval: 401, as GitLab answers it
    mr.unapprove()
    assert fake.approvers(REPO, iid) == []
    mr = client.projects.get(REPO).mergerequests.get(iid)  # approve() kept its answer
    refs = mr.diff_refs
    position = {"position_type": "text", "base_sha": refs["base_sha"],
                "start_sha": refs["start_sha"], "head_sha": refs["head_sha"],
                "new_path": "src/cache.py", "old_path": "src/cache.py"}
    removed = mr.discussions.create({"body": "removed line", "position": {
        **position, "old_line": 7}})
    assert removed.attributes["notes"][0]["position"]["old_line"] == 7
    with pytest.raises(gitlab.exceptions.GitlabCreateError):  # not a line of the diff
        mr.discussions.create({"body": "nowhere", "position": {**position, "new_line": 99}})
    with pytest.raises(gitlab.exceptions.GitlabCreateError):  # shas of no version of the MR
        mr.discussions.create({"body": "stale", "position": {
            **position, "head_sha": "f" * 40, "new_line": 4}})
    diffs = list(client.http_list(f"/projects/{mr.project_id}/merge_requests/{iid}/diffs",
                                  per_page=20, iterator=True))
    assert len(diffs) == len(FILES)
    binary = next(d for d in diffs if d["new_path"] == "logo.png")
    assert binary["diff"].startswith("Binary files") and binary["new_file"]
    [version] = mr.diffs.list()
    assert len(mr.diffs.get(version.id).diffs) == len(FILES)

    async def ours() -> None:  # what our adapter reads of the same MR
        host = connect(HostSettings(name="gl", type="gitlab", url=server.url,
                                    token=Secret(TOKEN)), Metrics())
        try:
            snap = await host.fetch_mr(REPO, iid)
            thread = next(t for t in snap.threads if t.root and t.root.body == "removed line")
            assert thread.anchor is not None
            assert (thread.anchor.new_line, thread.anchor.old_line) == (None, 7)
            files = [f async for f in host.diff_files(MRKey("gl", REPO, iid))]
            assert {f.change.new_path: f.skipped for f in files}["logo.png"] == "binary"
        finally:
            await host.close()
    asyncio.run(ours())


def test_python_gitlab_follows_a_moved_projects_redirect_and_is_refused_a_write(
        gl: tuple[FakeGitLab, FakeGitLabServer]) -> None:
    """GitLab ≥ 16.7 (merge request !137578): a former path answers GET with 301 to the URL
    by project id — python-gitlab follows it — and a write with 405."""
    fake, server = gl
    iid = fake.add_mr(REPO, title="Lock", author="bob", files=FILES)
    fake.move_project(REPO, "vault/widgets")
    client = gitlab.Gitlab(server.url, private_token=TOKEN)
    assert client.projects.get(REPO).path_with_namespace == "vault/widgets"
    old = REPO.replace("/", "%2F")
    with pytest.raises(gitlab.exceptions.GitlabHttpError) as refused:
        client.http_post(f"/projects/{old}/merge_requests/{iid}/approve")
    assert refused.value.response_code == 405
    assert fake.approvers("vault/widgets", iid) == []
    fake.redirects_moved_projects = False  # before 16.7: answered for the project
    assert client.projects.get(REPO).path_with_namespace == "vault/widgets"


def test_python_gitlab_sees_notes_never_block_a_strict_project_and_threads_do(
        gl: tuple[FakeGitLab, FakeGitLabServer]) -> None:
    fake, server = gl
    iid = fake.add_mr(REPO, title="Lock", author="bob", files=FILES)
    client = gitlab.Gitlab(server.url, private_token=TOKEN)
    project = client.projects.get(REPO)
    assert project.only_allow_merge_if_all_discussions_are_resolved is False
    project.only_allow_merge_if_all_discussions_are_resolved = True
    project.save()  # PUT /projects/:id, "All threads must be resolved"

    def mergeable() -> bool:
        return bool(project.mergerequests.get(iid).blocking_discussions_resolved)

    mr = project.mergerequests.get(iid)
    note = mr.notes.create({"body": "a summary: nothing to answer"})  # POST …/notes
    assert note.type is None and note.resolvable is False
    assert mergeable()
    thread = mr.discussions.create({"body": "a question"})  # POST …/discussions
    assert thread.attributes["notes"][0]["type"] == "DiscussionNote"
    assert thread.attributes["notes"][0]["resolvable"] is True
    assert not mergeable()
    thread.resolved = True
    thread.save()  # PUT …/discussions/:id?resolved=true
    assert mergeable()
    [lone] = [d for d in mr.discussions.list(get_all=True) if d.individual_note]
    lone.notes.create({"body": "a reply to the summary"})  # the note becomes a thread
    replied = mr.discussions.get(lone.id)
    assert replied.individual_note is False and len(replied.attributes["notes"]) == 2
    assert not mergeable()  # a conversation someone started: GitLab's rule, not ours

    async def ours() -> None:  # our adapter's note is the same kind as python-gitlab's
        host = connect(HostSettings(name="gl", type="gitlab", url=server.url,
                                    token=Secret(TOKEN)), Metrics())
        try:
            assert isinstance(host, PostsNotes)  # what the review's poster asks of a host
            posted = await host.note(MRKey("gl", REPO, iid), "our summary")
            snap = await host.fetch_mr(REPO, iid)
            [mine] = [t for t in snap.threads if t.root and t.root.id == posted.id]
            assert mine.individual and not mine.resolvable
        finally:
            await host.close()
    asyncio.run(ours())
    assert not mergeable()  # still only the reply's thread


# ---- GitHub: PyGithub ---------------------------------------------------------------------
@pytest.fixture
def gh() -> Iterator[tuple[FakeGitHub, FakeGitHubServer]]:
    fake = FakeGitHub(token=TOKEN)
    fake.add_repo(REPO)
    with FakeGitHubServer(fake) as server:
        yield fake, server


def pygithub(server: FakeGitHubServer, per_page: int = 30) -> Github:
    """PyGithub as a user configures it, without its pacing for github.com (0.25 s between
    requests, 1 s between writes): a wait that tests nothing against a loopback fake."""
    return Github(base_url=server.url, auth=Auth.Token(TOKEN), per_page=per_page,
                  seconds_between_requests=None, seconds_between_writes=None)


def test_pygithub_reviews_with_comments_and_pages_the_files(
        gh: tuple[FakeGitHub, FakeGitHubServer]) -> None:
    fake, server = gh
    number = fake.add_pr(REPO, title="Lock", author="bob", files=FILES)
    own = fake.add_pr(REPO, title="Mine", author="livereview", files=FILES)
    client = pygithub(server, per_page=50)
    repo = client.get_repo(REPO)
    pr = repo.get_pull(number)
    review = pr.create_review(body="two findings", event="REQUEST_CHANGES", comments=[
        {"path": "src/cache.py", "line": 4, "side": "RIGHT", "body": "added line"},
        {"path": "src/cache.py", "line": 7, "side": "LEFT", "body": "removed line"}])
    assert review.state == "CHANGES_REQUESTED"
    assert standing(fake, REPO, number, "livereview") == "CHANGES_REQUESTED"
    threads = {c.body: (c.line, c.side, c.pull_request_review_id)
               for c in pr.get_review_comments()}
    assert threads == {"added line": (4, "RIGHT", review.id),
                       "removed line": (7, "LEFT", review.id)}
    approval = pr.create_review(event="APPROVE")
    assert standing(fake, REPO, number, "livereview") == "APPROVED"
    approval.dismiss("withdrawn")
    assert standing(fake, REPO, number, "livereview") == "DISMISSED"
    with pytest.raises(GithubException) as refused:
        repo.get_pull(own).create_review(body="mine", event="APPROVE")
    assert refused.value.status == 422
    assert "Can not approve your own pull request" in str(refused.value.data)
    # `comments` must be a JSON array, not an array's text: GitHub answers 422
    with pytest.raises(GithubException) as not_an_array:
        pr._requester.requestJsonAndCheck("POST", f"{pr.url}/reviews", input={
            "event": "COMMENT", "body": "x", "comments": '[{"path": "src/cache.py"}]'})
    assert not_an_array.value.status == 422 and "not an array" in str(not_an_array.value.data)
    files = list(pr.get_files())
    assert len(files) == len(FILES)
    binary = next(f for f in files if f.filename == "logo.png")
    assert binary.patch is None and (binary.additions, binary.deletions) == (0, 0)
    assert [r.state for r in pr.get_reviews()] == ["CHANGES_REQUESTED", "DISMISSED"]


def test_pygithub_reads_and_marks_the_bots_notifications(
        gh: tuple[FakeGitHub, FakeGitHubServer]) -> None:
    """PyGithub's Notification objects (AuthenticatedUser.get_notifications, mark_as_read)
    read what the fake serves: reason, subject, repository, unread, the participating filter."""
    fake, server = gh
    fake.add_user("alice")
    number = fake.add_pr(REPO, title="Lock", author="bob", files=FILES)
    other = fake.add_pr(REPO, title="Docs", author="bob", files=FILES)
    fake.watch("livereview", REPO)
    fake.add_issue_comment(REPO, number, author="alice", body="@livereview is this safe?")
    fake.add_issue_comment(REPO, other, author="alice", body="typo fixed")  # watching only
    fake.request_review(REPO, other, reviewer="livereview")
    quiet = fake.add_pr(REPO, title="Bump", author="bob", files=FILES)
    fake.add_issue_comment(REPO, quiet, author="alice", body="looks fine")  # watching only
    client = pygithub(server)
    me = client.get_user()
    everything = {(n.reason, n.subject.title) for n in me.get_notifications()}
    assert everything == {("mention", "Lock"), ("review_requested", "Docs"),
                          ("subscribed", "Bump")}
    assert {n.reason for n in me.get_notifications(participating=True)} == {
        "mention", "review_requested"}
    fake.mark_thread_read("livereview", int(next(
        n.id for n in me.get_notifications() if n.reason == "subscribed")))
    mention = next(n for n in me.get_notifications(participating=True) if n.reason == "mention")
    assert mention.subject.type == "PullRequest" and mention.unread
    assert mention.repository.full_name == REPO
    assert mention.subject.url.endswith(f"/repos/{REPO}/pulls/{number}")
    assert mention.get_pull_request().number == number
    mention.mark_as_read()
    assert [n.reason for n in me.get_notifications()] == ["review_requested"]
    assert {n.reason for n in me.get_notifications(all=True)} == {
        "mention", "review_requested", "subscribed"}
    me.mark_notifications_as_read()
    assert list(me.get_notifications()) == []


# ---- Bitbucket: atlassian-python-api ------------------------------------------------------
def test_atlassian_cloud_verdicts_and_the_per_file_diff() -> None:
    fake = FakeBitbucketCloud(token=TOKEN)
    fake.add_user("alice", "Alice")
    number = fake.add_pr(REPO, title="Lock", author="alice", files=FILES)
    with FakeBitbucketCloudServer(fake) as server:
        cloud = Cloud(url=server.url, username="livereview", password=TOKEN, cloud=True)
        pr = cloud.repositories.get("acme", "widgets").pullrequests.get(number)
        pr.request_changes()
        assert fake.participant_state(REPO, number, "livereview") == "changes_requested"
        pr.unrequest_changes()
        pr.approve()
        assert fake.participant_state(REPO, number, "livereview") == "approved"
        pr.unapprove()
        assert fake.participant_state(REPO, number, "livereview") is None
        stat = {s.new.path: (s.lines_added, s.lines_removed) for s in pr.diffstat()}
        assert stat["src/cache.py"] == (3, 1) and len(stat) == len(FILES)

        async def ours() -> None:
            host = connect(HostSettings(name="bb", type="bitbucket-cloud", url=server.api_url,
                                        token=Secret(TOKEN), login="livereview"), Metrics())
            try:
                key = MRKey("bb", REPO, number)
                files = {f.change.new_path: f async for f in host.diff_files(key)}
                assert files["logo.png"].skipped == "binary"
                assert files["src/cache.py"].diff.startswith("@@ ")
                assert (files["src/cache.py"].change.additions,
                        files["src/cache.py"].change.deletions) == (3, 1)
            finally:
                await host.close()
        asyncio.run(ours())


def test_atlassian_data_center_status_and_changes() -> None:
    fake = FakeBitbucketDC(token=TOKEN)
    fake.add_user("alice", "Alice")
    fake.add_repo("ACME/widgets")
    number = fake.add_pr("ACME/widgets", title="Lock", author="alice", files=FILES)
    with FakeBitbucketDCServer(fake) as server:
        bitbucket = Bitbucket(url=server.url, token=TOKEN)
        bitbucket.change_reviewed_status("ACME", "widgets", number, "NEEDS_WORK", "livereview")
        assert fake.status_of("ACME/widgets", number, "livereview") == "NEEDS_WORK"
        bitbucket.change_reviewed_status("ACME", "widgets", number, "APPROVED", "livereview")
        assert fake.status_of("ACME/widgets", number, "livereview") == "APPROVED"
        changes = list(bitbucket.get_pull_requests_changes("ACME", "widgets", number))
        assert len(changes) == len(FILES)
        assert {c["path"]["toString"] for c in changes} == set(FILES)
