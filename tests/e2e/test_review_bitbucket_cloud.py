"""A review on the fake Bitbucket Cloud: no reactions (the ask is acked by a reply), a
comment per finding (`inline {path, to | from}`), the summary, and the verdict."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from livereview.review.render import marked
from tests.e2e.bitbucket_cloud_sandbox import BitbucketSandbox, sandbox
from tests.e2e.test_review_gitlab import FINDINGS


@pytest.fixture
def bb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BitbucketSandbox]:
    yield from sandbox(tmp_path, monkeypatch, access_token=False)


def test_a_review_on_bitbucket_cloud(bb: BitbucketSandbox) -> None:
    bb.llm.llm.review_findings = FINDINGS
    ask = bb.comment("@livereview review")
    assert bb.once() == 0
    assert len(bb.acks_of(int(ask["id"]))) == 1
    mine = bb.bitbucket.comments_by(bb.bot)
    parts = Counter((marked(c["content"]["raw"]) or ("", ""))[1] for c in mine)
    assert parts == Counter({"finding=1": 1, "finding=2": 1, "summary": 1, "notify": 1, "": 1})
    inline = {(marked(c["content"]["raw"]) or ("", ""))[1]: c.get("inline") or {}
              for c in mine}
    assert inline["finding=1"]["path"] == "src/cache.py" and inline["finding=1"]["to"] == 8
    assert inline["finding=2"]["from"] == 7 and inline["finding=2"].get("to") is None
    assert bb.once() == 0
    assert len(bb.bitbucket.comments_by(bb.bot)) == len(mine)
