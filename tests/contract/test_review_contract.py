"""The review operations of the Host protocol, the same on every host: inline comments
at the right anchors (an added, a removed and a context line), a posted review (findings as
threads + the summary), verdicts as the host records them, a diffstat that matches the diff,
and the diff one file at a time for an MR of 3 000 files."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from livereview.core.model import (
    Anchor,
    DiffRefs,
    InlineComment,
    MRKey,
    Side,
    Snapshot,
    Verdict,
)
from livereview.hosts.diffs import count_lines
from tests.contract.drivers import PATH, Driver
from tests.contract.review_side import review_side

# drivers.OLD → NEW: new line 4 is added ("lock = threading.Lock()"), old line 7 removed
# ("    return cache.get(key)"), old 6 / new 7 is context ("def get(key):").
ADDED, REMOVED, CONTEXT_OLD, CONTEXT_NEW = 4, 7, 6, 7


async def _mr(driver: Driver) -> tuple[MRKey, Snapshot]:
    iid = driver.open_mr("Guard the cache with a lock")
    return MRKey(driver.name, driver.repo, iid), await driver.host.fetch_mr(driver.repo, iid)


def _anchor(snap: Snapshot, new_line: int | None, old_line: int | None) -> Anchor:
    refs = snap.mr.diff_refs()
    return Anchor(PATH, PATH, new_line, old_line, refs.base_sha, refs.start_sha, refs.head_sha)


def _refs(snap: Snapshot) -> DiffRefs:
    return snap.mr.diff_refs()


async def test_inline_comments_land_on_an_added_and_a_removed_line(driver: Driver) -> None:
    key, snap = await _mr(driver)
    added = await driver.host.comment(key, "on the added line", _anchor(snap, ADDED, None))
    removed = await driver.host.comment(key, "on the removed line",
                                        _anchor(snap, None, REMOVED))
    after = await driver.host.fetch_mr(driver.repo, key.iid)
    by_body = {t.root.body: t for t in after.threads if t.root is not None}
    for posted, new_line, old_line in ((added, ADDED, None), (removed, None, REMOVED)):
        thread = by_body[posted.body]
        assert thread.id == posted.thread_id and thread.root is not None
        assert thread.root.id == posted.id
        assert thread.anchor is not None, posted.body
        assert thread.anchor.new_path == PATH
        assert (thread.anchor.new_line, thread.anchor.old_line) == (new_line, old_line) or (
            old_line is None and thread.anchor.new_line == new_line)


async def test_a_review_posts_its_findings_as_threads_and_a_summary(driver: Driver) -> None:
    side = review_side(driver)
    key, snap = await _mr(driver)
    side.served()
    findings = [
        InlineComment(PATH, ADDED, Side.NEW, "finding: a lock per module"),
        InlineComment(PATH, REMOVED, Side.OLD, "finding: the unguarded read is gone"),
        InlineComment(PATH, CONTEXT_NEW, Side.NEW, "finding: context", old_line=CONTEXT_OLD),
    ]
    review = await driver.host.post_review(key, _refs(snap), findings, "summary: 3 findings",
                                           Verdict.COMMENTED)
    assert review.verdict_applied is Verdict.COMMENTED
    writes = [r for r in side.served() if r[0] != "GET"]
    if driver.host.capabilities.review_batch:  # findings, summary and verdict: one request
        assert len(writes) == 1, writes
    else:
        assert len(writes) == len(findings) + 1, writes  # a comment each, the summary
    assert [c.body for c in review.comments] == [f.body for f in findings]
    assert review.summary is not None and "summary: 3 findings" in review.summary.body
    after = await driver.host.fetch_mr(driver.repo, key.iid)
    messages = after.messages()
    for comment, finding in zip(review.comments, findings, strict=True):
        assert messages[comment.id].body == finding.body
        thread = after.thread(messages[comment.id].thread_id)
        assert thread is not None and thread.anchor is not None, finding.body
        assert thread.anchor.new_path == PATH
        assert thread.anchor.line == finding.line
    assert review.summary.id in messages
    own = await driver.host.reviews_posted(key)
    assert any("summary: 3 findings" in m.body for m in own)
    assert not any(m.body.startswith("finding:") for m in own)


@pytest.mark.parametrize("verdict", [Verdict.APPROVED, Verdict.CHANGES_REQUESTED])
async def test_a_reviews_verdict_is_the_hosts_state(driver: Driver, verdict: Verdict) -> None:
    side = review_side(driver)
    key, snap = await _mr(driver)
    review = await driver.host.post_review(key, _refs(snap), [], f"summary: {verdict}", verdict)
    assert review.verdict_applied is verdict
    expected = ("approved" if verdict is Verdict.APPROVED
                else "changes_requested" if side.changes_state else "none")
    assert side.verdict(key.iid) == expected


async def test_approve_unapprove_and_request_changes(driver: Driver) -> None:
    side = review_side(driver)
    key, _ = await _mr(driver)
    assert side.verdict(key.iid) == "none"
    await driver.host.approve(key)
    await driver.host.approve(key)  # twice is still approved, not an error
    assert side.verdict(key.iid) == "approved"
    await driver.host.unapprove(key)
    await driver.host.unapprove(key)  # already so
    assert side.verdict(key.iid) == "none"
    await driver.host.approve(key)
    said = await driver.host.request_changes(key, "please add a test")
    assert said is not None and "please add a test" in said.body
    assert side.verdict(key.iid) == ("changes_requested" if side.changes_state else "none")
    assert await driver.host.request_changes(key) is None


async def test_the_diffstat_counts_what_the_diff_shows(driver: Driver) -> None:
    key, _ = await _mr(driver)
    stat = await driver.host.diffstat(key)
    assert [(f.new_path, f.status.value) for f in stat] == [(PATH, "modified")]
    assert (stat[0].additions, stat[0].deletions) == count_lines(await driver.host.diff(key))
    assert (stat[0].additions, stat[0].deletions) == (3, 1)
    files = [f async for f in driver.host.diff_files(key)]
    assert [f.change for f in files] == stat
    assert files[0].diff and not files[0].skipped
    assert count_lines(files[0].diff) == (3, 1)


async def test_an_mr_of_3000_files_is_read_one_file_at_a_time(driver: Driver) -> None:
    side = review_side(driver)
    iid = side.open_files(3000)
    key = MRKey(driver.name, driver.repo, iid)
    side.served()
    files = driver.host.diff_files(key)
    first = await anext(files)
    assert first.change.new_path == "f0000.txt" and "+file 0" in first.diff
    early = side.served()
    seen = 1 + sum([1 async for _ in files])
    later = side.served()
    assert seen == 3000
    assert len(early) <= 4 and later  # the first file came before the rest was asked for
    assert len(early + later) >= 10  # pages of files, never one whole diff
    asked = [f"{path}?{urlencode(query)}" for _, path, query in early + later]
    assert not [url for url in asked if re.search(side.whole_diff, url)]
    stat = await driver.host.diffstat(key)
    assert len(stat) == 3000 and all(f.additions == 3 for f in stat)


async def test_large_and_binary_files_are_listed_as_skipped(driver: Driver) -> None:
    side = review_side(driver)
    big = "".join(f"line {n}\n" for n in range(400))
    iid = side.open_with({"a.txt": ("", "one\n"), "big.txt": ("", big),
                          "logo.png": ("", "\0PNG\0\1\2")})
    key = MRKey(driver.name, driver.repo, iid)
    files = {f.change.new_path: f async for f in driver.host.diff_files(key, 1000)}
    assert (files["a.txt"].diff, files["a.txt"].skipped) == ("@@ -0,0 +1 @@\n+one\n", "")
    assert files["big.txt"].skipped.startswith("too large") and files["big.txt"].diff == ""
    assert files["logo.png"].skipped == "binary" and files["logo.png"].change.binary
    assert files["logo.png"].diff == "" and files["logo.png"].change.status.value == "added"
    if side.hide_over(2000):  # a file past the host's own limits comes without its diff
        shown = {f.change.new_path: f async for f in driver.host.diff_files(key)}
        assert shown["big.txt"].skipped and not shown["big.txt"].diff
        assert shown["big.txt"].change.additions in (0, 400)


async def test_a_verdict_on_the_bots_own_mr(driver: Driver) -> None:
    """GitHub refuses (422) to let an account approve its own PR: the review becomes a
    COMMENT with the verdict in its body. Hosts that allow it apply the verdict."""
    side = review_side(driver)
    iid = side.open_own()
    key = MRKey(driver.name, driver.repo, iid)
    snap = await driver.host.fetch_mr(driver.repo, iid)
    finding = InlineComment("f0000.txt", 3, Side.NEW, "finding: on my own MR")
    review = await driver.host.post_review(key, _refs(snap), [finding], "summary: own",
                                           Verdict.CHANGES_REQUESTED)
    assert [c.body for c in review.comments] == ["finding: on my own MR"]
    assert review.summary is not None and "summary: own" in review.summary.body
    if driver.host.type == "github":
        assert review.verdict_applied is Verdict.COMMENTED
        assert "changes requested" in review.summary.body.lower()
        assert side.verdict(iid) == "none"
    else:
        assert review.verdict_applied in (Verdict.CHANGES_REQUESTED, Verdict.COMMENTED)
