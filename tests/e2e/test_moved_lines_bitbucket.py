"""An inline thread whose line moved or went away in a force-push, on the fake Bitbucket
Cloud and the fake Data Center (docs/DESIGN.md §4, "Moved lines").

Bitbucket Cloud leaves an inline comment where it was written and marks it `outdated` once
its line reads otherwise (the fake's push, sandbox/bitbucket_cloud/state.py); the fake Data
Center keeps an anchor on the `toHash` it was written on. On both the answer goes in the
thread, and one comment follows the line: inline at its new line on the new head, or on the
pull request quoting the old code when the line is gone — once, across a failed post."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from livereview.hosts.bitbucket_server.payloads import incoming
from livereview.reply.moved import moved_for
from tests.e2e import bitbucket_cloud_sandbox as cloud
from tests.e2e import test_bitbucket_server_once as dc
from tests.e2e.conftest import retries_due

OLD, NEW = cloud.FILES["src/cache.py"]  # line 9 of NEW: "        return cache.get(key)"
ABOVE = "import os\nimport sys\nimport time\n"
GET = "\n\ndef get(key):\n    with lock:\n        return cache.get(key)\n"


@pytest.fixture
def bb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[cloud.BitbucketSandbox]:
    yield from cloud.sandbox(tmp_path, monkeypatch, access_token=False)


@pytest.fixture
def bbs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dc.BitbucketSandbox]:
    yield from dc._sandbox(tmp_path, monkeypatch, reactions=True)


# ---- Bitbucket Cloud ---------------------------------------------------------------------

def cloud_ask_after_rebase(bb: cloud.BitbucketSandbox, new: str) -> dict[str, Any]:
    question = bb.inline("is the read under the lock?")
    bb.bitbucket.push(cloud.REPO, bb.number, message="rebase", force=True,
                      files={"src/cache.py": (OLD, new)})
    bb.comment("@livereview is this fixed now?", parent=question["id"])
    return question


def cloud_followers(bb: cloud.BitbucketSandbox) -> list[dict[str, Any]]:
    return [c for c in bb.bitbucket.comments_by(bb.bot) if moved_for(c["content"]["raw"])]


def cloud_answers(bb: cloud.BitbucketSandbox, root: int) -> list[dict[str, Any]]:
    return [c for c in bb.thread(root)[1:] if "livereview:reply-to=" in c["content"]["raw"]]


def test_on_bitbucket_cloud_a_moved_line_gets_an_inline_comment_at_its_new_line(
        bb: cloud.BitbucketSandbox) -> None:
    question = cloud_ask_after_rebase(bb, ABOVE + NEW)
    [root] = [c for c in bb.thread(question["id"]) if c["id"] == question["id"]]
    assert root["inline"]["outdated"] is True and root["inline"]["to"] == 9
    assert bb.once() == 0
    [answer] = cloud_answers(bb, question["id"])
    assert "now at `src/cache.py:12` on the MR's head" in answer["content"]["raw"]
    [note] = cloud_followers(bb)
    # Read back as Bitbucket Cloud's API shows an inline comment: `to` 12, not outdated.
    assert note["inline"]["path"] == "src/cache.py" and note["inline"]["to"] == 12
    assert note["inline"]["outdated"] is False and "parent" not in note
    assert f"#comment-{question['id']}" in note["content"]["raw"]
    assert "        return cache.get(key)\n```" in note["content"]["raw"]


def test_on_bitbucket_cloud_a_removed_line_gets_a_pr_comment_quoting_it(
        bb: cloud.BitbucketSandbox) -> None:
    question = cloud_ask_after_rebase(bb, NEW.replace(GET, ""))
    assert bb.once() == 0
    [answer] = cloud_answers(bb, question["id"])
    assert "was removed from the MR since the thread started" in answer["content"]["raw"]
    [note] = cloud_followers(bb)
    assert "inline" not in note and "parent" not in note
    assert "return cache.get(key)" in note["content"]["raw"]


def test_on_bitbucket_cloud_a_lost_note_response_is_adopted_not_posted_again(
        bb: cloud.BitbucketSandbox) -> None:
    cloud.write_config(bb.config, bb.server.api_url, bb.llm.url, bb.db,
                       auth='login = "livereview"', retry_base_seconds=0.05)
    question = cloud_ask_after_rebase(bb, ABOVE + NEW)
    # Two lost responses: the ack's (a courtesy: the job goes on) and the note's (the job
    # ends its run not knowing whether the note is there).
    bb.bitbucket.inject_fault("POST", r"/comments$", status=0, after_handling=True, times=2)
    bb.once()
    assert len(cloud_followers(bb)) == 1  # it reached Bitbucket; the daemon does not know
    retries_due(bb.db)
    assert bb.once() == 0
    assert len(cloud_followers(bb)) == 1 and len(cloud_answers(bb, question["id"])) == 1


# ---- Bitbucket Data Center ---------------------------------------------------------------

def dc_ask_after_rebase(bbs: dc.BitbucketSandbox, new: str
                        ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The thread's root and the question asked in it after the push."""
    root = bbs.inline("is the read under the lock?")
    bbs.fake.push(dc.REPO, bbs.pr, message="rebase", force=True,
                  files={"src/cache.py": (OLD, new)})
    return root, bbs.comment("@livereview is this fixed now?", parent=root["id"])


def dc_followers(bbs: dc.BitbucketSandbox) -> list[dict[str, Any]]:
    return [c for c in bbs.fake.comments_by("livereview")
            if moved_for(incoming(str(c["text"])))]


def test_on_data_center_a_moved_line_gets_an_inline_comment_at_its_new_line(
        bbs: dc.BitbucketSandbox) -> None:
    root, question = dc_ask_after_rebase(bbs, ABOVE + NEW)
    head = bbs.fake.find_pr(bbs.fake._repo(dc.REPO), bbs.pr).head_sha
    assert bbs.once() == 0
    [answer] = bbs.replies_to(question["id"])
    assert "now at `src/cache.py:12` on the MR's head" in incoming(str(answer["text"]))
    [note] = dc_followers(bbs)
    # Read back as Data Center's REST API shows a comment's anchor: line 12 of the new head.
    anchor = note["anchor"]
    assert (anchor["path"], anchor["line"], anchor["lineType"], anchor["fileType"]) == \
        ("src/cache.py", 12, "ADDED", "TO")
    assert anchor["toHash"] == head
    assert f"commentId={root['id']}" in incoming(str(note["text"]))


def test_on_data_center_a_removed_line_gets_a_pr_comment_quoting_it(
        bbs: dc.BitbucketSandbox) -> None:
    _, question = dc_ask_after_rebase(bbs, NEW.replace(GET, ""))
    assert bbs.once() == 0
    [answer] = bbs.replies_to(question["id"])
    assert "was removed from the MR since the thread started" in incoming(str(answer["text"]))
    [note] = dc_followers(bbs)
    assert "anchor" not in note
    assert "return cache.get(key)" in incoming(str(note["text"]))


def test_on_data_center_a_lost_note_response_is_adopted_not_posted_again(
        bbs: dc.BitbucketSandbox) -> None:
    dc.write_config(bbs.config, bbs.server.url, bbs.llm.url, bbs.db, retry_base_seconds=0.05)
    _, question = dc_ask_after_rebase(bbs, ABOVE + NEW)
    bbs.fake.inject_fault("POST", r"/pull-requests/\d+/comments$", status=0,
                          after_handling=True)
    bbs.once()
    assert len(dc_followers(bbs)) == 1
    retries_due(bbs.db)
    assert bbs.once() == 0
    assert len(dc_followers(bbs)) == 1 and len(bbs.replies_to(question["id"])) == 1
