"""Every host: the MR's reviewers and an edited comment read back through the adapter as
the host shows them (what review requests and edited questions are diffed from)."""

from __future__ import annotations

from livereview.core.review_requests import reviewer_requests
from tests.contract.drivers import Driver


async def test_the_bot_added_removed_and_added_again_as_reviewer_reads_back_each_time(
        driver: Driver) -> None:
    iid = driver.open_mr("Guard the cache with a lock")
    before = await driver.host.fetch_mr(driver.repo, iid)
    assert before.mr.reviewers == ()
    driver.clock.advance(60)
    driver.set_reviewers(iid, [driver.bot, "alice"])
    asked = await driver.host.fetch_mr(driver.repo, iid)
    assert {r.username.lower() for r in asked.mr.reviewers} == {driver.bot, "alice"}
    assert asked.mr.updated_at > before.mr.updated_at
    first = next(r for r in reviewer_requests(before, asked)
                 if r.reviewer.username.lower() == driver.bot)
    driver.clock.advance(60)
    driver.set_reviewers(iid, ["alice"])
    removed = await driver.host.fetch_mr(driver.repo, iid)
    assert [r.username.lower() for r in removed.mr.reviewers] == ["alice"]
    assert reviewer_requests(asked, removed) == []
    driver.clock.advance(60)
    driver.set_reviewers(iid, ["alice", driver.bot])
    again = await driver.host.fetch_mr(driver.repo, iid)
    [request] = reviewer_requests(removed, again)
    assert request.reviewer not in removed.mr.reviewers
    assert request.generation != first.generation


async def test_an_edited_comment_reads_back_with_its_new_text(driver: Driver) -> None:
    iid = driver.open_mr("Guard the cache with a lock")
    driver.general_comment(iid, "@livereview is this lock needed?")
    before = await driver.host.fetch_mr(driver.repo, iid)
    [question] = [m for t in before.threads for m in t.messages
                  if m.body == "@livereview is this lock needed?"]
    driver.clock.advance(60)
    driver.edit(iid, question.id, "@livereview is this lock needed for writes too?")
    after = await driver.host.fetch_mr(driver.repo, iid)
    edited = after.messages()[question.id]
    assert edited.body == "@livereview is this lock needed for writes too?"
    assert edited.updated_at > question.updated_at
    assert edited.created_at == question.created_at
