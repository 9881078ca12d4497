"""The fakes ask for reviews as their hosts do: the reviewer lists, the notes, to-dos and
notifications that go with a request, and what takes a reviewer off again."""

from __future__ import annotations

from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.gitlab.state import FakeGitLab

FILES = {"a.py": ("x = 1\n", "x = 2\n")}


def test_gitlab_reviewers_come_with_the_system_note_and_a_review_requested_todo() -> None:
    fake = FakeGitLab(token="t")
    fake.add_project("g/p")
    iid = fake.add_mr("g/p", title="T", description="", author="bob", files=FILES)
    fake.set_reviewers("g/p", iid, ["livereview", "carol", "dave"], by="alice")
    fake.set_reviewers("g/p", iid, ["livereview", "erin"], by="alice")
    mr = fake.find_mr("g/p", iid)
    assert [r["username"] for r in fake.mr_json(mr, full=True)["reviewers"]] == [
        "livereview", "erin"]
    system = [n["body"] for d in fake.discussions("g/p", iid) for n in d["notes"] if n["system"]]
    # SystemNotes::IssuablesService#change_issuable_reviewers, Array#to_sentence
    assert system[-2:] == ["requested review from @livereview, @carol and @dave",
                           "requested review from @erin and removed review request for "
                           "@carol and @dave"]
    [todo] = fake.todos("livereview")
    json = fake.todo_json(todo)
    assert (json["action_name"], json["author"]["username"], json["body"]) == (
        "review_requested", "alice", "T")
    fake.mark_todo_done("livereview")
    fake.rerequest_review("g/p", iid, "livereview", by="alice")
    assert [t.action for t in fake.todos("livereview") if t.state == "pending"] == [
        "review_requested"]


def test_github_a_submitted_review_takes_the_reviewer_off_requested_reviewers() -> None:
    fake = FakeGitHub(token="t")
    fake.add_repo("o/r")
    number = fake.add_pr("o/r", title="T", body="", author="bob", files=FILES)
    fake.request_review("o/r", number, reviewer="carol")
    fake.request_review("o/r", number, reviewer="dave")
    pr = fake.find_issue("o/r", number, pull=True)
    assert [u["login"] for u in fake.pull_json(pr, full=True)["requested_reviewers"]] == [
        "carol", "dave"]
    fake.add_review("o/r", number, author="carol", body="Looks fine", state="APPROVED")
    fake.remove_review_request("o/r", number, reviewer="dave")
    assert fake.pull_json(pr, full=True)["requested_reviewers"] == []


def test_bitbucket_cloud_a_reviewer_taken_off_who_took_part_stays_a_participant() -> None:
    fake = FakeBitbucketCloud(token="t")
    for name in ("alice", "bob", "carol"):
        fake.add_user(name)
    fake.add_repo("w/r")
    number = fake.add_pr("w/r", title="T", description="", author="bob", files=FILES)
    fake.set_reviewers("w/r", number, ["alice", "carol"])
    fake.add_comment("w/r", number, author="alice", body="a question")
    fake.set_reviewers("w/r", number, [])
    pr = fake.find_pr(fake.repos["w/r"], number)
    json = fake.pr_json(pr)
    assert json["reviewers"] == []
    assert [(p["user"]["nickname"], p["role"]) for p in json["participants"]] == [
        ("alice", "PARTICIPANT")]


def test_bitbucket_data_center_reviewer_changes_are_updated_activities_by_who_made_them(
        ) -> None:
    fake = FakeBitbucketDC(token="t")
    fake.add_user("alice")
    fake.add_user("carol")
    fake.add_repo("P/r")
    pr_id = fake.add_pr("P/r", title="T", description="", author="bob", files=FILES)
    pr = fake.find_pr(fake.find_repo("P", "r"), pr_id)
    before = pr.updated
    fake.add_reviewer("P/r", pr_id, "carol", by="alice")
    assert [r["user"]["name"] for r in fake.pr_json(pr)["reviewers"]] == ["carol"]
    assert pr.updated >= before
    fake.remove_reviewer("P/r", pr_id, "carol", by="alice")
    assert fake.pr_json(pr)["reviewers"] == []
    assert [(a.action, a.user.name) for a in pr.activities[-2:]] == [
        ("UPDATED", "alice"), ("UPDATED", "alice")]
