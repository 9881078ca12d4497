"""The local Host over a real repository and its own store: the protocol's methods as the
poller, the reply worker and the review runner call them."""

from __future__ import annotations

from pathlib import Path

import pytest

from livereview.core.local_model import AuthorKind
from livereview.core.model import (
    Anchor,
    FileStatus,
    InlineComment,
    MRKey,
    Side,
    Verdict,
)
from livereview.hosts.base import NotFound, Unsupported
from livereview.hosts.local.adapter import LocalHost
from livereview.hosts.local.git import tracked
from livereview.store.review_export import RepoBooks
from livereview.tools import local_review as ops
from tests.local_repo import review_repo


@pytest.fixture
async def opened(tmp_path: Path) -> tuple[ops.Workspace, LocalHost, MRKey]:
    repo = review_repo(tmp_path / "r")
    ws = ops.open_workspace(repo.path)
    review = await ops.request(ws, "HEAD~1", "T")
    host = LocalHost("laptop", RepoBooks(tracked), root=tmp_path)
    return ws, host, MRKey("laptop", "r", review.id)


async def test_the_snapshot_is_the_review_as_an_mr(
        opened: tuple[ops.Workspace, LocalHost, MRKey]) -> None:
    ws, host, key = opened
    try:
        await ops.reply(ws, key.iid, 1, "a person")
        await ops.reply(ws, key.iid, 1, "an agent", AuthorKind.AGENT)
        snap = await host.fetch_mr("r", key.iid)
        assert snap.mr.key == key and snap.mr.state == "opened"
        assert [c.title for c in snap.commits or ()] == ["feature"]
        thread = snap.threads[0]
        assert thread.anchor is not None and thread.anchor.new_path == "db/q.sql"
        assert thread.anchor.head_sha == snap.mr.head_sha
        authors = [(m.author.username, m.author.bot) for m in thread.messages]
        assert authors == [("Alice", False), ("Alice", False), ("Alice", True)]
        assert (await host.fetch_thread(key, thread.id)) == thread
        changed = await host.list_changed_mrs(("r", "missing"), None)
        assert [(c.repo, c.iid) for c in changed] == [("r", key.iid)]
    finally:
        await host.close()
        ws.close()


async def test_diffstat_and_files_one_at_a_time(
        opened: tuple[ops.Workspace, LocalHost, MRKey]) -> None:
    ws, host, key = opened
    try:
        stat = {c.new_path: c for c in await host.diffstat(key)}
        assert stat["new_name.txt"].status is FileStatus.RENAMED
        assert stat["new_name.txt"].old_path == "old_name.txt"
        assert stat["gone.txt"].status is FileStatus.REMOVED
        files = [f async for f in host.diff_files(key, max_file_bytes=240)]
        by_path = {f.change.new_path: f for f in files}
        assert by_path["logo.png"].skipped == "binary"
        assert by_path["new_name.txt"].diff.count("diff --git") == 1  # the rename, alone
        assert "+six" in by_path["new_name.txt"].diff
        assert by_path["web/greet.ts"].skipped.startswith("too large (")
        assert "+SELECT id" in by_path["db/q.sql"].diff
        assert (await host.file_content("r", snapshot_head(ws), "keep.py")) == "x = 2\n"
        assert "geo.py" in await host.list_files("r", snapshot_head(ws), "")
        with pytest.raises(NotFound):
            await host.file_content("r", snapshot_head(ws), "nope.txt")
    finally:
        await host.close()
        ws.close()


def snapshot_head(ws: ops.Workspace) -> str:
    return ws.git.run("rev-parse", "HEAD").decode().strip()


async def test_the_bot_writes_replies_comments_reviews_and_verdicts(
        opened: tuple[ops.Workspace, LocalHost, MRKey]) -> None:
    ws, host, key = opened
    try:
        snap = await host.fetch_mr("r", key.iid)
        refs = snap.mr.diff_refs()
        reply = await host.reply(key, "1", "answer")
        await host.react(key, reply.id, "eyes")
        inline = await host.comment(key, "on a removed line", Anchor(
            "gone.txt", "gone.txt", None, 1, refs.base_sha, refs.start_sha, refs.head_sha))
        posted = await host.post_review(key, refs, [
            InlineComment("geo.py", 3, Side.NEW, "use math.pi")], "summary",
            Verdict.CHANGES_REQUESTED)
        await host.resolve(key, "2")
        review = await ws.book.review(key.iid)
        assert review.status.value == "changes_requested"
        finding = review.thread(int(posted.comments[0].thread_id))
        assert finding is not None and finding.kind.value == "finding"
        assert finding.code == "    return 3.14 * r * r  # TODO: math.pi"
        removed = review.thread(int(inline.thread_id))
        assert removed is not None and (removed.line, removed.old_line) == (None, 1)
        assert [m.body for m in await host.reviews_posted(key)] == ["summary"]
        assert review.thread(1).messages[-1].reactions == ("eyes",)  # type: ignore[union-attr]
        assert review.thread(2).resolved  # type: ignore[union-attr]
        await host.approve(key)
        assert (await ws.book.review(key.iid)).status.value == "approved"
        await host.unapprove(key)
        assert (await ws.book.review(key.iid)).status.value == "pending"
        with pytest.raises(NotFound):
            await host.reply(key, "999", "nowhere")
        with pytest.raises(NotFound):
            await host.fetch_mr("r", 42)
        with pytest.raises(Unsupported, match="no mention inbox"):
            await host.mention_inbox(("r",))
    finally:
        await host.close()
        ws.close()


async def test_without_a_store_the_host_says_so(tmp_path: Path) -> None:
    review_repo(tmp_path / "r")
    host = LocalHost("laptop", None, root=tmp_path)
    assert await host.repo_exists("r") and not await host.repo_exists("elsewhere")
    with pytest.raises(Unsupported, match="store"):
        await host.fetch_mr("r", 1)


async def test_the_daemon_s_listing_sees_a_merged_branch(tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit("on topic", **{"t_DOT_txt": "t\n"})
    ws = ops.open_workspace(repo.path)
    host = LocalHost("laptop", RepoBooks(tracked), root=tmp_path)
    try:
        on_main = await ops.request(ws, "main~1..main", "on main")
        topic = await ops.request(ws, "topic", "topic")
        states = {c.iid: c.state for c in await host.list_changed_mrs(("r",), None)}
        assert states == {on_main.id: "opened", topic.id: "opened"}
        repo.git("checkout", "-q", "main")
        repo.git("merge", "-q", "--no-ff", "-m", "merge topic", "topic")
        states = {c.iid: c.state for c in await host.list_changed_mrs(("r",), None)}
        assert states == {on_main.id: "opened", topic.id: "merged"}
        assert (await host.fetch_mr("r", topic.id)).mr.state == "merged"
    finally:
        await host.close()
        ws.close()
