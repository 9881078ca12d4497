"""The reads the web face needs: the change mark moves with every kind of write (so an open
page hears of it) and never with a read; one file's diff; the reviews newest first."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from livereview.core.local_model import AuthorKind, ReviewStatus
from livereview.tools import local_browse
from livereview.tools import local_review as ops
from tests.local_repo import review_repo


async def test_every_kind_of_write_moves_the_mark_and_a_read_does_not(tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    ws = ops.open_workspace(repo.path)
    try:
        review = await ops.request(ws, "HEAD~1", "T")
        thread = review.threads[0]
        seen = [await local_browse.change_mark(ws, review.id)]
        writes: list[Callable[[], Awaitable[object]]] = [
            lambda: ops.reply(ws, review.id, thread.number, "a person's reply"),
            lambda: ws.book.react(review.id, thread.messages[0].id, "eyes"),
            lambda: ops.resolve(ws, review.id, thread.number),
            lambda: ops.resolve(ws, review.id, thread.number, resolved=False),
            lambda: ops.set_status(ws, review.id, ReviewStatus.APPROVED),
            lambda: ops.add_comment(ws, review.id, "an agent's", kind=AuthorKind.AGENT),
        ]
        for write in writes:
            await write()
            seen.append(await local_browse.change_mark(ws, review.id))
        assert len(set(seen)) == len(seen)
        await ops.review_of(ws, review.id)
        await local_browse.file_diff(ws, await ops.review_of(ws, review.id), "geo.py")
        await ws.book.take_feedback(review.id, ops.PEOPLE)  # `wait` hands feedback out
        assert await local_browse.change_mark(ws, review.id) == seen[-1]
    finally:
        ws.close()


async def test_a_file_s_diff_is_git_s_and_a_file_outside_the_review_is_refused(
        tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    ws = ops.open_workspace(repo.path)
    try:
        review = await ops.request(ws, "HEAD~1", "T")
        diff = await local_browse.file_diff(ws, review, "new_name.txt")
        assert diff == repo.git("diff", "-M", "HEAD~1", "HEAD", "--", "old_name.txt",
                                "new_name.txt")
        assert await local_browse.file_diff(ws, review, "logo.png") == ""  # binary
        with pytest.raises(ops.LocalReviewError, match=r"does not change README\.md"):
            await local_browse.file_diff(ws, review, "README.md")
        with pytest.raises(ops.LocalReviewError, match="no local review 99"):
            await local_browse.change_mark(ws, 99)
        second = await ops.request(ws, "HEAD~1..HEAD", "the same range, again")
        assert [r.id for r in await local_browse.reviews(ws)] == [second.id, review.id]
    finally:
        ws.close()
